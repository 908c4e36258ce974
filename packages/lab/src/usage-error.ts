/**
 * A mistake in what the user asked for (a flag, a seed list, a config file): the CLI prints its
 * message as one line and exits with status 2, with no stack trace.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}
