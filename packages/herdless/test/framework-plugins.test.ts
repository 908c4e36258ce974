/**
 * herdless/fastify and herdless/hono against the real frameworks: a route held open fills the one
 * slot, the next request is shed (503, Retry-After, "don't retry" when it is a retry), the slot is
 * free again once the route answered, and a downstream give-up goes on with the mark.
 */
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { RetryError, constantBackoff } from 'herdless';
import { fastifyLoadShedder } from 'herdless/fastify';
import { throwIfNotOk, withRetry } from 'herdless/http';
import { honoLoadShedder } from 'herdless/hono';
import { PyRandom } from 'herdless/sim';
import { startLoopback, stopLoopback } from './support/loopback.js';

/** A promise the test opens when it likes. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('herdless/fastify', () => {
  it('sheds past maxInFlight with 503 + Retry-After, marks a shed retry, and frees the slot when the route answered', async () => {
    const app = Fastify();
    closers.push(() => app.close());
    await app.register(fastifyLoadShedder, { maxInFlight: 1, random: new PyRandom(1) });
    const held = gate();
    app.get('/slow', async () => {
      await held.wait;
      return 'slow done';
    });
    app.get('/fast', async () => 'fast');
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const slow = fetch(`${origin}/slow`);
    // Until the slow request holds its slot (bounded by turns, not a length of time: a busy machine
    // may take any time to deliver it).
    for (let i = 0; i < 1000 && app.loadShedder.stats().inFlight === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(app.loadShedder.stats().inFlight).toBe(1);
    const shed = await fetch(`${origin}/fast`);
    expect(shed.status).toBe(503);
    expect(['1', '2']).toContain(shed.headers.get('retry-after'));
    expect(shed.headers.get('x-herdless-retry')).toBeNull();
    expect(await shed.text()).toBe('overloaded\n');
    const retry = await fetch(`${origin}/fast`, { headers: { 'x-herdless-attempt': '2' } });
    expect(retry.status).toBe(503);
    expect(retry.headers.get('x-herdless-retry')).toBe('no');
    held.open();
    expect(await (await slow).text()).toBe('slow done');
    const after = await fetch(`${origin}/fast`);
    expect([after.status, await after.text()]).toEqual([200, 'fast']);
    expect(app.loadShedder.stats()).toMatchObject({ inFlight: 0, admitted: 2, shed: 2, shedDoNotRetry: 1 });
  });

  /** A downstream that answers 502 to everything, asking for a wait longer than a caller takes (120 s): withRetry() gives up at once. */
  async function failingDownstream(): Promise<{ url: string; api: typeof fetch }> {
    const { server, origin } = await startLoopback((req, res) => {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/plain', 'retry-after': '120' }).end('bad gateway');
    });
    closers.push(() => stopLoopback(server));
    return { url: `${origin}/db`, api: withRetry(fetch, { maxAttempts: 2, backoff: constantBackoff({ delayMs: 1 }) }) };
  }

  it('a route whose downstream call gave up answers with its status and "don\'t retry", thrown or returned', async () => {
    const { url, api } = await failingDownstream();
    const app = Fastify({ logger: false });
    closers.push(() => app.close());
    await app.register(fastifyLoadShedder, { maxInFlight: 4 });
    // What throwIfNotOk() throws for the given-up 502, and a RetryError with no status at all.
    app.get('/thrown', async () => throwIfNotOk(await api(url)).text());
    app.get('/exhausted', async () => {
      throw new RetryError('exhausted', 3, new Error('ECONNRESET'), 'all 3 attempts failed');
    });
    // The given-up Response itself, returned as it came.
    app.get('/returned', async () => api(url));
    app.get('/bug', async () => {
      throw new RetryError('fatal', 1, new TypeError('x is undefined'), 'a bug');
    });
    app.get('/plain', async () => {
      throw new Error('an ordinary failure');
    });
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const thrown = await fetch(`${origin}/thrown`);
    expect([thrown.status, thrown.headers.get('x-herdless-retry')]).toEqual([502, 'no']);
    const exhausted = await fetch(`${origin}/exhausted`);
    expect([exhausted.status, exhausted.headers.get('x-herdless-retry')]).toEqual([503, 'no']);
    const returned = await fetch(`${origin}/returned`);
    // The downstream's own answer goes on (its body, its Retry-After), with the mark added.
    expect([returned.status, returned.headers.get('x-herdless-retry'), returned.headers.get('retry-after'), await returned.text()]).toEqual([502, 'no', '120', 'bad gateway']);
    // Not give-ups: a bug wrapped by retry() and an ordinary failure stay fastify's 500, unmarked.
    for (const path of ['/bug', '/plain']) {
      const r = await fetch(`${origin}${path}`);
      expect([r.status, r.headers.get('x-herdless-retry')]).toEqual([500, null]);
    }
    expect(app.loadShedder.stats()).toMatchObject({ inFlight: 0, admitted: 5, givenUp: 3 });
    // What a caller using herdless does with the mark: it does not retry (one request, not 3).
    let calls = 0;
    const caller = withRetry(
      (input: RequestInfo | URL, init?: RequestInit) => {
        calls++;
        return fetch(input, init);
      },
      { maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }) },
    );
    expect((await caller(`${origin}/thrown`)).status).toBe(502);
    expect(calls).toBe(1);
  });

  it('propagate: false (the edge) keeps the downstream status without the mark; a custom error handler finds both on the reply', async () => {
    const { url, api } = await failingDownstream();
    const edge = Fastify({ logger: false });
    closers.push(() => edge.close());
    await edge.register(fastifyLoadShedder, { maxInFlight: 4, propagate: false });
    edge.get('/thrown', async () => throwIfNotOk(await api(url)).text());
    edge.get('/returned', async () => api(url));
    const edgeOrigin = await edge.listen({ host: '127.0.0.1', port: 0 });
    for (const path of ['/thrown', '/returned']) {
      const r = await fetch(`${edgeOrigin}${path}`);
      expect([r.status, r.headers.get('x-herdless-retry')]).toEqual([502, null]);
    }
    expect(edge.loadShedder.stats().givenUp).toBe(2);

    const app = Fastify({ logger: false });
    closers.push(() => app.close());
    await app.register(fastifyLoadShedder, { maxInFlight: 4 });
    const seen: [number, unknown][] = [];
    app.setErrorHandler(async (_error, _request, reply) => {
      seen.push([reply.statusCode, reply.getHeader('x-herdless-retry')]);
      return reply.send({ message: 'downstream unavailable' });
    });
    app.get('/thrown', async () => throwIfNotOk(await api(url)).text());
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const r = await fetch(`${origin}/thrown`);
    expect([r.status, r.headers.get('x-herdless-retry'), await r.json()]).toEqual([502, 'no', { message: 'downstream unavailable' }]);
    expect(seen).toEqual([[502, 'no']]);
  });

  it('refuses bad options when registered, naming the field', async () => {
    const app = Fastify();
    closers.push(() => app.close());
    await expect(app.register(fastifyLoadShedder, { maxInFlight: 0 })).rejects.toThrow(/maxInFlight/);
  });
});

describe('herdless/hono', () => {
  it('sheds past maxInFlight, marks a shed retry, frees the slot, and passes a downstream give-up on with the mark', async () => {
    const app = new Hono();
    const shedding = honoLoadShedder({ maxInFlight: 1, random: new PyRandom(1) });
    app.use('*', shedding);
    app.onError((_error, c) => c.text('internal', 500)); // quiet: Hono's default logs the error
    const held = gate();
    app.get('/slow', async (c) => {
      await held.wait;
      return c.text('slow done');
    });
    app.get('/fast', (c) => c.text('fast'));
    app.get('/downstream', () => {
      throw new RetryError('exhausted', 3, Object.assign(new Error('HTTP 502'), { status: 502 }), 'all 3 attempts failed');
    });
    const slow = app.request('/slow');
    await new Promise((resolve) => setTimeout(resolve, 10));
    const shed = await app.request('/fast');
    expect(shed.status).toBe(503);
    expect(['1', '2']).toContain(shed.headers.get('retry-after'));
    expect(shed.headers.get('x-herdless-retry')).toBeNull();
    const retry = await app.request('/fast', { headers: { 'x-herdless-attempt': '3' } });
    expect(retry.headers.get('x-herdless-retry')).toBe('no');
    held.open();
    expect(await (await slow).text()).toBe('slow done');
    expect(await (await app.request('/fast')).text()).toBe('fast');
    const gaveUp = await app.request('/downstream');
    expect(gaveUp.status).toBe(502);
    expect(gaveUp.headers.get('x-herdless-retry')).toBe('no');
    expect(shedding.shedder.stats()).toMatchObject({ inFlight: 0, admitted: 3, shed: 2, givenUp: 1 });
  });

  it('an ordinary route failure stays Hono\'s 500', async () => {
    const app = new Hono();
    app.use('*', honoLoadShedder({ maxInFlight: 4 }));
    app.get('/bug', () => {
      throw new TypeError('bug');
    });
    app.onError((_error, c) => c.text('internal', 500));
    const r = await app.request('/bug');
    expect([r.status, await r.text(), r.headers.get('x-herdless-retry')]).toEqual([500, 'internal', null]);
  });

  it('refuses bad options at once, naming the field', () => {
    expect(() => honoLoadShedder({ maxInFlight: 1.5 })).toThrow(/maxInFlight/);
  });
});
