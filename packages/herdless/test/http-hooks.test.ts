/**
 * beforeAttempt, refreshStatuses and per-request options, one suite for the three clients (fetch,
 * undici, axios), against a real loopback server that checks a bearer token. Every wait is 0 ms
 * (a constant backoff of 0, the refresh's own 0 ms), so no clock needs driving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, consecutiveFailures, constantBackoff, isInvalidOptionError, isRetryError, type CircuitBreaker } from 'herdless';
import { withRetry, type BeforeAttemptHook, type HttpRetryOptions } from 'herdless/http';
import { retryAdapter } from 'herdless/axios';
import { retryInterceptor } from 'herdless/undici';
import { httpClients } from './support/http-clients.js';

/** What the server saw: the path and the Authorization header of every request. */
let seen: Array<{ path: string; authorization: string | undefined; attempt: string | undefined }>;
/** The token the server accepts now; any other gets a 401. */
let valid: string;
/** Paths that always answer 503. */
const BUSY = '/busy';
let server: Server;
let origin = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization, attempt: req.headers['x-herdless-attempt'] as string | undefined });
    if (req.url === BUSY) {
      res.writeHead(503).end('busy');
      return;
    }
    if (req.headers.authorization !== `Bearer ${valid}`) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('stale token');
      return;
    }
    res.writeHead(200).end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
  valid = 'new';
});

/** The auth-refresh example of docs/http.md: a token store that refreshes on a 401. */
function tokenStore(): { current: string; refreshes: number; beforeAttempt: BeforeAttemptHook } {
  const store = {
    current: 'old',
    refreshes: 0,
    beforeAttempt: (async ({ status }) => {
      if (status === 401) {
        store.refreshes++;
        store.current = await Promise.resolve('new'); // a real app asks its identity provider here
      }
      return { headers: { authorization: `Bearer ${store.current}` } };
    }) as BeforeAttemptHook,
  };
  return store;
}

const base: HttpRetryOptions<never> = { maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) };

for (const client of httpClients(() => origin)) {
  describe(`${client.name}: beforeAttempt and refreshStatuses`, () => {
    it('auth refresh: the old token gets a 401 once, beforeAttempt refreshes it, the resend is a 200', async () => {
      const tokens = tokenStore();
      const c = client.make({ ...base, beforeAttempt: tokens.beforeAttempt, refreshStatuses: [401] });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(out).toEqual({ status: 200, body: 'hello', reason: undefined });
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
      // The resend is an attempt like any other: it carries the attempt header.
      expect(seen.map((r) => r.attempt)).toEqual([undefined, '2']);
      expect(tokens.refreshes).toBe(1);
    });

    it('a second 401 is the result: one resend per request, however many attempts are left', async () => {
      valid = 'never';
      const tokens = tokenStore();
      const c = client.make({ ...base, maxAttempts: 5, beforeAttempt: tokens.beforeAttempt, refreshStatuses: [401] });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(out.status).toBe(401);
      expect(out.body).toBe('stale token');
      expect(seen).toHaveLength(2);
      expect(tokens.refreshes).toBe(1);
    });

    it('without refreshStatuses a 401 is the result at once; beforeAttempt still sets the header of the one attempt', async () => {
      const tokens = tokenStore();
      const c = client.make({ ...base, beforeAttempt: tokens.beforeAttempt });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(out.status).toBe(401);
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer old']);
      expect(tokens.refreshes).toBe(0);
    });

    it('beforeAttempt runs before every attempt, with the previous status; its header replaces the caller’s', async () => {
      const heard: Array<[number, number | undefined]> = [];
      const c = client.make({
        ...base,
        beforeAttempt: ({ attempt, status }) => {
          heard.push([attempt, status]);
          return { headers: { Authorization: `Bearer sig-${attempt}` } };
        },
      });
      const out = await c.send({ path: BUSY, headers: { authorization: 'Bearer caller' } });
      await c.close();
      expect(out.status).toBe(503);
      expect(heard).toEqual([
        [1, undefined],
        [2, 503],
        [3, 503],
      ]);
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer sig-1', 'Bearer sig-2', 'Bearer sig-3']);
    });

    it('a beforeAttempt that throws fails the request, unretried, with its error as the cause; nothing is sent', async () => {
      const failure = new Error('identity provider down');
      const c = client.make({
        ...base,
        beforeAttempt: () => {
          throw failure;
        },
      });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(seen).toHaveLength(0);
      expect(isRetryError(out.error)).toBe(true);
      expect((out.error as Error).cause).toBe(failure);
    });

    it.each([
      [{ headers: { 'bad name': 'x' } }, 'bad name'],
      [{ headers: { authorization: 'a\r\nx-injected: 1' } }, 'a\r\nx-injected: 1'],
      [{ headers: { authorization: 42 } }, 42],
      [{ url: 'http://elsewhere' }, { url: 'http://elsewhere' }],
      ['headers', 'headers'],
    ])('beforeAttempt returning %j fails the request with an InvalidOptionError naming beforeAttempt', async (change, value) => {
      const c = client.make({ ...base, beforeAttempt: () => change as never });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(seen).toHaveLength(0);
      const cause = (out.error as Error).cause;
      expect(isInvalidOptionError(cause)).toBe(true);
      expect((cause as { field: string }).field).toBe('beforeAttempt');
      expect((cause as { value: unknown }).value).toEqual(value);
    });
  });

  describe(`${client.name}: beforeAttempt and refreshStatuses through a circuit breaker`, () => {
    /** A breaker that opens at its first failure, for ten minutes (longer than any test). */
    const touchy = (): CircuitBreaker => circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000 });

    it('the 401 of stale credentials is a response to the breaker, not a failure: the resend goes through, the breaker stays closed', async () => {
      const breaker = touchy();
      const tokens = tokenStore();
      const c = client.make({ ...base, breaker, beforeAttempt: tokens.beforeAttempt, refreshStatuses: [401] });
      const out = await c.send({ path: '/me' });
      await c.close();
      expect(out).toEqual({ status: 200, body: 'hello', reason: undefined });
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
      expect(breaker.state).toBe('closed');
    });

    it('a beforeAttempt that throws is not a trial of the dependency: a half-open breaker does not close on it', async () => {
      const clock = new ManualClock(0);
      const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1_000 });
      let hookDown = false;
      const c = client.make({
        ...base,
        maxAttempts: 1,
        breaker,
        beforeAttempt: () => {
          if (hookDown) throw new Error('identity provider down');
          return { headers: { authorization: 'Bearer new' } };
        },
      });
      expect((await c.send({ path: BUSY })).status).toBe(503);
      expect(breaker.state).toBe('open');
      await clock.advance(1_000);
      hookDown = true;
      const out = await c.send({ path: '/me' });
      expect(isRetryError(out.error)).toBe(true);
      // Nothing was sent: the breaker has learnt nothing and is not closed by a failure of the caller's own.
      expect(seen).toHaveLength(1);
      expect(breaker.state).not.toBe('closed');
      hookDown = false;
      expect((await c.send({ path: '/me' })).status).toBe(200);
      await c.close();
      expect(breaker.state).toBe('closed');
    });

    it('a retried status still counts: the first 503 opens the breaker and the retry is refused unsent', async () => {
      const breaker = touchy();
      const tokens = tokenStore();
      const c = client.make({ ...base, breaker, beforeAttempt: tokens.beforeAttempt, refreshStatuses: [401] });
      const out = await c.send({ path: BUSY });
      await c.close();
      expect(seen).toHaveLength(1);
      expect(out.reason).toBe('circuit-open');
      expect(breaker.state).toBe('open');
    });
  });

  describe(`${client.name}: per-request options in the client's idiom`, () => {
    it('maxAttempts 1 for one request, the adapter’s 3 for the next', async () => {
      const c = client.make(base);
      expect((await c.send({ path: BUSY, retry: { maxAttempts: 1 } })).status).toBe(503);
      expect(seen).toHaveLength(1);
      expect((await c.send({ path: BUSY })).status).toBe(503);
      expect(seen).toHaveLength(4);
      await c.close();
    });

    it('a beforeAttempt of one request replaces the adapter’s (auth refresh configured per request)', async () => {
      const tokens = tokenStore();
      const c = client.make({ ...base, beforeAttempt: () => ({ headers: { authorization: 'Bearer adapter' } }), refreshStatuses: [401] });
      const out = await c.send({ path: '/me', retry: { beforeAttempt: tokens.beforeAttempt } });
      await c.close();
      expect(out.status).toBe(200);
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
    });

    it('idempotencyKey per request makes one POST retryable', async () => {
      const c = client.make(base);
      await c.send({ path: BUSY, method: 'POST', body: 'x' });
      expect(seen).toHaveLength(1);
      await c.send({ path: BUSY, method: 'POST', body: 'x', retry: { idempotencyKey: () => '"k-1"' } });
      expect(seen).toHaveLength(4);
      await c.close();
    });

    it.each([
      [{ maxAttempts: 0 }, 'maxAttempts', 0],
      [{ maxAttempts: '2' }, 'maxAttempts', '2'],
      [{ deadlineMs: -1 }, 'deadlineMs', -1],
      [{ budget: {} }, 'budget', {}],
      [{ maxAtempts: 2 }, 'maxAtempts', 2],
      [{ beforeAttempt: 'x' }, 'beforeAttempt', 'x'],
      [{ idempotencyKey: 'yes' }, 'idempotencyKey', 'yes'],
    ])('%j fails that request with an InvalidOptionError naming %s; nothing is sent', async (options, field, value) => {
      const c = client.make(base);
      const out = await c.send({ path: '/me', retry: options as never });
      await c.close();
      expect(seen).toHaveLength(0);
      expect(isInvalidOptionError(out.error)).toBe(true);
      expect((out.error as { field: string }).field).toBe(field);
      expect((out.error as { value: unknown }).value).toEqual(value);
    });
  });
}

describe('refreshStatuses is checked when the adapter is made', () => {
  const makers = [
    (o: HttpRetryOptions<never>) => withRetry(fetch, o as HttpRetryOptions),
    (o: HttpRetryOptions<never>) => retryInterceptor(o as never),
    (o: HttpRetryOptions<never>) => retryAdapter(o as never),
  ];
  it.each([
    [{ refreshStatuses: [401] }, [401]],
    [{ refreshStatuses: [503], beforeAttempt: () => undefined }, 503],
    [{ refreshStatuses: [99], beforeAttempt: () => undefined }, 99],
    [{ refreshStatuses: 401, beforeAttempt: () => undefined }, 401],
  ])('%j → InvalidOptionError naming refreshStatuses', (options, value) => {
    for (const make of makers) {
      let error: unknown;
      try {
        make(options as never);
      } catch (e) {
        error = e;
      }
      expect(isInvalidOptionError(error)).toBe(true);
      expect((error as { field: string }).field).toBe('refreshStatuses');
      expect((error as { value: unknown }).value).toEqual(value);
    }
  });
  it('beforeAttempt must be a function', () => {
    for (const make of makers) expect(() => make({ beforeAttempt: 'x' } as never)).toThrow(/beforeAttempt/);
  });
});
