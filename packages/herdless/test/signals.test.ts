// Signals shared by many calls and attempts: nothing a call or an attempt adds to the caller's
// signal outlives it, and many concurrent calls on one signal stay below Node.js's listener warning.
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, constantBackoff, retry } from 'herdless';
import { withRetry } from 'herdless/http';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after full collections (several: finalizers and weak cells take more than one). */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

const transient = (): Error => Object.assign(new Error('blip'), { code: 'ECONNRESET' });
const MiB = 2 ** 20;

describe('100,000 attempts on one long-lived caller signal', () => {
  it('withRetry with attemptTimeoutMs: heap growth ≤ 1 MiB after GC, listener count back to where it started', async () => {
    const caller = new AbortController().signal;
    const clock = new ManualClock();
    let attempts = 0;
    let succeedAt = 5000;
    const fakeFetch = (_input: unknown, init?: RequestInit): Promise<Response> => {
      attempts++;
      // The attempt's signal is live and not the caller's (the attempt has its own timeout).
      if (init?.signal === caller || init?.signal?.aborted !== false) throw new Error('unexpected signal');
      return Promise.resolve(new Response(null, { status: attempts < succeedAt ? 503 : 200 }));
    };
    const api = withRetry(fakeFetch, { clock, maxAttempts: 100_000, attemptTimeoutMs: 5000, backoff: constantBackoff() });
    const listenersBefore = getEventListeners(caller, 'abort').length;
    await api('http://127.0.0.1:9/warm-up', { signal: caller }); // a first call warms everything up
    attempts = 0;
    succeedAt = 100_000;
    const before = await settledHeap();
    const res = await api('http://127.0.0.1:9/', { signal: caller });
    expect([res.status, attempts]).toEqual([200, 100_000]);
    const after = await settledHeap();
    expect(getEventListeners(caller, 'abort').length).toBe(listenersBefore);
    expect(after - before).toBeLessThanOrEqual(1 * MiB);
    expect(clock.pending).toBe(0);
  });

  it('retry() with attemptTimeoutMs and deadlineMs, each attempt reading ctx.signal: the same', async () => {
    const caller = new AbortController().signal;
    const clock = new ManualClock();
    // One error for every attempt: a fresh Error's stack trace would only slow the test down.
    const blip = transient();
    const run = (attempts: number) =>
      retry(
        ({ attempt, signal }) => {
          if (signal === caller || signal.aborted) throw new Error('unexpected signal');
          return attempt < attempts ? Promise.reject(blip) : attempt;
        },
        { clock, signal: caller, maxAttempts: 100_000, attemptTimeoutMs: 5000, deadlineMs: 1e9, backoff: constantBackoff() },
      );
    await run(5000);
    const before = await settledHeap();
    expect(await run(100_000)).toBe(100_000);
    const after = await settledHeap();
    expect(getEventListeners(caller, 'abort')).toHaveLength(0);
    expect(after - before).toBeLessThanOrEqual(1 * MiB);
  });

  it('the response withRetry returns still follows the caller\'s signal (its body), until the caller aborts', async () => {
    const controller = new AbortController();
    const seen: AbortSignal[] = [];
    const fakeFetch = (_input: unknown, init?: RequestInit): Promise<Response> => {
      seen.push(init!.signal!);
      return Promise.resolve(new Response('body', { status: seen.length === 1 ? 503 : 200 }));
    };
    const res = await withRetry(fakeFetch, { clock: new ManualClock(), attemptTimeoutMs: 1000, backoff: constantBackoff() })('http://127.0.0.1:9/', { signal: controller.signal });
    expect(res.status).toBe(200);
    expect(seen.map((s) => s.aborted)).toEqual([false, false]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort('stop');
    expect(seen[1]!.aborted).toBe(true);
    expect(seen[1]!.reason).toBe('stop');
    expect(seen[0]!.aborted).toBe(false); // the retried attempt's link was dropped with its attempt
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('many concurrent calls on one AbortSignal: no MaxListenersExceededWarning', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => void warnings.push(w);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });
  /** Warnings are emitted on the next tick. */
  const maxListenerWarnings = async (): Promise<string[]> => {
    await new Promise((r) => setImmediate(r));
    return warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message);
  };

  it.each([11, 200])('%i retry() calls: one listener while they wait, the abort reaches each, no warning', async (n) => {
    const controller = new AbortController();
    const clock = new ManualClock();
    const calls = Array.from({ length: n }, () => retry(() => Promise.reject(transient()), { clock, signal: controller.signal, backoff: constantBackoff({ delayMs: 1000 }) }).catch((e: unknown) => e));
    await clock.advance(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort('shutdown');
    expect(await Promise.all(calls)).toEqual(new Array(n).fill('shutdown'));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.pending).toBe(0);
    expect(await maxListenerWarnings()).toEqual([]);
  });

  it.each([11, 200])('%i breaker.execute() calls: one listener, all settle, none left, no warning', async (n) => {
    const controller = new AbortController();
    const breaker = circuitBreaker();
    const releases: (() => void)[] = [];
    const calls = Array.from({ length: n }, (_, i) => breaker.execute(() => new Promise<number>((resolve) => releases.push(() => resolve(i))), { signal: controller.signal }));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    for (const release of releases.slice(0, n - 1)) release();
    await Promise.all(calls.slice(0, n - 1));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort('gone');
    await expect(calls[n - 1]).rejects.toBe('gone');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(await maxListenerWarnings()).toEqual([]);
  });

  it('retry() and breaker.execute() mixed on one signal: one listener, calls that end leave it to the rest', async () => {
    const controller = new AbortController();
    const clock = new ManualClock();
    const breaker = circuitBreaker();
    const waiting = retry(() => Promise.reject(transient()), { clock, signal: controller.signal, backoff: constantBackoff({ delayMs: 10 }), maxAttempts: 2 }).catch((e: unknown) => e);
    let release!: () => void;
    const executing = breaker.execute(() => new Promise<void>((r) => (release = r)), { signal: controller.signal });
    await clock.advance(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await clock.advance(10);
    await waiting;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    release();
    await executing;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
