import { afterEach, describe, expect, it, vi } from 'vitest';
import { isInvalidOptionError, isRetryError, type InvalidOptionError, type RetryError } from 'herdless';
import { fetchWithRetry, newIdempotencyKey, withRetry, type HttpRetryOptions } from 'herdless/http';

const neverCalled = (): Promise<Response> => {
  throw new Error('fetch must not be called');
};

describe('withRetry: invalid options throw InvalidOptionError naming the field and the value', () => {
  const cases: { input: unknown; error: string }[] = [
    { input: { maxAttempts: 0 }, error: 'withRetry: maxAttempts must be ≥ 1, got 0' },
    { input: { maxRetryAfterMs: -1 }, error: 'withRetry: maxRetryAfterMs must be ≥ 0, got -1' },
    { input: { attemptTimeoutMs: 0 }, error: 'withRetry: attemptTimeoutMs must be > 0, got 0' },
    { input: { budget: {} }, error: 'withRetry: budget must be a RetryBudget (onAttempt, onSuccess, onFailure, allowRetry), got an object (Object)' },
    { input: { clock: Date }, error: 'withRetry: clock must be a Scheduler' },
    { input: { retryMethods: 'GET' }, error: 'withRetry: retryMethods must be an array of method names, got "GET"' },
    { input: { retryMethods: ['GE T'] }, error: 'withRetry: retryMethods must hold method names (HTTP tokens such as "GET"), got "GE T"' },
    { input: { retryStatuses: [503, 600] }, error: 'withRetry: retryStatuses must hold integer status codes in [100, 599], got 600' },
    { input: { retryStatuses: ['503'] }, error: 'withRetry: retryStatuses must hold integer status codes in [100, 599], got "503"' },
    { input: { retryStatuses: 503 }, error: 'withRetry: retryStatuses must be an array of status codes, got 503' },
    { input: { idempotencyKey: 'yes' }, error: 'withRetry: idempotencyKey must be a boolean or a function returning the key, got "yes"' },
    { input: { now: 0 }, error: 'withRetry: now must be a function, got 0' },
    { input: { onRetry: true }, error: 'withRetry: onRetry must be a function, got true' },
    { input: { onGiveUp: 'log' }, error: 'withRetry: onGiveUp must be a function, got "log"' },
    { input: { signal: 'x' }, error: 'withRetry: signal is per request: pass it in init (or in the Request), got "x"' },
    { input: { retryAfterMax: 1 }, error: 'withRetry: retryAfterMax is not an option of withRetry (check the spelling; options: maxAttempts, ' },
    { input: { bodyFactory: () => 'x' }, error: 'withRetry: bodyFactory is not an option of withRetry (check the spelling; options: ' },
    { input: 'fast', error: 'withRetry: options must be an object, got "fast"' },
  ];
  it.each(cases)('$input → $error', ({ input, error }) => {
    let thrown: unknown;
    try {
      withRetry(neverCalled, input as HttpRetryOptions);
    } catch (e) {
      thrown = e;
    }
    expect(isInvalidOptionError(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(error);
  });

  it('a fetch that is not a function', () => {
    expect(() => withRetry('fetch' as never)).toThrow('withRetry: fetch must be a function (e.g. fetch), got "fetch"');
  });
});

describe('per-request options: a bad one rejects (fetch never throws synchronously)', () => {
  const cases: { input: unknown; error: string }[] = [
    { input: { bodyFactory: 'x' }, error: 'withRetry: bodyFactory must be a function, got "x"' },
    { input: { idempotencyKey: 1 }, error: 'withRetry: idempotencyKey must be a boolean or a function returning the key, got 1' },
    { input: { budget: 2 }, error: 'withRetry: budget is not a per-request option (maxAttempts, backoff, maxRetryAfterMs, deadlineMs, attemptTimeoutMs, ignoreHints, idempotencyKey, beforeAttempt, bodyFactory), got 2' },
    { input: { maxAttempts: 0 }, error: 'withRetry: maxAttempts must be ≥ 1, got 0' },
  ];
  it.each(cases)('$input → $error', async ({ input, error }) => {
    const api = withRetry(neverCalled);
    let result: Promise<Response> | undefined;
    expect(() => (result = api('http://127.0.0.1:9/', undefined, input as never))).not.toThrow();
    const thrown = await result!.catch((e: unknown) => e);
    expect(isInvalidOptionError(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(error);
  });

  it.each([
    [1, 'got 1'],
    [{ toString: () => 'GET' }, 'got an object (Object)'],
    [null, 'got null'],
    ['GE T', 'got "GE T"'],
    ['', 'got ""'],
  ])('a non-method init.method (%j) rejects naming init.method, fetch never called', async (method, got) => {
    const api = withRetry(neverCalled);
    const thrown = await api('http://127.0.0.1:9/', { method: method as never }).catch((e: unknown) => e);
    expect(isInvalidOptionError(thrown)).toBe(true);
    expect((thrown as Error).message).toBe(`withRetry: init.method must be an HTTP method name such as "GET" (an RFC 9110 token), ${got}`);
  });

  it('an idempotency key generator that returns no string rejects', async () => {
    const api = withRetry(neverCalled, { idempotencyKey: () => '' });
    await expect(api('http://127.0.0.1:9/', { method: 'POST', body: 'x' })).rejects.toThrow('withRetry: idempotencyKey must return a non-empty string, got ""');
  });

  it('fetchWithRetry checks its options on each call (as a rejection)', async () => {
    await expect(fetchWithRetry('http://127.0.0.1:9/', undefined, { maxAttempts: 0 })).rejects.toThrow('fetchWithRetry: maxAttempts must be ≥ 1, got 0');
    await expect(fetchWithRetry('http://127.0.0.1:9/', undefined, { bodyFactory: 1 as never })).rejects.toThrow('fetchWithRetry: bodyFactory must be a function, got 1');
    await expect(fetchWithRetry('http://127.0.0.1:9/', undefined, { maxAttemps: 2 } as never)).rejects.toThrow('fetchWithRetry: maxAttemps is not an option of fetchWithRetry (did you mean maxAttempts? options: ');
  });
});

describe('a wrapped fetch that resolves to something other than a response', () => {
  it.each([
    ['not a response', 'got "not a response"'],
    [undefined, 'got undefined'],
    [null, 'got null'],
    [{ status: '200' }, 'got an object (Object)'],
  ])('%j: a fatal RetryError after one attempt, its cause naming fetch and the value', async (value, got) => {
    let calls = 0;
    const api = withRetry(async () => {
      calls++;
      return value as never;
    }, { maxAttempts: 3 });
    const thrown = await api('http://127.0.0.1:9/').catch((e: unknown) => e);
    expect(isRetryError(thrown)).toBe(true);
    expect((thrown as RetryError).reason).toBe('fatal');
    expect((thrown as RetryError).attempts).toBe(1);
    expect(calls).toBe(1);
    const cause = (thrown as RetryError).cause;
    expect(isInvalidOptionError(cause)).toBe(true);
    expect((cause as InvalidOptionError).field).toBe('fetch');
    expect((cause as Error).message).toBe(`withRetry: fetch must resolve to a Response (an object with a numeric status), ${got}`);
  });

  it('a test double with a numeric status is still a response', async () => {
    const api = withRetry(async () => ({ status: 200, ok: true, headers: new Headers() }) as Response);
    expect((await api('http://127.0.0.1:9/')).status).toBe(200);
  });
});

describe('newIdempotencyKey', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });
  const UUID_V4 = /^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/;

  it('a quoted random UUID (a Structured Fields string, as the draft specifies), unique per call', () => {
    const keys = new Set(Array.from({ length: 100 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(UUID_V4);
  });

  it('falls back to getRandomValues without randomUUID (browsers outside secure contexts)', () => {
    const real = globalThis.crypto;
    vi.stubGlobal('crypto', { getRandomValues: <T extends ArrayBufferView>(a: T): T => real.getRandomValues(a as never) });
    const keys = new Set(Array.from({ length: 100 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(UUID_V4);
  });

  it('without Web Crypto it throws, naming the way out', () => {
    vi.stubGlobal('crypto', undefined);
    expect(() => newIdempotencyKey()).toThrow('pass idempotencyKey: () => yourKey');
  });
});
