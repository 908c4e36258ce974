import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, constantBackoff, createRetry, isRetryError, retry, type RetryBudget, type RetryOptions } from 'herdless';
import { RETRY_POLICY_KEYS } from '../src/runtime/retry.js';
import { invalidOption } from './support/invalid-option.js';

const transient = (): Error => Object.assign(new Error('blip'), { code: 'ECONNRESET' });

/** An operation that fails once, then returns `value`; `calls` counts its attempts. */
function failsOnce<T>(value: T) {
  const op = Object.assign(
    () => {
      op.calls++;
      return op.calls === 1 ? Promise.reject(transient()) : Promise.resolve(value);
    },
    { calls: 0 },
  );
  return op;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a 0 ms retry schedules no timer (the system scheduler, setTimeout spied on)', () => {
  const zero = { maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) };

  it('retry(op, options), one call: 2 attempts, 0 setTimeout calls', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const op = failsOnce('ok');
    await expect(retry(op, zero)).resolves.toBe('ok');
    expect(op.calls).toBe(2);
    expect(spy).toHaveBeenCalledTimes(0);
  });

  it('1,000 concurrent calls, retry() and a createRetry() retrier: 4,000 attempts, 0 setTimeout calls', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const withRetry = createRetry(zero);
    const ops = Array.from({ length: 1000 }, (_, i) => [failsOnce(i), failsOnce(-i)] as const);
    const values = await Promise.all(ops.flatMap(([a, b]) => [retry(a, zero), withRetry(b)]));
    expect(values).toHaveLength(2000);
    expect(values[2 * 999]).toBe(999);
    expect(ops.reduce((sum, [a, b]) => sum + a.calls + b.calls, 0)).toBe(4000);
    expect(spy).toHaveBeenCalledTimes(0);
  });

  it('with a signal (the guarded path): 0 setTimeout calls', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const op = failsOnce('ok');
    await expect(retry(op, { ...zero, signal: new AbortController().signal })).resolves.toBe('ok');
    expect(op.calls).toBe(2);
    expect(spy).toHaveBeenCalledTimes(0);
  });

  it('a 1 ms retry does schedule one (the spy sees timers)', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    await expect(retry(failsOnce('ok'), { ...zero, backoff: constantBackoff({ delayMs: 1 }) })).resolves.toBe('ok');
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0]![1]).toBe(1);
  });
});

describe('retry(op, options) with the same options object, call after call', () => {
  const alwaysFails = () => {
    const op = Object.assign(
      () => {
        op.calls++;
        return Promise.reject(transient());
      },
      { calls: 0 },
    );
    return op;
  };

  it('a field changed between calls applies to the next call', async () => {
    const options: RetryOptions = { maxAttempts: 4, backoff: constantBackoff() };
    const first = alwaysFails();
    await retry(first, options).catch(() => undefined);
    options.maxAttempts = 2;
    const second = alwaysFails();
    const error = await retry(second, options).catch((e: unknown) => e);
    options.maxAttempts = 5;
    const third = alwaysFails();
    await retry(third, options).catch(() => undefined);
    expect([first.calls, second.calls, third.calls]).toEqual([4, 2, 5]);
    expect(isRetryError(error, 'exhausted')).toBe(true);
  });

  it('a field made invalid throws at the next call, naming it; fixed, the object works again', async () => {
    const options: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    await retry(() => 1, options);
    options.maxAttempts = 0;
    expect(invalidOption(() => retry(() => 1, options)).message).toBe('retry: maxAttempts must be ≥ 1, got 0');
    options.maxAttempts = 3;
    await expect(retry(() => 'again', options)).resolves.toBe('again');
  });

  // Every option, made invalid once the object is in use: each call reads its options as they are
  // at that call, so the very next call throws, synchronously, naming it — whatever other objects
  // were used in between. Nothing invalid is kept: fixed, the object works again.
  const invalidValues: [keyof RetryOptions, unknown][] = [
    ['deadlineMs', 0],
    ['attemptTimeoutMs', -5],
    ['budget', {}],
    ['throttle', {}],
    ['maxAttempts', 0],
    ['backoff', 'none'],
    ['throttlingBackoff', {}],
    ['ignoreHints', 'yes'],
    ['retryable', 5],
    ['maxRetryAfterMs', -1],
    ['random', {}],
    ['clock', {}],
    ['unref', 'yes'],
    ['onRetry', 5],
    ['onGiveUp', 5],
    ['onHookError', 5],
  ];
  it('covers every option', () => {
    const named = invalidValues.map(([field]) => field).sort();
    expect(named).toEqual([...RETRY_POLICY_KEYS, 'onRetry', 'onGiveUp'].sort());
  });

  it.each(invalidValues)('%s made invalid once the object is in use: the next call throws naming it, with or without other objects in between', async (field, value) => {
    const options: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    const others: RetryOptions[] = Array.from({ length: 9 }, (_, i) => ({ maxAttempts: 1 + i }));
    for (const between of [0, 1, 9]) {
      await retry(() => 1, options);
      await retry(() => 1, options);
      for (const other of others.slice(0, between)) await retry(() => 1, other);
      const valid = (options as Record<string, unknown>)[field];
      (options as Record<string, unknown>)[field] = value;
      const op = alwaysFails();
      expect(invalidOption(() => retry(op, options)).message).toMatch(new RegExp(`^retry: ${field} `));
      expect(op.calls).toBe(0);
      (options as Record<string, unknown>)[field] = valid;
      await expect(retry(() => 'again', options)).resolves.toBe('again');
    }
  });

  it('a misspelt key added to an object in use is reported at the next call', async () => {
    const options: RetryOptions = { maxAttempts: 2 };
    await retry(() => 1, options);
    await retry(() => 1, options);
    (options as Record<string, unknown>).maxAtempts = 5;
    expect(invalidOption(() => retry(() => 1, options)).message).toMatch(/^retry: maxAtempts is not a retry option \(did you mean maxAttempts\? options: [a-zA-Z, ]+\), got 5$/);
  });

  it('an option changed while a call runs: that call keeps what it read, the next call takes the change', async () => {
    const attempts: boolean[] = [];
    const counting: RetryBudget = {
      name: 'counting',
      onAttempt: (_now, isRetry) => attempts.push(isRetry),
      onSuccess: () => undefined,
      onFailure: () => undefined,
      allowRetry: () => true,
    };
    const options: RetryOptions = { maxAttempts: 3, backoff: constantBackoff() };
    let calls = 0;
    const outcome = await retry(() => {
      calls++;
      if (calls === 1) {
        options.budget = counting;
        options.maxAttempts = 2;
        options.onRetry = 5 as never;
      }
      return Promise.reject(transient());
    }, options).catch((e: unknown) => e);
    // The running call read maxAttempts 3, no budget and no hook when it started.
    expect([isRetryError(outcome, 'exhausted'), calls, attempts]).toEqual([true, 3, []]);
    expect(invalidOption(() => retry(() => 1, options)).message).toBe('retry: onRetry must be a function, got 5');
    delete options.onRetry;
    const next = alwaysFails();
    await retry(next, options).catch(() => undefined);
    expect(next.calls).toBe(2);
    expect(attempts).toEqual([false, true]);
  });

  it('two objects used in turn each keep their own policy', async () => {
    const two: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    const three: RetryOptions = { maxAttempts: 3, backoff: constantBackoff() };
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      for (const options of [two, three]) {
        const op = alwaysFails();
        await retry(op, options).catch(() => undefined);
        counts.push(op.calls);
      }
    }
    expect(counts).toEqual([2, 3, 2, 3, 2, 3]);
  });

  it('a signal set on the object for each call is the one honoured', async () => {
    const clock = new ManualClock();
    const options: RetryOptions = { maxAttempts: 3, backoff: constantBackoff({ delayMs: 1000 }), clock };
    const first = new AbortController();
    options.signal = first.signal;
    const p1 = retry(() => Promise.reject(transient()), options).catch((e: unknown) => e);
    const second = new AbortController();
    options.signal = second.signal;
    const p2 = retry(() => Promise.reject(transient()), options).catch((e: unknown) => e);
    await Promise.resolve();
    second.abort('second');
    expect(await p2).toBe('second');
    first.abort('first');
    expect(await p1).toBe('first');
  });

  it('a new clock or hook on the object is used from the next call', async () => {
    const options: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    await retry(failsOnce(1), options);
    const seen: number[] = [];
    options.onRetry = (event) => void seen.push(event.attempt);
    await retry(failsOnce(2), options);
    expect(seen).toEqual([1]);
  });
});

describe('what an operation may return on the plain path', () => {
  const zero = { maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) };

  it('a thenable that is not a promise: its rejection is retried, its value returned', async () => {
    let calls = 0;
    const op = (): PromiseLike<string> => {
      calls++;
      const outcome = calls === 1 ? Promise.reject(transient()) : Promise.resolve('thenable');
      return { then: (onFulfilled, onRejected) => outcome.then(onFulfilled, onRejected) };
    };
    const pending = retry(op, zero);
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toBe('thenable');
    expect(calls).toBe(2);
  });

  it('a Promise subclass: chained as a promise, its rejection retried, its value returned', async () => {
    class TaggedPromise<T> extends Promise<T> {}
    const op = Object.assign(
      () => {
        op.calls++;
        return op.calls === 1 ? TaggedPromise.reject(transient()) : TaggedPromise.resolve('subclass');
      },
      { calls: 0 },
    );
    const pending = retry(op, zero);
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toBe('subclass');
    expect(op.calls).toBe(2);
  });

  it('a plain value, and a synchronous throw (retried like a rejection)', async () => {
    await expect(retry(() => 7)).resolves.toBe(7);
    const op = Object.assign(
      () => {
        op.calls++;
        if (op.calls === 1) throw transient();
        return 'second';
      },
      { calls: 0 },
    );
    await expect(retry(op, zero)).resolves.toBe('second');
    expect(op.calls).toBe(2);
  });
});

describe('options read at each call, as a model: whatever the order of calls and edits, a call uses the options as they were when it started', () => {
  type Command =
    | { kind: 'set'; object: number; maxAttempts: number }
    | { kind: 'set-during'; object: number; maxAttempts: number }
    | { kind: 'call'; object: number; fails: boolean };
  const command: fc.Arbitrary<Command> = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), object: fc.integer({ min: 0, max: 9 }), maxAttempts: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('set-during' as const), object: fc.integer({ min: 0, max: 9 }), maxAttempts: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('call' as const), object: fc.integer({ min: 0, max: 9 }), fails: fc.boolean() }),
  );

  it('attempts = maxAttempts at the call; a success takes one attempt (10 objects taking turns)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60 }), async (commands) => {
        const objects: RetryOptions[] = Array.from({ length: 10 }, () => ({ maxAttempts: 2, backoff: constantBackoff() }));
        for (const c of commands) {
          const options = objects[c.object]!;
          if (c.kind === 'set') {
            options.maxAttempts = c.maxAttempts;
          } else if (c.kind === 'set-during') {
            // Edited while the call runs: that call keeps the value it started with.
            const before = options.maxAttempts;
            let calls = 0;
            await retry(() => {
              calls++;
              if (calls === 1) options.maxAttempts = c.maxAttempts;
              return Promise.reject(transient());
            }, options).catch(() => undefined);
            expect(calls).toBe(before);
          } else {
            let calls = 0;
            const outcome = await retry(() => {
              calls++;
              return c.fails ? Promise.reject(transient()) : 'ok';
            }, options).catch((e: unknown) => e);
            expect(calls).toBe(c.fails ? options.maxAttempts : 1);
            if (!c.fails) expect(outcome).toBe('ok');
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
