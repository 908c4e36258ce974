import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { constantBackoff } from 'herdless';
import { ATTEMPT_HEADER, withRetry } from 'herdless/http';
import { invalidOption } from './support/invalid-option.js';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

const immediate = constantBackoff({ delayMs: 0 });
let server: ScriptedServer;

beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

describe('the attempt header', () => {
  it('is x-herdless-attempt, absent on the first attempt, 2 and 3 on the retries', async () => {
    server.script([{ status: 503 }, { status: 503 }, { status: 200 }]);
    const res = await withRetry(fetch, { maxAttempts: 3, backoff: immediate })(`${server.origin}/a`);
    expect(res.status).toBe(200);
    expect(ATTEMPT_HEADER).toBe('x-herdless-attempt');
    expect(server.requests.map((r) => r.headers[ATTEMPT_HEADER])).toEqual([undefined, '2', '3']);
  });

  it('keeps the caller\'s headers, the idempotency key and a Request\'s own headers on every attempt', async () => {
    server.script([{ status: 503 }, { status: 201 }]);
    const api = withRetry(fetch, { maxAttempts: 2, backoff: immediate, idempotencyKey: () => '"k1"' });
    const request = new Request(`${server.origin}/orders`, { method: 'POST', body: 'x', headers: { 'x-tenant': 't1' } });
    await api(request);
    expect(server.requests.map((r) => [r.headers['x-tenant'], r.headers['idempotency-key'], r.headers[ATTEMPT_HEADER], r.body.toString()])).toEqual([
      ['t1', '"k1"', undefined, 'x'],
      ['t1', '"k1"', '2', 'x'],
    ]);
  });

  it('can be renamed (any case) or turned off', async () => {
    server.script([{ status: 503 }, { status: 503 }]);
    await withRetry(fetch, { maxAttempts: 2, backoff: immediate, attemptHeader: 'X-Attempt' })(`${server.origin}/a`, { headers: { accept: 'text/plain' } });
    expect(server.requests.map((r) => [r.headers['x-attempt'], r.headers[ATTEMPT_HEADER], r.headers.accept])).toEqual([
      [undefined, undefined, 'text/plain'],
      ['2', undefined, 'text/plain'],
    ]);
    server.script([{ status: 503 }, { status: 503 }]);
    await withRetry(fetch, { maxAttempts: 2, backoff: immediate, attemptHeader: false })(`${server.origin}/b`);
    expect(server.requests.slice(2).map((r) => r.headers[ATTEMPT_HEADER])).toEqual([undefined, undefined]);
  });

  it.each([
    ['', ''],
    ['has space', 'has space'],
    [true, true],
    [3, 3],
  ])('attemptHeader %j → InvalidOptionError naming attemptHeader', (value, shown) => {
    const error = invalidOption(() => withRetry(fetch, { attemptHeader: value as never }));
    expect([error.field, error.value]).toEqual(['attemptHeader', shown]);
  });
});

describe('the attempt header in a browser (a global location with an origin)', () => {
  const PAGE = 'https://app.example';
  /** Headers of each attempt a fake fetch saw, with `location` set as in a page at `origin`. */
  async function attemptsSeen(origin: string, url: string, options: Parameters<typeof withRetry>[1] = {}): Promise<(string | null)[]> {
    const seen: (string | null)[] = [];
    const g = globalThis as { location?: unknown };
    g.location = { origin };
    try {
      const fakeFetch = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
        seen.push(new Headers(init?.headers).get('x-herdless-attempt') ?? new Headers(init?.headers).get('x-attempt'));
        return new Response(null, { status: seen.length < 3 ? 503 : 200 });
      };
      await withRetry(fakeFetch, { maxAttempts: 3, backoff: immediate, ...options })(url);
    } finally {
      delete g.location;
    }
    return seen;
  }

  it('same-origin requests (absolute or relative) carry the default header on retries', async () => {
    expect(await attemptsSeen(PAGE, `${PAGE}/api`)).toEqual([null, '2', '3']);
    expect(await attemptsSeen(PAGE, '/api')).toEqual([null, '2', '3']);
  });

  it('cross-origin requests do not: a retry must not need a preflight the first attempt did not', async () => {
    expect(await attemptsSeen(PAGE, 'https://api.example/orders')).toEqual([null, null, null]);
    expect(await attemptsSeen(PAGE, 'http://app.example/orders')).toEqual([null, null, null]); // another scheme is another origin
    expect(await attemptsSeen('null', '/api')).toEqual([null, null, null]); // an opaque origin (file:, sandboxed)
  });

  it('a header the caller named is sent cross-origin too', async () => {
    expect(await attemptsSeen(PAGE, 'https://api.example/orders', { attemptHeader: 'x-herdless-attempt' })).toEqual([null, '2', '3']);
    expect(await attemptsSeen(PAGE, 'https://api.example/orders', { attemptHeader: 'X-Attempt' })).toEqual([null, '2', '3']);
  });
});
