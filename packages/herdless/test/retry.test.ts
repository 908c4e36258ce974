import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, constantBackoff, createRetry, exponentialBackoff, fullJitterBackoff, isAttemptTimeoutError, isDoNotRetry, isInvalidOptionError, isRetryError, markDoNotRetry, retry, type RetryBudget, type RetryContext, type RetryError, type RetryOptions, type Scheduler } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';
import { PyRandom } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

const noWait = constantBackoff();
const fail = (label: string, status = 503): Error => Object.assign(new Error(label), { status });

/** A ManualClock that also records every timer delay it was asked for. */
class RecordingClock extends ManualClock {
  delays: number[] = [];
  override setTimeout(callback: () => void, delayMs: number): number {
    this.delays.push(delayMs);
    return super.setTimeout(callback, delayMs);
  }
}

/** Settles `promise` into a value with the virtual time it settled at. */
function track<T>(promise: Promise<T>, clock: ManualClock) {
  const box: { done: boolean; value?: T; error?: unknown; at?: number } = { done: false };
  promise.then(
    (value) => Object.assign(box, { done: true, value, at: clock.now() }),
    (error: unknown) => Object.assign(box, { done: true, error, at: clock.now() }),
  );
  return box;
}

// Run every test with --unhandled-rejections=strict semantics: any unhandled rejection fails it.
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 5));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('attempts', () => {
  it('always failing, maxAttempts 4, 0 ms waits: exactly 4 calls, no timer, virtual 0 ms; cause = call 4’s error', async () => {
    const clock = new RecordingClock();
    const errors: Error[] = [];
    const attempts: number[] = [];
    const p = retry(
      ({ attempt }) => {
        attempts.push(attempt);
        const e = fail(`call ${attempt}`);
        errors.push(e);
        throw e;
      },
      { maxAttempts: 4, backoff: noWait, clock },
    );
    const error = (await p.catch((e: unknown) => e)) as RetryError;
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(clock.delays).toEqual([]);
    expect(clock.now()).toBe(0);
    expect(isRetryError(error, 'exhausted')).toBe(true);
    expect(error.attempts).toBe(4);
    expect(error.cause).toBe(errors[3]);
    expect(error.code).toBe('ERR_HERDLESS_RETRY');
    expect(error.message).toBe('retry gave up after 4 attempts (exhausted): all 4 attempts failed (maxAttempts 4); last failure: Error: call 4');
  });

  it('the same with the real clock finishes without any timer (0 ms waits use no setTimeout)', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    let calls = 0;
    const error = await retry(
      async () => {
        calls++;
        throw fail('x');
      },
      { maxAttempts: 4, backoff: noWait },
    ).catch((e: unknown) => e);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(calls).toBe(4);
    expect(isRetryError(error, 'exhausted')).toBe(true);
  });

  it('maxAttempts 1: exactly 1 call', async () => {
    let calls = 0;
    const error = await retry(
      () => {
        calls++;
        return Promise.reject(fail('once'));
      },
      { maxAttempts: 1 },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(error).toMatchObject({ reason: 'exhausted', attempts: 1 });
  });

  it('succeeds with the first successful value; a sync value or throw works too', async () => {
    let calls = 0;
    const value = await retry(
      ({ attempt }) => {
        calls++;
        if (attempt < 3) throw fail('not yet');
        return `ok on ${attempt}`;
      },
      { backoff: noWait },
    );
    expect([value, calls]).toEqual(['ok on 3', 3]);
    expect(await retry(() => 42)).toBe(42);
  });

  it('waits follow the backoff, in virtual time', async () => {
    const clock = new RecordingClock();
    const starts: number[] = [];
    const box = track(
      retry(
        () => {
          starts.push(clock.now());
          throw fail('down');
        },
        { maxAttempts: 4, backoff: exponentialBackoff({ initialBackoffMs: 100 }), clock },
      ),
      clock,
    );
    await clock.runAll();
    expect(starts).toEqual([0, 100, 300, 700]);
    expect(clock.delays).toEqual([100, 200, 400]);
    expect(box).toMatchObject({ done: true, at: 700 });
  });

  it('the default backoff with a seeded random: full jitter 100 ms × 2^(n−1)', async () => {
    const clock = new RecordingClock();
    const p = retry(() => Promise.reject(fail('down')), { clock, random: new PyRandom(0) }).catch(() => undefined);
    await clock.runAll();
    await p;
    const r = new PyRandom(0);
    expect(clock.delays).toEqual([100 * r.random(), 200 * r.random()]);
  });
});

describe('timer delays stay ≤ 2^31 − 1 ms', () => {
  it('exponential, base 100 ms, no cap: wait 25 is 1 677 721 600 ms, wait 26 is 2^31 − 1 (not 1 ms)', async () => {
    const clock = new RecordingClock();
    const p = retry(() => Promise.reject(fail('down')), {
      maxAttempts: 27,
      backoff: exponentialBackoff({ initialBackoffMs: 100, maxBackoffMs: Infinity }),
      clock,
    }).catch((e: unknown) => e);
    await clock.runAll();
    expect(await p).toMatchObject({ reason: 'exhausted', attempts: 27 });
    expect(clock.delays).toHaveLength(26);
    expect(clock.delays[24]).toBe(1_677_721_600);
    expect(clock.delays[25]).toBe(MAX_DELAY_MS);
    expect(Math.max(...clock.delays)).toBe(MAX_DELAY_MS);
  });

  it('multiplier 100, cap 5 s: wait 200 is 5000 ms', async () => {
    const clock = new RecordingClock();
    const p = retry(() => Promise.reject(fail('down')), {
      maxAttempts: 201,
      backoff: exponentialBackoff({ initialBackoffMs: 100, backoffMultiplier: 100, maxBackoffMs: 5000 }),
      clock,
    }).catch((e: unknown) => e);
    await clock.runAll();
    await p;
    expect(clock.delays).toHaveLength(200);
    expect(clock.delays.slice(0, 3)).toEqual([100, 5000, 5000]);
    expect(clock.delays[199]).toBe(5000);
  });
});

describe('classification in the loop', () => {
  it.each([
    ['TypeError x is not a function', new TypeError('x is not a function')],
    ['a 404', fail('not found', 404)],
    ['a thrown string', 'nope'],
  ])('%s → 1 call, reason fatal, cause kept', async (_name, thrown) => {
    let calls = 0;
    const error = (await retry(
      () => {
        calls++;
        throw thrown;
      },
      { maxAttempts: 5, backoff: noWait },
    ).catch((e: unknown) => e)) as RetryError;
    expect(calls).toBe(1);
    expect(error).toMatchObject({ reason: 'fatal', attempts: 1 });
    expect(error.cause).toBe(thrown);
  });

  it('fetch’s "fetch failed" with a socket cause is retried', async () => {
    let calls = 0;
    const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const value = await retry(
      () => {
        if (++calls < 3) throw new TypeError('fetch failed', { cause });
        return 'body';
      },
      { backoff: noWait },
    );
    expect([value, calls]).toEqual(['body', 3]);
  });

  it('retryable extends the defaults', async () => {
    let calls = 0;
    const error = await retry(
      () => {
        calls++;
        throw fail('conflict', 409);
      },
      { maxAttempts: 3, backoff: noWait, retryable: (e, { transient }) => transient || (e as { status?: number }).status === 409 },
    ).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(error).toMatchObject({ reason: 'exhausted' });
  });

  it('a retryable override that throws: the call rejects with what it threw', async () => {
    const bug = new Error('classifier bug');
    const error = await retry(() => Promise.reject(fail('x')), {
      backoff: noWait,
      retryable: () => {
        throw bug;
      },
    }).catch((e: unknown) => e);
    expect(error).toBe(bug);
  });
});

describe('server hints', () => {
  it('retryAfterMs replaces the backoff for that wait', async () => {
    const clock = new RecordingClock();
    let calls = 0;
    const box = track(
      retry(
        () => {
          if (++calls === 1) throw Object.assign(fail('busy', 503), { retryAfterMs: 2500 });
          if (calls === 2) throw fail('again', 503);
          return 'ok';
        },
        { backoff: constantBackoff({ delayMs: 10 }), clock },
      ),
      clock,
    );
    await clock.advance(2499);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(calls).toBe(2);
    await clock.advance(10);
    expect(box).toMatchObject({ done: true, value: 'ok', at: 2510 });
    expect(clock.delays).toEqual([2500, 10]);
  });

  it('a hint longer than maxRetryAfterMs ends the call at once: hint-too-long, no timer', async () => {
    const clock = new RecordingClock();
    let calls = 0;
    const error = (await retry(
      () => {
        calls++;
        throw Object.assign(fail('later', 429), { retryAfterMs: 120_000 });
      },
      { clock, maxRetryAfterMs: 60_000 },
    ).catch((e: unknown) => e)) as RetryError;
    expect([calls, clock.delays.length, clock.pending]).toEqual([1, 0, 0]);
    expect(error.reason).toBe('hint-too-long');
    expect(error.message).toContain('the server asked to wait 120000 ms, more than maxRetryAfterMs (60000 ms)');
  });

  it('a hint longer than the time left before the deadline ends the call at once', async () => {
    const clock = new RecordingClock();
    const error = (await retry(() => Promise.reject(Object.assign(fail('later', 503), { retryAfterMs: 5000 })), {
      clock,
      deadlineMs: 3000,
    }).catch((e: unknown) => e)) as RetryError;
    expect(error.reason).toBe('hint-too-long');
    expect(error.message).toContain('more than the 3000 ms left before the deadline');
    expect(clock.pending).toBe(0);
  });

  it('"do not retry" ends the call at once, and so does a malformed hint', async () => {
    for (const thrown of [markDoNotRetry(fail('overloaded', 503)), Object.assign(fail('bad hint', 503), { retryAfterMs: -1 })]) {
      let calls = 0;
      const error = await retry(
        () => {
          calls++;
          throw thrown;
        },
        { backoff: noWait },
      ).catch((e: unknown) => e);
      expect(calls).toBe(1);
      expect(error).toMatchObject({ reason: 'do-not-retry', attempts: 1 });
    }
  });

  it.each([
    [-3, '-3'],
    ['100', '"100"'],
    [Number.NaN, 'NaN'],
  ])('a malformed hint (retryAfterMs %s) is named in the message, with its value', async (hint, shown) => {
    const error = await retry(() => Promise.reject(Object.assign(fail('bad hint', 503), { retryAfterMs: hint })), { backoff: noWait }).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`the failure's retryAfterMs is not a number of ms ≥ 0 (got ${shown})`);
    const marked = await retry(() => Promise.reject(markDoNotRetry(fail('overloaded', 503))), { backoff: noWait }).catch((e: unknown) => e);
    expect((marked as Error).message).toContain('the failure says not to retry');
  });

  it('nested retry() does not multiply attempts: the RetryError is do-not-retry', async () => {
    let bottom = 0;
    const inner = () =>
      retry(
        () => {
          bottom++;
          throw fail('db down', 503);
        },
        { maxAttempts: 3, backoff: noWait },
      );
    const error = (await retry(inner, { maxAttempts: 3, backoff: noWait }).catch((e: unknown) => e)) as RetryError;
    expect(bottom).toBe(3);
    expect(error).toMatchObject({ reason: 'do-not-retry', attempts: 1 });
    expect(isRetryError(error.cause, 'exhausted')).toBe(true);
    expect(isDoNotRetry(error)).toBe(true);
  });
});

describe('abort', () => {
  it('a wait of 10 s, abort at 1 s: rejects at 1 s with the abort reason, 1 call, no timer, no listener', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let calls = 0;
    const box = track(
      retry(
        () => {
          calls++;
          throw fail('down');
        },
        { clock, signal: controller.signal, backoff: constantBackoff({ delayMs: 10_000 }) },
      ),
      clock,
    );
    await clock.advance(1000);
    expect(clock.pending).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('user left');
    controller.abort(reason);
    await clock.advance(0);
    expect(box).toMatchObject({ done: true, at: 1000 });
    expect(box.error).toBe(reason);
    expect(calls).toBe(1);
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await clock.advance(20_000);
    expect(calls).toBe(1);
  });

  it('abort during an attempt: rejects at once with the reason, the attempt’s signal aborts, a late settlement is ignored', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let context: RetryContext | undefined;
    let settle: ((v: string) => void) | undefined;
    const box = track(
      retry(
        (ctx) => {
          context = ctx;
          return new Promise<string>((_resolve, reject) => {
            settle = () => reject(fail('late'));
          });
        },
        { clock, signal: controller.signal },
      ),
      clock,
    );
    await clock.advance(500);
    expect(context!.signal.aborted).toBe(false);
    controller.abort();
    await clock.advance(0);
    expect(box.done).toBe(true);
    expect((box.error as DOMException).name).toBe('AbortError');
    expect(box.error).toBe(controller.signal.reason);
    expect(context!.signal.aborted).toBe(true);
    settle!('late');
    await clock.advance(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an already aborted signal: 0 calls, rejects with its reason, onGiveUp says aborted', async () => {
    const events: unknown[] = [];
    let calls = 0;
    const reason = new Error('gone');
    const error = await retry(() => void calls++, { signal: AbortSignal.abort(reason), onGiveUp: (e) => void events.push(e) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBe(reason);
    expect(calls).toBe(0);
    expect(events).toEqual([{ reason: 'aborted', attempts: 0, error: reason }]);
  });

  it('an abort from onRetry stops before the next attempt', async () => {
    const controller = new AbortController();
    let calls = 0;
    const error = await retry(
      () => {
        calls++;
        throw fail('x');
      },
      { backoff: noWait, signal: controller.signal, onRetry: () => controller.abort('stop') },
    ).catch((e: unknown) => e);
    expect([error, calls]).toEqual(['stop', 1]);
  });

  it('20 calls on one signal that each fail twice then succeed: one listener while they run, 0 after', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const calls = new Array<number>(20).fill(0);
    const all = Promise.all(
      calls.map((_, i) =>
        retry(
          () => {
            if (++calls[i]! <= 2) throw fail('flaky');
            return i;
          },
          { clock, signal: controller.signal, backoff: constantBackoff({ delayMs: 10 }) },
        ),
      ),
    );
    await clock.advance(0);
    // One relay listener for all 20 calls: Node.js warns past 10 listeners on one signal.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await clock.runAll();
    expect(await all).toEqual([...Array(20).keys()]);
    expect(calls).toEqual(new Array(20).fill(3));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.pending).toBe(0);
  });

  it('with only a signal, the attempt’s signal is the caller’s own (no controller, no extra listener)', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    await retry(({ signal }) => void (seen = signal), { signal: controller.signal });
    expect(seen).toBe(controller.signal);
  });

  it('without any signal or timeout, the attempt still gets a (never aborting) signal', async () => {
    const signal = await retry(({ signal }) => signal);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
  });
});

describe('deadline and attempt timeout', () => {
  it('attemptTimeoutMs: a hung attempt fails with a retryable AttemptTimeoutError and its signal aborts', async () => {
    const clock = new ManualClock();
    const signals: AbortSignal[] = [];
    const box = track(
      retry(
        ({ signal }) => {
          signals.push(signal);
          return new Promise<never>(() => undefined);
        },
        { clock, attemptTimeoutMs: 100, maxAttempts: 3, backoff: noWait },
      ),
      clock,
    );
    await clock.runAll();
    expect(box).toMatchObject({ done: true, at: 300 });
    const error = box.error as RetryError;
    expect(error).toMatchObject({ reason: 'exhausted', attempts: 3 });
    expect(isAttemptTimeoutError(error.cause)).toBe(true);
    expect(error.cause).toMatchObject({ attempt: 3, timeoutMs: 100, byDeadline: false });
    expect(signals.map((s) => s.aborted)).toEqual([true, true, true]);
    expect(signals[0]!.reason).toMatchObject({ code: 'ERR_HERDLESS_ATTEMPT_TIMEOUT', attempt: 1 });
    expect(clock.pending).toBe(0);
  });

  it('deadlineMs: a wait that would cross it is not started; the call ends with the last failure', async () => {
    const clock = new ManualClock();
    const errors: Error[] = [];
    const box = track(
      retry(
        () => {
          const e = fail(`at ${clock.now()}`);
          errors.push(e);
          throw e;
        },
        { clock, deadlineMs: 2500, maxAttempts: 10, backoff: constantBackoff({ delayMs: 1000 }) },
      ),
      clock,
    );
    await clock.runAll();
    expect(errors.map((e) => e.message)).toEqual(['at 0', 'at 1000', 'at 2000']);
    expect(box).toMatchObject({ done: true, at: 2000 });
    expect(box.error).toMatchObject({ reason: 'deadline', attempts: 3 });
    expect((box.error as RetryError).cause).toBe(errors[2]);
    expect((box.error as Error).message).toContain('the next wait (1000 ms) would cross the deadline (500 ms left)');
  });

  it('deadlineMs cuts a hung attempt at the deadline', async () => {
    const clock = new ManualClock();
    let signal: AbortSignal | undefined;
    const box = track(
      retry(
        (ctx) => {
          signal = ctx.signal;
          return new Promise<never>(() => undefined);
        },
        { clock, deadlineMs: 500, attemptTimeoutMs: 10_000 },
      ),
      clock,
    );
    await clock.runAll();
    expect(box).toMatchObject({ done: true, at: 500 });
    expect(box.error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect((box.error as RetryError).cause).toMatchObject({ byDeadline: true, timeoutMs: 500 });
    expect(signal!.aborted).toBe(true);
    expect(clock.pending).toBe(0);
  });
});

describe('hooks are observers', () => {
  it('onRetry gets attempt, delay, error; onGiveUp gets reason, attempts, error', async () => {
    const clock = new ManualClock();
    const log: unknown[] = [];
    const errors = [fail('a'), fail('b'), fail('c')];
    const p = retry(
      ({ attempt }) => {
        throw errors[attempt - 1];
      },
      {
        clock,
        backoff: exponentialBackoff({ initialBackoffMs: 100 }),
        onRetry: (e) => void log.push(['retry', e]),
        onGiveUp: (e) => void log.push(['give-up', e]),
      },
    ).catch(() => undefined);
    await clock.runAll();
    await p;
    expect(log).toEqual([
      ['retry', { attempt: 1, delayMs: 100, delaySource: 'backoff', error: errors[0] }],
      ['retry', { attempt: 2, delayMs: 200, delaySource: 'backoff', error: errors[1] }],
      ['give-up', { reason: 'exhausted', attempts: 3, error: errors[2] }],
    ]);
  });

  it('onRetry that throws or rejects: no unhandled rejection, the outcome is unchanged, onHookError gets the error', async () => {
    for (const mode of ['throw', 'reject'] as const) {
      const hookErrors: unknown[] = [];
      let calls = 0;
      const value = await retry(
        () => {
          if (++calls < 3) throw fail('flaky');
          return 'done';
        },
        {
          backoff: noWait,
          onRetry: ({ attempt }) => {
            if (mode === 'throw') throw new Error(`hook ${attempt}`);
            return Promise.reject(new Error(`hook ${attempt}`));
          },
          onHookError: (error, hook) => void hookErrors.push([hook, (error as Error).message]),
        },
      );
      await new Promise((r) => setImmediate(r));
      expect([mode, value, calls]).toEqual([mode, 'done', 3]);
      expect(hookErrors).toEqual([
        ['onRetry', 'hook 1'],
        ['onRetry', 'hook 2'],
      ]);
    }
  });

  it('without onHookError, a hook failure becomes a process warning; a throwing onGiveUp does not change the rejection', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const cause = fail('x', 404);
    const error = await retry(
      () => {
        throw cause;
      },
      {
        onGiveUp: () => {
          throw new Error('logger down');
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'fatal', cause });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toContain('the onGiveUp hook failed');
    expect(warn.mock.calls[0]![1]).toMatchObject({ code: 'HERDLESS_HOOK_FAILED' });
    warn.mockRestore();
  });
});

describe('budget', () => {
  function fakeBudget(allow: boolean[]): RetryBudget & { log: string[] } {
    const log: string[] = [];
    return {
      name: 'fake',
      log,
      onAttempt: (now, isRetry) => void log.push(`attempt@${now}${isRetry ? '+' : ''}`),
      onSuccess: (now: number, isRetry?: boolean) => void log.push(`success@${now}${isRetry ? '+' : ''}`),
      onFailure: (now: number, isTimeout?: boolean) => void log.push(`failure@${now}${isTimeout ? ' timeout' : ''}`),
      allowRetry: (now) => (log.push(`allow?@${now}`), allow.shift() ?? true),
    };
  }

  it('is told of attempts, failures and success, and asked before each retry', async () => {
    const clock = new ManualClock();
    const budget = fakeBudget([]);
    let calls = 0;
    const box = track(
      retry(
        () => {
          if (++calls < 3) throw fail('x');
          return 'ok';
        },
        { clock, budget, backoff: constantBackoff({ delayMs: 10 }) },
      ),
      clock,
    );
    await clock.runAll();
    expect(box.value).toBe('ok');
    expect(budget.log).toEqual(['attempt@0', 'failure@0', 'allow?@0', 'attempt@10+', 'failure@10', 'allow?@10', 'attempt@20+', 'success@20+']);
  });

  it('a timed-out attempt is reported as onFailure(now, true); a first-try success as onSuccess(now, false)', async () => {
    const clock = new ManualClock();
    const budget = fakeBudget([]);
    let calls = 0;
    const box = track(
      retry(() => (++calls === 1 ? new Promise<never>(() => undefined) : 'ok'), { clock, budget, attemptTimeoutMs: 50, backoff: noWait }),
      clock,
    );
    await clock.runAll();
    expect(box.value).toBe('ok');
    expect(budget.log).toEqual(['attempt@0', 'failure@50 timeout', 'allow?@50', 'attempt@50+', 'success@50+']);
    const first = fakeBudget([]);
    await retry(() => 1, { budget: first, clock });
    expect(first.log).toEqual(['attempt@50', 'success@50']);
  });

  it('a refusal gives up with reason budget; fatal errors are not reported', async () => {
    const budget = fakeBudget([false]);
    const error = await retry(() => Promise.reject(fail('x')), { budget, backoff: noWait, signal: new AbortController().signal }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ reason: 'budget', attempts: 1 });
    expect((error as Error).message).toContain('the retry budget "fake" refused the retry');
    const quiet = fakeBudget([]);
    await retry(() => Promise.reject(new TypeError('bug')), { budget: quiet, clock: new ManualClock(7) }).catch(() => undefined);
    expect(quiet.log).toEqual(['attempt@7']);
  });
});

describe('timers', () => {
  function handleClock(): Scheduler & { unrefs: number } {
    const clock = new ManualClock();
    const s = {
      unrefs: 0,
      now: () => clock.now(),
      setTimeout: (fn: () => void, ms: number) => ({ id: clock.setTimeout(fn, ms), unref: () => void s.unrefs++ }),
      clearTimeout: (h: unknown) => clock.clearTimeout((h as { id: number }).id),
      clock,
    };
    return s;
  }

  it('are ref’d by default; unref: true unrefs every timer', async () => {
    for (const unref of [false, true]) {
      const s = handleClock();
      const p = retry(() => Promise.reject(fail('x')), { clock: s, unref, backoff: constantBackoff({ delayMs: 5 }), attemptTimeoutMs: 1000 }).catch(
        () => undefined,
      );
      await (s as unknown as { clock: ManualClock }).clock.runAll();
      await p;
      expect(s.unrefs).toBe(unref ? 5 : 0); // 3 attempt timers + 2 waits
    }
  });
});

describe('options', () => {
  const cases: { input: unknown; error: string }[] = [
    { input: { maxAtempts: 3 }, error: 'retry: maxAtempts is not a retry option (did you mean maxAttempts? options: maxAttempts, backoff, ' },
    { input: { clock: {} }, error: 'retry: clock must be a Scheduler' },
    { input: { random: () => 0.5 }, error: 'retry: random must be an Rng' },
    { input: { unref: 'yes' }, error: 'retry: unref must be a boolean, got "yes"' },
    { input: { onRetry: 1 }, error: 'retry: onRetry must be a function, got 1' },
    { input: { signal: {} }, error: 'retry: signal must be an AbortSignal' },
    { input: { maxAttempts: 0 }, error: 'retry: maxAttempts must be ≥ 1, got 0' },
    { input: { maxAttempts: 3n }, error: 'retry: maxAttempts must be a number, got 3n' },
    { input: { deadlineMs: Symbol('soon') }, error: 'retry: deadlineMs must be a number, got Symbol(soon)' },
  ];
  it.each(cases)('$input → $error (thrown synchronously)', ({ input, error }) => {
    let thrown: unknown;
    try {
      void retry(() => 1, input as never);
    } catch (e) {
      thrown = e;
    }
    expect(isInvalidOptionError(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(error);
  });

  it('a custom backoff whose delay() returns NaN ends the call with an InvalidOptionError after the first attempt', async () => {
    let calls = 0;
    const backoff = { ...constantBackoff(), delay: () => Number.NaN };
    const error = await retry(
      () => {
        calls++;
        return Promise.reject(Object.assign(new Error('blip'), { code: 'ECONNRESET' }));
      },
      { maxAttempts: 3, backoff },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe('retry: backoff.delay() must return a number of ms in [0, 2147483647] (a bug in a custom Backoff), got NaN');
  });

  // On every path — lean (where the call itself finds out), cached, guarded, createRetry — the throw is
  // synchronous, names the owner, and nothing is retried.
  it.each([5, null, undefined, 'op', { then: () => 1 }])('the operation must be a function: %o', (operation) => {
    const shared: RetryOptions = { maxAttempts: 2 };
    retry(() => 1, shared);
    retry(() => 1, shared);
    const lean = createRetry({ maxAttempts: 2 });
    const guarded = createRetry({ deadlineMs: 1000 });
    const calls: [string, () => unknown][] = [
      ['retry', () => retry(operation as never)],
      ['retry', () => retry(operation as never, { maxAttempts: 2 })],
      ['retry', () => retry(operation as never, shared)],
      ['retry', () => retry(operation as never, { signal: new AbortController().signal })],
      ['createRetry', () => lean(operation as never)],
      ['createRetry', () => lean(operation as never, { signal: new AbortController().signal })],
      ['createRetry', () => guarded(operation as never)],
    ];
    for (const [owner, call] of calls) {
      expect(invalidOption(call).message).toMatch(new RegExp(`^${owner}: operation must be a function, got `));
    }
  });

  it('createRetry normalises once, exposes the frozen policy, and takes the signal per call', async () => {
    const r = createRetry({ maxAttempts: 2, backoff: fullJitterBackoff(), deadlineMs: 5000 });
    expect(r.policy).toMatchObject({ maxAttempts: 2, deadlineMs: 5000, attemptTimeoutMs: Infinity });
    expect(Object.isFrozen(r.policy)).toBe(true);
    expect(await r(({ attempt }) => attempt)).toBe(1);
    const reason = new Error('stop');
    await expect(r(() => 1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(() => createRetry({ signal: new AbortController().signal } as never)).toThrow('createRetry: signal is a per-call option');
  });

  it.each([
    [null, 'got null'],
    ['x', 'got "x"'],
    [5, 'got 5'],
    [[], 'got an array of length 0'],
  ])('a retrier called with per-call options %j that are not an object throws naming callOptions', (callOptions, got) => {
    const r = createRetry({ maxAttempts: 2 });
    let calls = 0;
    const thrown = invalidOption(() => r(() => ++calls, callOptions as never));
    expect(thrown.field).toBe('callOptions');
    expect(thrown.message).toBe(`createRetry: callOptions must be an object: the per-call options ({ signal }), ${got}`);
    expect(calls).toBe(0);
  });
});

describe('invariants (property, virtual time)', () => {
  it('an always-failing operation is called exactly maxAttempts times', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (maxAttempts, seed) => {
        const clock = new ManualClock();
        let calls = 0;
        const p = retry(
          () => {
            calls++;
            throw fail('down');
          },
          { maxAttempts, clock, random: new PyRandom(seed) },
        ).catch((e: unknown) => e);
        await clock.runAll();
        expect(await p).toMatchObject({ reason: 'exhausted', attempts: maxAttempts });
        expect(calls).toBe(maxAttempts);
        expect(clock.pending).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it('an abort at any moment ends the call at that moment, with no timer or listener left', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 5000 }), fc.boolean(), async (abortAt, hang) => {
        const clock = new ManualClock();
        const controller = new AbortController();
        const box = track(
          retry(() => (hang ? new Promise<never>(() => undefined) : Promise.reject(fail('down'))), {
            clock,
            signal: controller.signal,
            maxAttempts: 10,
            attemptTimeoutMs: 700,
            backoff: constantBackoff({ delayMs: 300 }),
          }),
          clock,
        );
        await clock.advance(abortAt);
        const settledBefore = box.done;
        controller.abort('stop');
        await clock.advance(0);
        expect(box.done).toBe(true);
        if (!settledBefore) expect(box).toMatchObject({ error: 'stop', at: abortAt });
        expect(clock.pending).toBe(0);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      }),
      { numRuns: 60 },
    );
  });
});
