import type http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, RetryError, constantBackoff, markDoNotRetry } from 'herdless';
import { retryInfo, withRetry } from 'herdless/http';
import { PyRandom } from 'herdless/sim';
import { LoadShedder, giveUpAnswer, loadShedder, type Admission, type LoadShedding } from 'herdless/server';
import { invalidOption } from './support/invalid-option.js';
import { startLoopback, stopLoopback } from './support/loopback.js';

const immediate = constantBackoff({ delayMs: 0 });

describe('loadShedder options', () => {
  it.each([
    [undefined, 'options', undefined],
    [{}, 'maxInFlight', undefined],
    [{ maxInFlight: 0 }, 'maxInFlight', 0],
    [{ maxInFlight: 1.5 }, 'maxInFlight', 1.5],
    [{ maxInFlight: '10' }, 'maxInFlight', '10'],
    [{ maxInFlight: 1, maxQueue: -1 }, 'maxQueue', -1],
    [{ maxInFlight: 1, maxQueueWaitMs: 0 }, 'maxQueueWaitMs', 0],
    [{ maxInFlight: 1, maxQueueWaitMs: Infinity }, 'maxQueueWaitMs', Infinity],
    [{ maxInFlight: 1, retryAfterMs: -1 }, 'retryAfterMs', -1],
    [{ maxInFlight: 1, maxRetryRatio: 1.5 }, 'maxRetryRatio', 1.5],
    [{ maxInFlight: 1, retryAfterJitter: 1 }, 'retryAfterJitter', 1],
    [{ maxInFlight: 1, random: Math.random }, 'random', Math.random],
    [{ maxInFlight: 1, maxRetryRatio: NaN }, 'maxRetryRatio', NaN],
    [{ maxInFlight: 1, retryRatioWindow: 0 }, 'retryRatioWindow', 0],
    [{ maxInFlight: 1, attemptHeader: 'bad header' }, 'attemptHeader', 'bad header'],
    [{ maxInFlight: 1, attemptHeader: false }, 'attemptHeader', false],
    [{ maxInFlight: 1, propagate: 'yes' }, 'propagate', 'yes'],
    [{ maxInFlight: 1, clock: {} }, 'clock', {}],
    [{ maxInFlight: 1, onHandlerError: 1 }, 'onHandlerError', 1],
    [{ maxInFlight: 1, clientKey: 'ip' }, 'clientKey', 'ip'],
    [{ maxInFlight: 1, maxHoldAfterCloseMs: 0 }, 'maxHoldAfterCloseMs', 0],
    [{ maxInFlight: 1, maxHoldAfterCloseMs: 2 ** 31 }, 'maxHoldAfterCloseMs', 2 ** 31],
    [{ maxInFlight: 1, maxInflight: 2 }, 'maxInflight', 2],
  ])('%j → InvalidOptionError on %s', (options, field, value) => {
    const error = invalidOption(() => loadShedder(options as never));
    expect([error.field, error.value]).toEqual([field, value]);
    expect(error.message).toMatch(/^loadShedder: /);
  });

  it('handlers that are not functions are refused', () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    expect(invalidOption(() => shedding.node(1 as never)).field).toBe('handler');
    expect(invalidOption(() => shedding.fetch(null as never)).field).toBe('handler');
  });
});

describe('LoadShedder (virtual time)', () => {
  const admitted = (a: Admission | Promise<Admission>): Admission & { kind: 'admitted' } => {
    if (a instanceof Promise || a.kind !== 'admitted') throw new Error('expected an admission');
    return a;
  };

  it('admits up to maxInFlight, queues up to maxQueue (FIFO), sheds the rest; a release admits the oldest waiter', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 2, maxQueue: 2, maxQueueWaitMs: 100, clock });
    const a = admitted(shedder.admit(1));
    admitted(shedder.admit(1));
    const order: string[] = [];
    const q1 = (shedder.admit(1) as Promise<Admission>).then((x) => (order.push(`q1 ${x.kind}`), x));
    const q2 = (shedder.admit(1) as Promise<Admission>).then((x) => (order.push(`q2 ${x.kind}`), x));
    expect(shedder.admit(1)).toEqual({ kind: 'shed', reason: 'queue-full', doNotRetry: false });
    expect(shedder.stats()).toMatchObject({ inFlight: 2, queued: 2, shed: 1, requests: 5, admitted: 2 });
    a.release();
    a.release(); // a second release is ignored
    await clock.advance(0);
    expect(order).toEqual(['q1 admitted']);
    expect(shedder.stats()).toMatchObject({ inFlight: 2, queued: 1, peakInFlight: 2 });
    await clock.advance(100);
    expect(await q2).toEqual({ kind: 'shed', reason: 'queue-timeout', doNotRetry: false });
    expect(shedder.stats()).toMatchObject({ inFlight: 2, queued: 0, shed: 2, admitted: 3 });
    expect((await q1).kind).toBe('admitted');
  });

  it('a shed retry says do-not-retry; the retry share above maxRetryRatio marks first attempts too', () => {
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.25, retryRatioWindow: 4 });
    admitted(shedder.admit(1));
    expect(shedder.admit(2)).toMatchObject({ kind: 'shed', doNotRetry: true }); // a retry: 1 of 2 = 0.5
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', doNotRetry: true }); // 1 of 3 > 0.25
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', doNotRetry: false }); // 1 of 4 = 0.25, not above
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', doNotRetry: false }); // window slid: 1 of 4
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', doNotRetry: false }); // the retry left the window: 0
    expect(shedder.retryRatio()).toBe(0);
    expect(shedder.stats()).toMatchObject({ requests: 6, retriesSeen: 1, shed: 5, shedDoNotRetry: 2 });
  });

  it('a queued request whose client leaves is dropped (abandoned), and its slot goes to the next', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 2, maxQueueWaitMs: 100, clock });
    const a = admitted(shedder.admit(1));
    let leave: () => void = () => undefined;
    void shedder.admit(1, (gone) => (leave = gone));
    const second = shedder.admit(1) as Promise<Admission>;
    leave();
    expect(shedder.stats()).toMatchObject({ queued: 1, abandoned: 1 });
    a.release();
    expect((await second).kind).toBe('admitted');
    expect(clock.pending).toBe(0);
  });
});

describe('the wait a shed answer asks for', () => {
  const waits = async (options: Parameters<typeof loadShedder>[0]) => {
    const shedding = loadShedder(options);
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const handler = shedding.fetch(async () => (await held, new Response('ok')));
    const holding = handler(new Request('http://app.invalid/'));
    const shed = await Promise.all(Array.from({ length: 6 }, () => handler(new Request('http://app.invalid/'))));
    release();
    await holding;
    return shed.map((r) => [r.headers.get('retry-after'), r.headers.get('retry-after-ms')]);
  };

  it('is spread over [retryAfterMs, 2 × retryAfterMs) by default (seeded), Retry-After rounded at random to whole seconds', async () => {
    const shed = await waits({ maxInFlight: 1, retryAfterMs: 1000, random: new PyRandom(7) });
    const rng = new PyRandom(7);
    expect(shed).toEqual(Array.from({ length: 6 }, () => {
      const exact = 1000 * (1 + rng.random());
      // Up with the probability of the fraction (a second draw), never below 1 s.
      const seconds = Math.max(1, rng.random() < exact / 1000 - Math.floor(exact / 1000) ? Math.floor(exact / 1000) + 1 : Math.floor(exact / 1000));
      return [String(seconds), String(Math.ceil(exact))];
    }));
    const ms = shed.map(([, m]) => Number(m));
    expect(Math.min(...ms)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...ms)).toBeLessThanOrEqual(2000);
    expect(new Set(ms).size).toBe(6);
  });

  it('is exactly retryAfterMs with retryAfterJitter: false', async () => {
    expect(await waits({ maxInFlight: 1, retryAfterMs: 250, retryAfterJitter: false })).toEqual(Array.from({ length: 6 }, () => ['1', '250']));
  });
});

describe('giveUpAnswer', () => {
  it.each([
    ['a RetryError around a 429', new RetryError('exhausted', 3, { status: 429 }), { status: 429, mark: true }],
    ['a RetryError around a network failure', new RetryError('exhausted', 3, new TypeError('fetch failed')), { status: 503, mark: true }],
    ['an error around a given-up response', Object.assign(new Error('x'), { response: markDoNotRetry({ status: 502 }) }), { status: 502, mark: true }],
    ['a marked error with a 200 status', markDoNotRetry(Object.assign(new Error('x'), { status: 200 })), { status: 503, mark: true }],
    ['an ordinary error', new Error('bug'), undefined],
    ['a fatal RetryError around a bug (no status): not a give-up to pass on', new RetryError('fatal', 1, new TypeError('x is not a function')), undefined],
    ['a fatal RetryError around a 503 that could not be retried (a POST)', new RetryError('fatal', 1, { status: 503 }), { status: 503, mark: true }],
  ])('%s', (_name, value, expected) => {
    const answer = giveUpAnswer(value);
    expect(answer === undefined ? undefined : { status: answer.status, mark: answer.headers['x-herdless-retry'] === 'no' }).toEqual(expected);
  });

  it('without propagate: the status, no mark', () => {
    expect(giveUpAnswer(new RetryError('exhausted', 3, { status: 503 }), false)?.headers['x-herdless-retry']).toBeUndefined();
  });
});

/** A node:http server on 127.0.0.1 with `listener`; closed after each test. */
const servers: http.Server[] = [];
async function serve(listener: http.RequestListener): Promise<string> {
  const { server, origin } = await startLoopback(listener);
  servers.push(server);
  return origin;
}
afterEach(async () => {
  for (const server of servers.splice(0)) await stopLoopback(server);
});

describe('node:http', () => {
  it('a shed request: 503, Retry-After, retry-after-ms; a shed retry also X-Herdless-Retry: no', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const shedding = loadShedder({ maxInFlight: 1, retryAfterMs: 1500, retryAfterJitter: false, maxRetryRatio: 1 });
    const origin = await serve(
      shedding.node(async (_req, res) => {
        await held;
        res.end('ok');
      }),
    );
    const first = fetch(`${origin}/a`);
    while (shedding.stats().inFlight === 0) await new Promise((r) => setImmediate(r));
    const shed = await fetch(`${origin}/b`);
    const shedRetry = await fetch(`${origin}/c`, { headers: { 'x-herdless-attempt': '2' } });
    release();
    const ok = await first;
    expect([ok.status, await ok.text()]).toEqual([200, 'ok']);
    expect([shed.status, shed.headers.get('retry-after'), shed.headers.get('retry-after-ms'), shed.headers.get('x-herdless-retry')]).toEqual([503, '2', '1500', null]);
    expect([shedRetry.status, shedRetry.headers.get('x-herdless-retry')]).toEqual([503, 'no']);
    await Promise.all([shed.text(), shedRetry.text()]);
    expect(shedding.stats()).toMatchObject({ requests: 3, retriesSeen: 1, shed: 2, shedDoNotRetry: 1, admitted: 1, inFlight: 0 });
  });

  it('a client that leaves frees its slot once its handler stops (signal), or its place in the queue (abandoned); nothing is left behind', async () => {
    const shedding = loadShedder({ maxInFlight: 1, maxQueue: 1, maxQueueWaitMs: 60_000 });
    // Never answers; stops when its client leaves.
    const origin = await serve(shedding.node((_req, _res, { signal }) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)))));
    const settle = async () => {
      for (let i = 0; i < 200 && shedding.stats().inFlight + shedding.stats().queued > 0; i++) await new Promise((r) => setTimeout(r, 5));
    };
    const first = new AbortController();
    const second = new AbortController();
    const a = fetch(`${origin}/a`, { signal: first.signal }).catch((e: unknown) => e);
    while (shedding.stats().inFlight === 0) await new Promise((r) => setImmediate(r));
    const b = fetch(`${origin}/b`, { signal: second.signal }).catch((e: unknown) => e);
    while (shedding.stats().queued === 0) await new Promise((r) => setImmediate(r));
    second.abort();
    await b;
    for (let i = 0; i < 200 && shedding.stats().abandoned === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(shedding.stats()).toMatchObject({ inFlight: 1, queued: 0, abandoned: 1 });
    first.abort();
    await a;
    await settle();
    expect(shedding.stats()).toMatchObject({ requests: 2, admitted: 1, inFlight: 0, queued: 0, abandoned: 1, shed: 0 });
  });

  it('propagates a downstream give-up: backend answers 503 + mark, so the frontend does not retry (3 db requests, not 9)', async () => {
    let dbRequests = 0;
    const db = await serve((_req, res) => {
      dbRequests++;
      res.writeHead(503).end();
    });
    const backendShedding = loadShedder({ maxInFlight: 10 });
    const toDb = withRetry(fetch, { maxAttempts: 3, backoff: immediate });
    const backend = await serve(
      backendShedding.node(async (_req, res) => {
        const r = await toDb(`${db}/rows`);
        if (!r.ok) throw new RetryError('exhausted', 3, { status: r.status, response: r });
        res.end(await r.text());
      }),
    );
    const toBackend = withRetry(fetch, { maxAttempts: 3, backoff: immediate });
    const res = await toBackend(`${backend}/x`);
    expect([res.status, res.headers.get('x-herdless-retry'), retryInfo(res)?.reason]).toEqual([503, 'no', 'do-not-retry']);
    await res.text();
    expect(dbRequests).toBe(3);
    expect(backendShedding.stats()).toMatchObject({ requests: 1, givenUp: 1 });
  });

  it('the edge (propagate: false) answers the downstream status without the mark; a bug gets a 500 and onHandlerError', async () => {
    const errors: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 4, propagate: false, onHandlerError: (e) => errors.push(e) });
    const origin = await serve(
      shedding.node((req) => {
        if (req.url === '/bug') throw new Error('bug');
        return Promise.reject(new RetryError('exhausted', 3, { status: 502 }));
      }),
    );
    const given = await fetch(`${origin}/x`);
    const bug = await fetch(`${origin}/bug`);
    expect([given.status, given.headers.get('x-herdless-retry'), bug.status]).toEqual([502, null, 500]);
    await Promise.all([given.text(), bug.text()]);
    expect(errors.map((e) => (e as Error).message)).toEqual(['bug']);
    expect(shedding.stats()).toMatchObject({ givenUp: 1, inFlight: 0 });
  });

  it('a handler that fails after sending the head: reported, the connection destroyed, the slot freed', async () => {
    const errors: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 1, onHandlerError: (e) => errors.push(e) });
    const origin = await serve(
      shedding.node(async (_req, res) => {
        res.writeHead(200);
        res.write('partial');
        await new Promise((r) => setTimeout(r, 5));
        throw new Error('late');
      }),
    );
    const res = await fetch(`${origin}/x`);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    for (let i = 0; i < 200 && shedding.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(errors.map((e) => (e as Error).message)).toEqual(['late']);
    expect(shedding.stats()).toMatchObject({ inFlight: 0, admitted: 1 });
  });

  it('as connect/express middleware: next() on admission, the errorHandler for a give-up', async () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    const passed: unknown[] = [];
    // The smallest connect-style chain: middleware, then a route that fails, then the error handler.
    const origin = await serve((req, res) => {
      shedding.middleware(req, res, () => {
        const fail = (error: unknown) => shedding.errorHandler(error, req, res, (e) => (passed.push(e), res.writeHead(500).end()));
        if (req.url === '/other') fail(new Error('other'));
        else fail(markDoNotRetry(new Error('downstream gave up')));
      });
    });
    const a = await fetch(`${origin}/x`);
    const b = await fetch(`${origin}/other`);
    expect([a.status, a.headers.get('x-herdless-retry'), b.status]).toEqual([503, 'no', 500]);
    await Promise.all([a.text(), b.text()]);
    expect(passed.map((e) => (e as Error).message)).toEqual(['other']);
    expect(shedding.stats()).toMatchObject({ admitted: 2, inFlight: 0, givenUp: 1 });
  });
});

describe('fetch-style handlers', () => {
  it('sheds with a 503 Response, passes a given-up Response on with the mark, answers a thrown give-up', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const shedding: LoadShedding = loadShedder({ maxInFlight: 1, retryAfterMs: 0 });
    const downstream = withRetry(async () => new Response('busy', { status: 503 }), { maxAttempts: 2, backoff: immediate });
    const handler = shedding.fetch(async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/hold') await held;
      if (path === '/pass') return downstream('http://db.invalid/');
      if (path === '/throw') throw markDoNotRetry(Object.assign(new Error('x'), { status: 504 }));
      return new Response('ok');
    });
    const holding = handler(new Request('http://app.invalid/hold'));
    const shed = await handler(new Request('http://app.invalid/x', { headers: { 'x-herdless-attempt': '3' } }));
    expect([shed.status, shed.headers.get('retry-after'), shed.headers.get('x-herdless-retry')]).toEqual([503, '0', 'no']);
    release();
    expect((await holding).status).toBe(200);
    const passed = await handler(new Request('http://app.invalid/pass'));
    expect([passed.status, passed.headers.get('x-herdless-retry'), await passed.text()]).toEqual([503, 'no', 'busy']);
    const thrown = await handler(new Request('http://app.invalid/throw'));
    expect([thrown.status, thrown.headers.get('x-herdless-retry')]).toEqual([504, 'no']);
    await expect(shedding.fetch(() => Promise.reject(new Error('bug')))(new Request('http://app.invalid/'))).rejects.toThrow('bug');
    expect(shedding.stats()).toMatchObject({ requests: 5, shed: 1, givenUp: 2, inFlight: 0 });
  });
});
