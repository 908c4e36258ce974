// retry()'s timers at their edges, in virtual time: unref on the plain path (no deadline, no attempt
// timeout: only the waits are timers), a late timer that lands exactly on the deadline, an attempt
// timeout equal to what is left of the deadline, and a clock that steps backwards.
import { describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, isAttemptTimeoutError, retry, type RetryError, type Scheduler } from 'herdless';

const unavailable = (): Error => Object.assign(new Error('unavailable'), { status: 503 });

/**
 * A scheduler over a ManualClock: handles are objects with `unref()` (counted), every timer fires
 * `lateMs` after it was due (a busy event loop), and the delays asked for are logged.
 */
function lateClock(lateMs = 0) {
  const clock = new ManualClock(0);
  const s = {
    clock,
    unrefs: 0,
    delays: [] as number[],
    now: () => clock.now(),
    setTimeout: (fn: () => void, ms: number) => {
      s.delays.push(ms);
      return { id: clock.setTimeout(fn, ms + lateMs), unref: () => void s.unrefs++ };
    },
    clearTimeout: (h: unknown) => clock.clearTimeout((h as { id: number }).id),
  };
  return s satisfies Scheduler;
}

async function outcome<T>(clock: ManualClock, call: Promise<T>): Promise<unknown> {
  const settled = call.then(
    () => 'resolved',
    (error: unknown) => error,
  );
  await clock.runAll();
  return settled;
}

describe('unref', () => {
  it('on the plain path (no deadline, no attempt timeout) unref: true unrefs every wait; the default none', async () => {
    for (const unref of [false, true]) {
      const s = lateClock();
      const error = await outcome(s.clock, retry(() => Promise.reject(unavailable()), { clock: s, unref, maxAttempts: 4, backoff: constantBackoff({ delayMs: 5 }) }));
      expect((error as RetryError).reason).toBe('exhausted');
      expect(s.delays).toEqual([5, 5, 5]);
      expect(s.unrefs).toBe(unref ? 3 : 0);
    }
  });

  it('a handle that is a number (a browser timer id) is left as it is', async () => {
    const clock = new ManualClock(0);
    const error = await outcome(clock, retry(() => Promise.reject(unavailable()), { clock, unref: true, maxAttempts: 2, backoff: constantBackoff({ delayMs: 5 }), deadlineMs: 1000 }));
    expect((error as RetryError).reason).toBe('exhausted');
  });
});

describe('the deadline at its edge', () => {
  it('a wait that ends late, exactly at the deadline, starts no attempt: the call gives up (deadline)', async () => {
    // deadlineMs 100; the 10 ms wait after attempt 1 fires 90 ms late, at t = 100: nothing is left.
    const s = lateClock(90);
    let calls = 0;
    const error = await outcome(s.clock, retry(() => (calls++, Promise.reject(unavailable())), { clock: s, deadlineMs: 100, backoff: constantBackoff({ delayMs: 10 }), maxAttempts: 5 }));
    expect(calls).toBe(1);
    expect(error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect(s.clock.now()).toBe(100);
  });

  it('1 ms before the deadline, the next attempt starts, given the 1 ms that is left', async () => {
    const s = lateClock(89);
    let calls = 0;
    const error = await outcome(s.clock, retry(() => (calls++, Promise.reject(unavailable())), { clock: s, deadlineMs: 100, backoff: constantBackoff({ delayMs: 10 }), maxAttempts: 2 }));
    expect(calls).toBe(2);
    expect(s.delays).toEqual([100, 10, 1]); // attempt 1's timer, the wait, attempt 2's timer
    expect(error).toMatchObject({ reason: 'exhausted', attempts: 2 });
  });

  it('an attempt timeout equal to what is left of the deadline is the deadline: its timeout says so', async () => {
    const clock = new ManualClock(0);
    const error = await outcome(clock, retry(() => new Promise(() => undefined), { clock, deadlineMs: 100, attemptTimeoutMs: 100 }));
    expect(error).toMatchObject({ reason: 'deadline', attempts: 1 });
    const cause = (error as RetryError).cause;
    expect(isAttemptTimeoutError(cause) && cause.byDeadline).toBe(true);
    expect((cause as Error).message).toBe("attempt 1 was stopped by the call's deadline after 100 ms");
  });

  it('an attempt timeout 1 ms shorter than what is left is the attempt timeout', async () => {
    const clock = new ManualClock(0);
    let calls = 0;
    const error = await outcome(clock, retry(() => (calls++, new Promise(() => undefined)), { clock, deadlineMs: 100, attemptTimeoutMs: 99, maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) }));
    const first = (error as RetryError).failures[0]!.error;
    expect(isAttemptTimeoutError(first) && first.byDeadline).toBe(false);
    expect((first as Error).message).toBe('attempt 1 timed out after 99 ms (attemptTimeoutMs)');
    // Attempt 2 had 1 ms left: the deadline cut it short.
    expect(calls).toBe(2);
    expect(error).toMatchObject({ reason: 'deadline', attempts: 2 });
    const last = (error as RetryError).cause;
    expect(isAttemptTimeoutError(last) && last.byDeadline).toBe(true);
  });

  it('a clock that steps backwards never asks for an attempt timer longer than the whole deadline', async () => {
    const clock = new ManualClock(0);
    let offset = 0;
    const delays: number[] = [];
    const stepping: Scheduler = {
      now: () => clock.now() + offset,
      setTimeout: (fn, ms) => (delays.push(ms), clock.setTimeout(fn, ms)),
      clearTimeout: (h) => clock.clearTimeout(h),
    };
    let calls = 0;
    const call = retry(
      () => {
        calls++;
        if (calls === 1) {
          offset = -5000; // the clock is set back 5 s during attempt 1
          return Promise.reject(unavailable());
        }
        return Promise.resolve('ok');
      },
      { clock: stepping, deadlineMs: 1000, backoff: constantBackoff({ delayMs: 10 }) },
    );
    expect(await outcome(clock, call)).toBe('resolved');
    expect(delays).toEqual([1000, 10, 1000]);
  });
});

describe("an attempt's signal and timers", () => {
  it('a signal first read after the attempt timed out is already aborted, with the timeout as its reason', async () => {
    const clock = new ManualClock(0);
    const seen: { aborted: boolean; reason: unknown }[] = [];
    const call = retry(
      (ctx) =>
        new Promise((resolve) => {
          // The operation reads its signal only 200 ms in, after its 100 ms timeout.
          clock.setTimeout(() => {
            seen.push({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
            resolve('late');
          }, 200);
        }),
      { clock, attemptTimeoutMs: 100, maxAttempts: 1 },
    );
    const error = await outcome(clock, call);
    expect(error).toMatchObject({ reason: 'exhausted' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.aborted).toBe(true);
    expect(isAttemptTimeoutError(seen[0]!.reason)).toBe(true);
    expect((seen[0]!.reason as Error).message).toBe('attempt 1 timed out after 100 ms (attemptTimeoutMs)');
  });

  it.each([
    ['a timed attempt clears its timer', { attemptTimeoutMs: 1000 }, () => new Promise(() => undefined)],
    ["a wait clears the wait's timer", { backoff: constantBackoff({ delayMs: 1000 }) }, () => Promise.reject(unavailable())],
  ])("the caller's abort during %s at once", async (_what, options, op) => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    const call = retry(op, { clock, ...options, signal: controller.signal });
    await clock.advance(10);
    expect(clock.pending).toBe(1);
    controller.abort('stop');
    expect(clock.pending).toBe(0); // synchronously, in the abort's dispatch
    await expect(call).rejects.toBe('stop');
  });

  it('a success clears the attempt timer; each stage has one timer at most', async () => {
    const s = lateClock();
    let calls = 0;
    const call = retry(
      () => (++calls === 1 ? Promise.reject(unavailable()) : Promise.resolve('ok')),
      { clock: s, attemptTimeoutMs: 500, deadlineMs: 10_000, backoff: constantBackoff({ delayMs: 20 }) },
    );
    expect(await outcome(s.clock, call)).toBe('resolved');
    expect(s.delays).toEqual([500, 20, 500]);
    expect(s.clock.pending).toBe(0);
    expect(s.clock.now()).toBe(20);
  });
});

describe("an attempt's context", () => {
  it('one attempt, one signal: every read gives the same one, aborted by the timeout', async () => {
    const clock = new ManualClock(0);
    const reads: AbortSignal[] = [];
    const call = retry(
      (ctx) => {
        reads.push(ctx.signal, ctx.signal);
        return new Promise(() => undefined);
      },
      { clock, attemptTimeoutMs: 50, maxAttempts: 1 },
    );
    await outcome(clock, call);
    expect(reads[0]).toBe(reads[1]);
    expect(reads[0]!.aborted).toBe(true);
  });

  it("with a deadline and a caller's signal, the attempt's signal is its own: the timeout aborts it, not the caller's", async () => {
    const clock = new ManualClock(0);
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const call = retry(
      (ctx) => {
        seen = ctx.signal;
        return new Promise(() => undefined);
      },
      { clock, deadlineMs: 50, signal: caller.signal },
    );
    const error = await outcome(clock, call);
    expect(error).toMatchObject({ reason: 'deadline' });
    expect(seen).not.toBe(caller.signal);
    expect(seen!.aborted).toBe(true);
    expect(caller.signal.aborted).toBe(false);
  });

  it('a plain call: the attempts after the first (in the loop) get a signal too', async () => {
    const seen: unknown[] = [];
    let calls = 0;
    await retry(
      (ctx) => {
        seen.push(ctx.signal);
        return ++calls < 3 ? Promise.reject(unavailable()) : 'ok';
      },
      { backoff: constantBackoff({ delayMs: 0 }) },
    );
    expect(seen.map((s) => s instanceof AbortSignal && !(s as AbortSignal).aborted)).toEqual([true, true, true]);
  });

  it('a scheduler whose handles are null or objects without unref: unref: true leaves them be', async () => {
    for (const shape of ['null', 'no unref'] as const) {
      const clock = new ManualClock(0);
      const s: Scheduler = {
        now: () => clock.now(),
        setTimeout: (fn, ms) => {
          const id = clock.setTimeout(fn, ms);
          return shape === 'null' ? null : { id };
        },
        clearTimeout: () => undefined,
      };
      let calls = 0;
      const call = retry(() => (++calls === 1 ? Promise.reject(unavailable()) : Promise.resolve('ok')), { clock: s, unref: true, attemptTimeoutMs: 100, backoff: constantBackoff({ delayMs: 5 }) });
      expect(await outcome(clock, call)).toBe('resolved');
    }
  });
});
