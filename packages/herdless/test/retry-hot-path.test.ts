import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionError, ManualClock, constantBackoff, createRetry, isRetryError, retry, type RetryBudget, type RetryOptions } from 'herdless';
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

  // Every option, made invalid once the object is in use (seen twice: the inline path). The options
  // that decide how a call starts are compared on every call: the next call throws, synchronously.
  // The others are compared when an attempt fails: a call that succeeds does not need them; a call
  // whose attempt fails rejects with the error, naming the field, before any retry. Nothing invalid
  // is cached: fixed, the object works again.
  const startOptions: [keyof RetryOptions, unknown][] = [
    ['deadlineMs', 0],
    ['attemptTimeoutMs', -5],
    ['budget', {}],
  ];
  const failureOptions: [keyof RetryOptions, unknown][] = [
    ['maxAttempts', 0],
    ['backoff', 'none'],
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
    const named = [...startOptions, ...failureOptions].map(([field]) => field).sort();
    expect(named).toEqual([...RETRY_POLICY_KEYS, 'onRetry', 'onGiveUp'].sort());
  });

  it.each(startOptions)('%s made invalid once the object is in use: the next call throws naming it', async (field, value) => {
    const options: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    await retry(() => 1, options);
    await retry(() => 1, options);
    const valid = (options as Record<string, unknown>)[field];
    (options as Record<string, unknown>)[field] = value;
    expect(invalidOption(() => retry(() => 1, options)).message).toMatch(new RegExp(`^retry: ${field} `));
    (options as Record<string, unknown>)[field] = valid;
    await expect(retry(() => 'again', options)).resolves.toBe('again');
  });

  it.each(failureOptions)('%s made invalid once the object is in use: a failed attempt rejects naming it, before any retry', async (field, value) => {
    const options: RetryOptions = { maxAttempts: 2, backoff: constantBackoff() };
    await retry(() => 1, options);
    await retry(() => 1, options);
    (options as Record<string, unknown>)[field] = value;
    // A call that succeeds reads none of them.
    await expect(retry(() => 'fine', options)).resolves.toBe('fine');
    const op = alwaysFails();
    const error = await retry(op, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(new RegExp(`^retry: ${field} `));
    expect(op.calls).toBe(1);
    // A synchronous throw of the first attempt takes the same way.
    const throws = () => {
      throw transient();
    };
    await expect(retry(throws, options)).rejects.toBeInstanceOf(InvalidOptionError);
    // Fixed: the object works again, and retries.
    delete (options as Record<string, unknown>)[field];
    options.maxAttempts = 2;
    options.backoff = constantBackoff();
    const again = alwaysFails();
    expect(isRetryError(await retry(again, options).catch((e: unknown) => e), 'exhausted')).toBe(true);
    expect(again.calls).toBe(2);
  });

  it('a start option changed while a call runs: that call keeps its start, the next call takes the change', async () => {
    const attempts: boolean[] = [];
    const counting: RetryBudget = {
      name: 'counting',
      onAttempt: (_now, isRetry) => attempts.push(isRetry),
      onSuccess: () => undefined,
      onFailure: () => undefined,
      allowRetry: () => true,
    };
    const options: RetryOptions = { maxAttempts: 3, backoff: constantBackoff() };
    await retry(() => 1, options);
    await retry(() => 1, options);
    let calls = 0;
    const value = await retry(() => {
      calls++;
      if (calls === 1) {
        options.budget = counting;
        options.maxAttempts = 2;
        return Promise.reject(transient());
      }
      return 'kept';
    }, options);
    // The running call began without a budget: it reports nothing to it, but it does take the new maxAttempts.
    expect([value, calls, attempts]).toEqual(['kept', 2, []]);
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

describe('the options cache, as a model: whatever the order of calls and edits, a call uses the options as they are when it needs them', () => {
  type Command =
    | { kind: 'set'; object: number; maxAttempts: number }
    | { kind: 'set-during'; object: number; maxAttempts: number }
    | { kind: 'call'; object: number; fails: boolean };
  const command: fc.Arbitrary<Command> = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), object: fc.integer({ min: 0, max: 5 }), maxAttempts: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('set-during' as const), object: fc.integer({ min: 0, max: 5 }), maxAttempts: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('call' as const), object: fc.integer({ min: 0, max: 5 }), fails: fc.boolean() }),
  );

  it('attempts = maxAttempts at the first failure; a success takes one attempt (6 objects, more than the ring holds)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60 }), async (commands) => {
        const objects: RetryOptions[] = Array.from({ length: 6 }, () => ({ maxAttempts: 2, backoff: constantBackoff() }));
        for (const c of commands) {
          const options = objects[c.object]!;
          if (c.kind === 'set') {
            options.maxAttempts = c.maxAttempts;
          } else if (c.kind === 'set-during') {
            // Edited while the call runs, before its first attempt fails: the failure reads the new value.
            let calls = 0;
            await retry(() => {
              calls++;
              if (calls === 1) options.maxAttempts = c.maxAttempts;
              return Promise.reject(transient());
            }, options).catch(() => undefined);
            expect(calls).toBe(c.maxAttempts);
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
