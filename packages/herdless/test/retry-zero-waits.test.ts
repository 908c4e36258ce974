// A 0 ms wait starts the next attempt without a timer, in the same chain of microtasks; every 16th
// attempt after one first yields a turn of the event loop, so that failures which never touch I/O
// cannot starve timers, I/O callbacks and a timer-driven abort (a user's report: 2,000,000 attempts
// held the loop for 12 s and `AbortSignal.timeout(100)` never fired). The turn is a macrotask
// (setImmediate here): these tests queue their own setImmediate before the call and see exactly when
// the call lets it run.
import { describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, createRetry, isRetryError, retry } from 'herdless';

const transient = (): Error => Object.assign(new Error('reset'), { code: 'ECONNRESET' });
const zero = constantBackoff({ delayMs: 0 });

/** An operation that always fails at once (no I/O) and notes, per attempt, whether `flag.ran` was set yet. */
function failsAtOnce(flag: { ran: boolean }) {
  const seen: boolean[] = [];
  const op = () => {
    seen.push(flag.ran);
    throw transient();
  };
  return { op, seen };
}

describe('0 ms waits and the event loop', () => {
  it('attempts 1–15 run back to back with no macrotask; attempt 16 starts after one (the plain path)', async () => {
    const flag = { ran: false };
    setImmediate(() => (flag.ran = true));
    const { op, seen } = failsAtOnce(flag);
    const error = await retry(op, { maxAttempts: 40, backoff: zero }).catch((e: unknown) => e);
    expect(isRetryError(error) && error.reason).toBe('exhausted');
    expect(seen).toHaveLength(40);
    expect(seen.indexOf(true)).toBe(15); // the 16th attempt is the first to see the macrotask
    expect(seen.slice(0, 15).every((ran) => !ran)).toBe(true);
  });

  it('three attempts with zero waits never leave the microtask chain (the common case is unchanged)', async () => {
    const flag = { ran: false };
    setImmediate(() => (flag.ran = true));
    const { op, seen } = failsAtOnce(flag);
    await retry(op, { maxAttempts: 3, backoff: zero }).catch(() => undefined);
    expect(seen).toEqual([false, false, false]);
    expect(flag.ran).toBe(false); // nothing has yielded yet: the call ended inside the same turn
  });

  it('an abort queued as a macrotask ends a run of zero waits at the next yield: 15 attempts, the signal’s reason (the guarded path)', async () => {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setImmediate(() => controller.abort(reason));
    let calls = 0;
    const outcome = await retry(
      () => {
        calls++;
        throw transient();
      },
      { maxAttempts: 2_000_000, backoff: zero, signal: controller.signal },
    ).catch((e: unknown) => e);
    expect(outcome).toBe(reason);
    expect(calls).toBe(15);
  });

  it('a createRetry with a deadline on a ManualClock yields too, and needs no advance for it', async () => {
    const clock = new ManualClock();
    const flag = { ran: false };
    setImmediate(() => (flag.ran = true));
    const { op, seen } = failsAtOnce(flag);
    const call = createRetry({ maxAttempts: 33, backoff: zero, deadlineMs: 1_000, clock });
    const error = await call(op).catch((e: unknown) => e);
    expect(isRetryError(error) && error.reason).toBe('exhausted');
    expect(seen.indexOf(true)).toBe(15);
    expect(clock.now()).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('a timer queued before a run of zero waits fires during it, at one of the yields (the operation waits for it)', async () => {
    let fired = false;
    setTimeout(() => (fired = true), 0);
    let calls = 0;
    // Fails until the timer has fired. Without the yields the whole run would pass in one turn of
    // the event loop, the timer could never fire, and the call would end exhausted.
    const value = await retry(
      () => {
        calls++;
        if (!fired) throw transient();
        return 'done';
      },
      { maxAttempts: 10_000_000, backoff: zero },
    );
    expect(value).toBe('done');
    expect(calls % 16).toBe(0); // a timer can only run at a yield, which comes before attempts 16, 32, …
  });
});
