import type { ManualClock } from 'herdless';

/**
 * Settles `promise` while advancing the virtual clock in 1 ms steps (at most `maxMs`): the outcome
 * (`value` or `error`) and the virtual time it came at. Throws when it has not settled by then.
 */
export async function settle<T>(clock: ManualClock, promise: Promise<T>, maxMs = 10_000): Promise<{ value?: T; error?: unknown; at: number }> {
  let done: { value?: T; error?: unknown; at: number } | undefined;
  promise.then(
    (value) => (done = { value, at: clock.now() }),
    (error: unknown) => (done = { error, at: clock.now() }),
  );
  for (let i = 0; i < maxMs && done === undefined; i++) await clock.advance(1);
  await clock.advance(0);
  if (done === undefined) throw new Error('did not settle');
  return done;
}
