/**
 * herdless/axios reads each attempt as a stream (with axios's http and fetch adapters) and reads the
 * body only of the response the call returns — as axios itself would have read it: the caller's
 * `responseType`, `responseEncoding`, `maxContentLength`, `transformResponse`, and abort.
 */
import type http from 'node:http';
import axios, { AxiosError, type AxiosAdapter } from 'axios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constantBackoff } from 'herdless';
import { retryAdapter } from 'herdless/axios';
import { startLoopback, stopLoopback } from './support/loopback.js';

let server: http.Server;
let origin: string;
/** Per path, how many requests came, and the sockets they came on. */
const seen = new Map<string, { count: number; sockets: Set<unknown> }>();
let hold: Promise<void> = Promise.resolve();

beforeAll(async () => {
  ({ server, origin } = await startLoopback((req, res) => {
    req.resume();
    const path = req.url!.replace(/\?.*/, '');
    const entry = seen.get(path) ?? { count: 0, sockets: new Set() };
    seen.set(path, entry);
    entry.count++;
    entry.sockets.add(req.socket);
    const first = entry.count % 2 === 1;
    if (path === '/json') {
      if (first) res.writeHead(503, { 'content-type': 'text/plain' }).end('x'.repeat(10_000));
      else res.writeHead(200, { 'content-type': 'application/json' }).end('\ufeff{"ok":true}');
    } else if (path === '/always-503') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('still down');
    } else if (path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part');
      void hold.then(() => res.end('rest'));
    } else {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]));
    }
  }));
});

afterAll(async () => {
  await stopLoopback(server);
});

const options = { maxAttempts: 2, backoff: constantBackoff({ delayMs: 0 }) };

describe.each([
  ['http', axios.getAdapter('http')],
  ['fetch', axios.getAdapter('fetch')],
] as Array<[string, AxiosAdapter]>)('with axios\'s %s adapter', (name, adapter) => {
  const base = retryAdapter({ ...options, adapter });
  // The server's origin is known once beforeAll ran: the instance is made per test.
  const api = {
    get: (path: string, config?: Parameters<typeof axios.get>[1]) => axios.get(`${origin}${path}`, { ...config, adapter: base }),
  };

  it('the returned body is read as axios reads it: JSON parsed (BOM stripped), a 503 before it let go', async () => {
    const response = await api.get('/json');
    expect([response.status, response.data]).toEqual([200, { ok: true }]);
  });

  it('responseType arraybuffer: the bytes', async () => {
    const response = await api.get('/bytes', { responseType: 'arraybuffer' });
    expect([...new Uint8Array(response.data as ArrayBuffer)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    if (name === 'http') expect(Buffer.isBuffer(response.data)).toBe(true);
  });

  it('a 503 that is the result (retrying stopped) rejects with its body read', async () => {
    const error = (await api.get('/always-503').catch((e: unknown) => e)) as AxiosError;
    expect([error.response?.status, error.response?.data]).toEqual([503, 'still down']);
  });

  it('maxContentLength holds for the returned body', async () => {
    const error = (await api.get('/bytes', { responseType: 'arraybuffer', maxContentLength: 4 }).catch((e: unknown) => e)) as AxiosError;
    expect(error).toBeInstanceOf(AxiosError);
    expect(error.message).toBe('maxContentLength size of 4 exceeded');
  });

  it('an abort while the returned body is read: CanceledError', async () => {
    let release: () => void = () => undefined;
    hold = new Promise((resolve) => (release = resolve));
    const controller = new AbortController();
    const pending = api.get('/slow-body', { signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const error = await pending;
    release();
    expect(axios.isCancel(error)).toBe(true);
  });

  it('responseType stream: the caller gets the stream as axios gives it', async () => {
    const response = await api.get('/bytes', { responseType: 'stream' });
    const data = response.data as AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
    const chunks: number[] = [];
    for await (const chunk of data as AsyncIterable<Uint8Array>) chunks.push(...chunk);
    expect(chunks).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('a small discarded body is drained, so its connection carries the retry', () => {
  it('http adapter with a keep-alive agent: both attempts on one socket', async () => {
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const api = axios.create({ adapter: retryAdapter({ ...options, adapter: axios.getAdapter('http') }), baseURL: origin, httpAgent: agent });
    seen.delete('/json');
    const response = await api.get('/json');
    expect(response.data).toEqual({ ok: true });
    expect(seen.get('/json')).toMatchObject({ count: 2 });
    expect(seen.get('/json')!.sockets.size).toBe(1);
    agent.destroy();
  });
});
