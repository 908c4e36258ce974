/** What is particular to the undici interceptor and the axios adapter (the shared behaviour is in http-clients.test.ts). */
import axios from 'axios';
import { Agent, Pool, fetch as undiciFetch, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { constantBackoff, isInvalidOptionError, isRetryError, retry } from 'herdless';
import { retryInfo, withRetry } from 'herdless/http';
import { retryAdapter } from 'herdless/axios';
import { retryInterceptor } from 'herdless/undici';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

const fast = { maxAttempts: 3, backoff: constantBackoff() };

function invalid(make: () => unknown): { message: string; field: string; value: unknown } {
  try {
    make();
  } catch (error) {
    expect(isInvalidOptionError(error)).toBe(true);
    return error as { message: string; field: string; value: unknown };
  }
  throw new Error('no error');
}

describe('options are checked when the interceptor or the adapter is made', () => {
  it.each([
    [() => retryInterceptor({ maxAttempts: 0 }), 'retryInterceptor', 'maxAttempts', 0],
    [() => retryInterceptor({ retryStatuses: [99] }), 'retryInterceptor', 'retryStatuses', 99],
    [() => retryInterceptor({ bogus: 1 } as never), 'retryInterceptor', 'bogus', 1],
    [() => retryInterceptor({ telemetry: {} as never }), 'retryInterceptor', 'telemetry', {}],
    [() => retryAdapter({ adapter: 1 as never }), 'retryAdapter', 'adapter', 1],
    [() => retryAdapter({ retryMethods: ['G ET'] }), 'retryAdapter', 'retryMethods', 'G ET'],
    [() => retryAdapter({ signal: AbortSignal.abort() } as never), 'retryAdapter', 'signal', expect.anything()],
  ])('case %#: %s', (make, owner, field, value) => {
    const error = invalid(make);
    expect(error).toMatchObject({ field, value });
    expect(error.message.startsWith(`${owner}: `)).toBe(true);
  });
});

describe('undici', () => {
  it('a 1 MiB body after a discarded 503 arrives whole through a Pool, with backpressure', async () => {
    const big = Buffer.alloc(1024 * 1024, 7);
    server.script([{ status: 503, body: 'busy' }, { status: 200, body: big }]);
    const pool = new Pool(server.origin);
    try {
      const dispatcher = pool.compose(retryInterceptor(fast));
      const res = await request(`${server.origin}/big`, { dispatcher });
      expect(res.statusCode).toBe(200);
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        // A slow reader: undici pauses the socket and resumes it through the interceptor's controller.
        await new Promise((r) => setImmediate(r));
      }
      expect(Buffer.concat(chunks).equals(big)).toBe(true);
      expect(server.requests).toHaveLength(2);
    } finally {
      await pool.close();
    }
  });

  it('headers given as a flat array keep their Idempotency-Key: the POST is retried with it', async () => {
    server.script([{ status: 503 }, { status: 201, body: 'made' }]);
    const agent = new Agent();
    try {
      const dispatcher = agent.compose(retryInterceptor(fast));
      const res = await request(`${server.origin}/orders`, { dispatcher, method: 'POST', body: 'o', headers: ['Idempotency-Key', 'k-9', 'x-a', '1'] });
      expect(res.statusCode).toBe(201);
      expect(await res.body.text()).toBe('made');
      expect(server.requests.map((r) => [r.headers['idempotency-key'], r.headers['x-a'], r.body.toString()])).toEqual([
        ['k-9', '1', 'o'],
        ['k-9', '1', 'o'],
      ]);
    } finally {
      await agent.close();
    }
  });

  it('an idempotency key generator that returns no key fails that request with an InvalidOptionError; nothing is sent', async () => {
    const agent = new Agent();
    try {
      const dispatcher = agent.compose(retryInterceptor({ ...fast, idempotencyKey: () => '' }));
      const error = await request(`${server.origin}/orders`, { dispatcher, method: 'POST', body: 'o' }).catch((e: unknown) => e);
      expect(isInvalidOptionError(error)).toBe(true);
      expect(error).toMatchObject({ field: 'idempotencyKey', value: '' });
      expect(server.requests).toHaveLength(0);
    } finally {
      await agent.close();
    }
  });

  it('the give-up mark: a retrying fetch on a retrying dispatcher (4 around 3) sends 3 requests, not 12', async () => {
    server.script([], { status: 503, body: 'busy' });
    const agent = new Agent();
    try {
      const dispatcher = agent.compose(retryInterceptor(fast));
      const outer = withRetry((input, init) => undiciFetch(input as string, { ...(init as object), dispatcher }) as unknown as Promise<Response>, { ...fast, maxAttempts: 4 });
      const res = await outer(`${server.origin}/`);
      expect([res.status, await res.text(), res.headers.get('x-herdless-retry')]).toEqual([503, 'busy', 'no']);
      expect(retryInfo(res)).toMatchObject({ attempts: 1, reason: 'do-not-retry' });
      expect(server.requests).toHaveLength(3);
      // A response accepted as the result carries no mark.
      server.script([{ status: 503 }, { status: 200, body: 'ok' }]);
      const ok = await request(`${server.origin}/`, { dispatcher });
      expect([ok.statusCode, await ok.body.text(), ok.headers['x-herdless-retry']]).toEqual([200, 'ok', undefined]);
    } finally {
      await agent.close();
    }
  });

  it('onGiveUp receives the response head', async () => {
    server.script([], { status: 503, headers: { 'x-why': 'busy' }, body: 'b' });
    const heads: unknown[] = [];
    const agent = new Agent();
    try {
      const dispatcher = agent.compose(retryInterceptor({ ...fast, maxAttempts: 2, onGiveUp: (e) => void heads.push([e.reason, e.response?.status, e.response?.headers['x-why']]) }));
      const res = await request(`${server.origin}/`, { dispatcher });
      expect([res.statusCode, await res.body.text()]).toEqual([503, 'b']);
      expect(heads).toEqual([['exhausted', 503, 'busy']]);
    } finally {
      await agent.close();
    }
  });
});

describe('axios', () => {
  it('a validateStatus that accepts 503 resolves with the last 503; retryInfo says why', async () => {
    server.script([], { status: 503, body: 'busy' });
    const api = axios.create({ adapter: retryAdapter(fast), validateStatus: () => true });
    const res = await api.get(`${server.origin}/`);
    expect([res.status, res.data]).toEqual([503, 'busy']);
    expect(retryInfo(res)).toMatchObject({ attempts: 3, reason: 'exhausted' });
    expect(res.config.url).toBe(`${server.origin}/`);
    expect(server.requests).toHaveLength(3);
  });

  it('by default the last 503 rejects as axios does: an AxiosError with the response (ERR_BAD_RESPONSE)', async () => {
    server.script([], { status: 503, body: 'busy' });
    const api = axios.create({ adapter: retryAdapter(fast) });
    const error = await api.get(`${server.origin}/`).catch((e: unknown) => e);
    expect(axios.isAxiosError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'ERR_BAD_RESPONSE', response: { status: 503 } });
    expect(retryInfo((error as { response: object }).response)?.reason).toBe('exhausted');
  });

  it('the give-up mark: retry() (4) around the adapter (3) sends 3 requests, not 12', async () => {
    server.script([], { status: 503, body: 'busy' });
    const api = axios.create({ adapter: retryAdapter(fast) });
    const error = await retry(() => api.get(`${server.origin}/`), { ...fast, maxAttempts: 4 }).catch((e: unknown) => e);
    expect(isRetryError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'do-not-retry', attempts: 1, cause: { response: { status: 503 } } });
    expect(server.requests).toHaveLength(3);
  });

  it('a legacy cancelToken cancels the wait: the request rejects with a cancel', async () => {
    server.script([{ status: 503, headers: { 'retry-after': '30' } }]);
    const source = axios.CancelToken.source();
    const api = axios.create({ adapter: retryAdapter(fast) });
    const pending = api.get(`${server.origin}/`, { cancelToken: source.token }).catch((e: unknown) => e);
    await server.waitForRequests(1);
    await server.requests[0]!.closed;
    source.cancel('enough');
    const error = await pending;
    expect(axios.isCancel(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a JSON body (transformed once) is sent whole on every attempt; the response is parsed as usual', async () => {
    server.script([{ status: 502 }, { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }]);
    const api = axios.create({ adapter: retryAdapter(fast) });
    const res = await api.put(`${server.origin}/doc`, { n: 1 });
    expect(res.data).toEqual({ ok: true });
    expect(server.requests.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":1}']);
  });
});
