/**
 * No composition of herdless layers multiplies attempts: against a real loopback server that always
 * refuses, a call sends at most as many requests as the largest `maxAttempts` of its layers.
 */
import type http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { circuitBreaker, constantBackoff, consecutiveFailures, isGivenUp, isRetryError, markDoNotRetry, retry } from 'herdless';
import { DO_NOT_RETRY_HEADER, HttpStatusError, isHttpStatusError, retryInfo, throwIfNotOk, withRetry } from 'herdless/http';
import { startLoopback, stopLoopback } from './support/loopback.js';

const immediate = constantBackoff({ delayMs: 0 });

/** A node:http server on 127.0.0.1 answering every request with `status` (and `headers`); it counts requests. */
let server: http.Server;
let origin: string;
let requests = 0;
let status = 429;
let headers: Record<string, string> = {};

beforeAll(async () => {
  ({ server, origin } = await startLoopback((req, res) => {
    requests++;
    req.resume();
    res.writeHead(status, headers).end('no');
  }));
});

afterAll(() => stopLoopback(server));

beforeEach(() => {
  requests = 0;
  status = 429;
  headers = {};
});

describe('a given-up response is never retried again', () => {
  it('withRetry (3) inside withRetry (4), always 429: 3 requests; the outer stops with do-not-retry', async () => {
    const outer = withRetry(withRetry(fetch, { maxAttempts: 3, backoff: immediate }), { maxAttempts: 4, backoff: immediate });
    const res = await outer(`${origin}/x`);
    expect(res.status).toBe(429);
    expect(requests).toBe(3);
    expect(retryInfo(res)).toMatchObject({ attempts: 1, reason: 'do-not-retry' });
    expect(isGivenUp(res)).toBe(true);
    await res.text();
  });

  it('retry() (4) around withRetry (3) with throwIfNotOk, always 429: 3 requests, a RetryError do-not-retry', async () => {
    const api = withRetry(fetch, { maxAttempts: 3, backoff: immediate });
    const error: unknown = await retry(async () => throwIfNotOk(await api(`${origin}/x`)), { maxAttempts: 4, backoff: immediate }).catch((e: unknown) => e);
    expect(requests).toBe(3);
    expect(isRetryError(error) && error.reason).toBe('do-not-retry');
    expect(isRetryError(error) && error.attempts).toBe(1);
    const cause = isRetryError(error) ? error.cause : undefined;
    expect(isHttpStatusError(cause) && cause.status).toBe(429);
    expect(isGivenUp(cause)).toBe(true);
  });

  it('the README\'s old pattern, an error built by hand around the response, is recognised too', async () => {
    const api = withRetry(fetch, { maxAttempts: 3, backoff: immediate });
    const error: unknown = await retry(
      async () => {
        const res = await api(`${origin}/x`);
        if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status, response: res });
        return res;
      },
      { maxAttempts: 4, backoff: immediate },
    ).catch((e: unknown) => e);
    expect(requests).toBe(3);
    expect(isRetryError(error) && error.reason).toBe('do-not-retry');
  });

  it('retry() inside retry(), the inner failure wrapped in the caller\'s own error (cause): 3 requests', async () => {
    const error: unknown = await retry(
      async () => {
        try {
          return await retry(async () => throwIfNotOk(await fetch(`${origin}/x`)), { maxAttempts: 3, backoff: immediate });
        } catch (inner) {
          throw new Error('inventory failed', { cause: inner });
        }
      },
      { maxAttempts: 4, backoff: immediate },
    ).catch((e: unknown) => e);
    expect(requests).toBe(3);
    expect(isRetryError(error) && error.reason).toBe('do-not-retry');
  });

  it('a response accepted as the result (404) is not given up, and an outer retry() retries its error', async () => {
    status = 404;
    const api = withRetry(fetch, { maxAttempts: 3, backoff: immediate });
    const res = await api(`${origin}/x`);
    expect(isGivenUp(res)).toBe(false);
    expect(retryInfo(res)).toMatchObject({ attempts: 1, reason: undefined });
    await res.text();
    const error: unknown = await retry(async () => throwIfNotOk(await api(`${origin}/x`)), {
      maxAttempts: 2,
      backoff: immediate,
      retryable: () => true,
    }).catch((e: unknown) => e);
    expect(requests).toBe(3);
    expect(isRetryError(error) && error.reason).toBe('exhausted');
  });
});

describe('the circuit breaker', () => {
  it('counts a response withRetry gave up on as a failure, by default; a 503 from a raw fetch stays a success', async () => {
    status = 503;
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }) });
    const api = withRetry(fetch, { maxAttempts: 2, backoff: immediate });
    const raw = await breaker.execute(() => fetch(`${origin}/x`));
    await raw.text();
    expect(breaker.state).toBe('closed');
    for (let i = 0; i < 2; i++) await (await breaker.execute(() => api(`${origin}/x`))).text();
    expect(breaker.state).toBe('open');
    expect(requests).toBe(5);
  });

  it('its own isResultFailure still decides when given', async () => {
    status = 503;
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), isResultFailure: () => false });
    await (await breaker.execute(() => withRetry(fetch, { maxAttempts: 1 })(`${origin}/x`))).text();
    expect(breaker.state).toBe('closed');
  });
});

describe('throwIfNotOk', () => {
  it('returns an ok response as it is', async () => {
    status = 200;
    const res = await fetch(`${origin}/x`);
    expect(throwIfNotOk(res)).toBe(res);
    await res.text();
  });

  it('keeps the status, the response, the Retry-After hint (ms), and marks X-Herdless-Retry: no', async () => {
    status = 503;
    headers = { 'retry-after': '2', [DO_NOT_RETRY_HEADER]: 'no' };
    const res = await fetch(`${origin}/x`);
    let thrown: unknown;
    try {
      throwIfNotOk(res);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(HttpStatusError);
    const error = thrown as HttpStatusError;
    expect([error.status, error.retryAfterMs, error.response === res, isGivenUp(error)]).toEqual([503, 2000, true, true]);
    await res.text();
  });

  it('a plain 503 from a raw fetch is not marked: retry() retries it', async () => {
    status = 503;
    const error: unknown = await retry(async () => throwIfNotOk(await fetch(`${origin}/x`)), { maxAttempts: 3, backoff: immediate }).catch((e: unknown) => e);
    expect(requests).toBe(3);
    expect(isRetryError(error) && error.reason).toBe('exhausted');
  });

  it.each([[undefined], [null], ['503'], [{ status: 503 }]])('rejects %j with an InvalidOptionError naming response', (value) => {
    expect(() => throwIfNotOk(value as never)).toThrow(/throwIfNotOk.*response/);
  });
});

describe('isGivenUp', () => {
  it.each([
    ['undefined', undefined, false],
    ['a string', 'x', false],
    ['a plain error', new Error('x'), false],
    ['a marked error', markDoNotRetry(new Error('x')), true],
    ['an error whose cause is marked', new Error('x', { cause: markDoNotRetry(new Error('y')) }), true],
    ['an error whose response is marked', Object.assign(new Error('x'), { response: markDoNotRetry({}) }), true],
    ['a cause two levels down', new Error('x', { cause: new Error('y', { cause: markDoNotRetry(new Error('z')) }) }), false],
  ])('%s → %s', (_name, value, expected) => {
    expect(isGivenUp(value)).toBe(expected);
  });
});

/** A layer: a call that resolves with a Response (or rejects), wrapping the layer below. */
type Call = () => Promise<Response>;
type LayerSpec = { kind: 'withRetry' | 'retry' | 'breaker'; maxAttempts: number };

function build(layers: readonly LayerSpec[]): Call {
  let call: Call = () => fetch(`${origin}/x`);
  for (const layer of layers) {
    const inner = call;
    if (layer.kind === 'withRetry') {
      const api = withRetry(() => inner(), { maxAttempts: layer.maxAttempts, backoff: immediate });
      call = () => api(`${origin}/x`);
    } else if (layer.kind === 'retry') {
      call = () => retry(async () => throwIfNotOk(await inner()), { maxAttempts: layer.maxAttempts, backoff: immediate });
    } else {
      // A fresh breaker per call (so it never opens across runs); it counts non-ok responses as failures.
      const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 100 }), isResultFailure: (r) => !(r as Response).ok });
      call = () => breaker.execute(() => inner());
    }
  }
  return call;
}

describe('property: random nestings of retry(), withRetry and the breaker never multiply attempts', () => {
  it('requests for one call ≤ the largest maxAttempts of any layer (depth ≤ 4, maxAttempts 1–5, real server)', async () => {
    const layer = fc.record({ kind: fc.constantFrom<LayerSpec['kind']>('withRetry', 'retry', 'breaker'), maxAttempts: fc.integer({ min: 1, max: 5 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(layer, { minLength: 1, maxLength: 4 }), fc.constantFrom(429, 503, 500), async (layers, answer) => {
        requests = 0;
        status = answer;
        const result = await build(layers)().then(
          async (res) => {
            await res.text();
            return res.status;
          },
          (error: unknown) => error,
        );
        const retrying = layers.filter((l) => l.kind !== 'breaker').map((l) => l.maxAttempts);
        const bound = Math.max(1, ...retrying);
        expect(requests).toBeLessThanOrEqual(bound);
        // The innermost retrying layer does all its attempts: the bound is reached by that layer alone.
        const innermost = layers.find((l) => l.kind !== 'breaker');
        expect(requests).toBe(innermost?.maxAttempts ?? 1);
        // Whatever the nesting, the call ends with the refusal, as a response or a give-up.
        if (typeof result === 'number') expect(result).toBe(answer);
        else expect(isGivenUp(result) || isHttpStatusError(result)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});
