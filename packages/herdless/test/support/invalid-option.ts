import { isInvalidOptionError, type InvalidOptionError } from 'herdless';

/**
 * Runs `fn` and returns the InvalidOptionError it throws; any other outcome (no throw, another error)
 * fails the test. For the `{input, error}` tables of option validation.
 */
export function invalidOption(fn: () => unknown): InvalidOptionError {
  try {
    fn();
  } catch (error) {
    if (isInvalidOptionError(error)) return error as InvalidOptionError;
    throw error;
  }
  throw new Error('expected an InvalidOptionError, but nothing was thrown');
}
