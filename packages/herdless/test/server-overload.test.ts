/**
 * herdless/server in the moment it exists for: clients that time out and hang up while the work
 * they asked for goes on. The slot counts the work, not the connection, on node:http and express
 * alike; the handler learns that its client left; shed answers spread their whole-second
 * `Retry-After`; a client forging the attempt header cannot alone mark the other clients' answers.
 */
import http from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from 'herdless';
import { PyRandom } from 'herdless/sim';
import { LoadShedder, loadShedder, requestSignal, type Admission, type LoadShedding } from 'herdless/server';
import { shedAnswer } from '../src/server/answers.js';
import { startLoopback, stopLoopback } from './support/loopback.js';

const servers: http.Server[] = [];
async function serve(listener: http.RequestListener): Promise<string> {
  const { server, origin } = await startLoopback(listener);
  servers.push(server);
  return origin;
}
afterEach(async () => {
  for (const server of servers.splice(0)) await stopLoopback(server);
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Handlers running now and at most, and how many ran in all. */
class WorkMeter {
  running = 0;
  peak = 0;
  ran = 0;
  readonly #done: Array<() => void> = [];
  start(): void {
    this.running++;
    this.ran++;
    this.peak = Math.max(this.peak, this.running);
  }
  end(): void {
    this.running--;
    if (this.running === 0) for (const resolve of this.#done.splice(0)) resolve();
  }
  idle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.#done.push(resolve));
  }
}

/**
 * `clients` GETs, `spacingMs` apart, each hanging up `leaveMs` after it was sent; resolves with the
 * statuses of those answered before they left.
 */
async function impatientClients(origin: string, clients: number, spacingMs: number, leaveMs: number): Promise<number[]> {
  const answered: Promise<number | undefined>[] = [];
  for (let i = 0; i < clients; i++) {
    answered.push(
      new Promise((resolve) => {
        const request = http.get(`${origin}/work/${i}`, { agent: false }, (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.on('error', () => resolve(undefined));
        setTimeout(() => {
          request.destroy();
          resolve(undefined);
        }, leaveMs);
      }),
    );
    await sleep(spacingMs);
  }
  return (await Promise.all(answered)).filter((s): s is number => s !== undefined);
}

// Real time, real sockets: the figures asserted are counts (handlers at once, statuses), which do
// not depend on how fast the machine is — a slower machine only makes more clients leave.
describe('40 clients leaving after 100 ms, maxInFlight 4, handlers that work 1 s whatever the client does', () => {
  const CLIENTS = 40;

  it('node:http (node()): at most 4 handlers ever run at once; the slots are free once the work is done', async () => {
    const meter = new WorkMeter();
    const shedding = loadShedder({ maxInFlight: 4 });
    const origin = await serve(
      shedding.node(async (_req, res) => {
        meter.start();
        await sleep(1000); // work that does not listen to the signal
        meter.end();
        res.end('done');
      }),
    );
    const answered = await impatientClients(origin, CLIENTS, 20, 100);
    await meter.idle();
    expect(meter.peak).toBeLessThanOrEqual(4);
    expect(meter.ran).toBeGreaterThanOrEqual(4);
    // Everyone still connected was shed (the four who were admitted left before their answer).
    expect(answered.every((status) => status === 503)).toBe(true);
    const stats = shedding.stats();
    // (A client that left before the server read its request is not counted: on a very busy machine, a few may.)
    expect(stats).toMatchObject({ inFlight: 0, admitted: meter.ran, shed: stats.requests - meter.ran });
    expect(stats.requests).toBeLessThanOrEqual(CLIENTS);
    expect(stats.peakInFlight).toBeLessThanOrEqual(4);
  }, 30_000);

  it('express (middleware): at most 4 routes ever run at once', async () => {
    const meter = new WorkMeter();
    const shedding = loadShedder({ maxInFlight: 4 });
    const app = express();
    app.use(shedding.middleware);
    app.get('/work/:id', async (_req, res) => {
      meter.start();
      await sleep(1000);
      meter.end();
      res.send('done');
    });
    app.use(shedding.errorHandler);
    const origin = await serve(app);
    await impatientClients(origin, CLIENTS, 20, 100);
    await meter.idle();
    expect(meter.peak).toBeLessThanOrEqual(4);
    expect(meter.ran).toBeGreaterThanOrEqual(4);
    // A route's res.send() after its client left still ends the work: the slot is free.
    for (let i = 0; i < 1000 && shedding.stats().inFlight > 0; i++) await sleep(10);
    expect(shedding.stats()).toMatchObject({ inFlight: 0, admitted: meter.ran });
  }, 30_000);

  it('handlers that listen to the signal stop when their client leaves, so the slot serves others sooner', async () => {
    const meter = new WorkMeter();
    const errors: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 4, onHandlerError: (e) => errors.push(e) });
    const stoppedAfter: number[] = [];
    const origin = await serve(
      shedding.node(async (_req, res, { signal }) => {
        meter.start();
        const started = performance.now();
        try {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, 1000);
            signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
          });
          res.end('done');
        } finally {
          stoppedAfter.push(performance.now() - started);
          meter.end();
        }
      }),
    );
    await impatientClients(origin, CLIENTS, 20, 100);
    await meter.idle();
    expect(meter.peak).toBeLessThanOrEqual(4);
    // Every admitted client left at 100 ms: its handler stopped then, not 1 s later.
    expect(Math.max(...stoppedAfter)).toBeLessThan(1000);
    // More clients got a handler than the 4 that 1 s handlers alone would allow in 0.9 s.
    expect(meter.ran).toBeGreaterThan(4);
    // The abort is not a handler failure: nothing reported, no 500 attempted.
    for (let i = 0; i < 1000 && shedding.stats().inFlight > 0; i++) await sleep(10);
    expect(errors).toEqual([]);
    expect(shedding.stats().inFlight).toBe(0);
  }, 30_000);
});

describe('the slot is held until the work ends', () => {
  it('a route that stops without ending its response frees its slot maxHoldAfterCloseMs after the client left (virtual time)', async () => {
    const clock = new ManualClock();
    const shedding = loadShedder({ maxInFlight: 1, maxHoldAfterCloseMs: 5000, clock });
    let signal: AbortSignal | undefined;
    const origin = await serve((req, res) =>
      shedding.middleware(req, res, () => {
        signal = requestSignal(req);
        // A route that gives up on abort and never ends the response.
      }),
    );
    const client = http.get(`${origin}/`, { agent: false });
    client.on('error', () => undefined);
    while (shedding.stats().inFlight === 0) await sleep(5);
    expect(signal?.aborted).toBe(false);
    client.destroy();
    while (signal?.aborted !== true) await sleep(5);
    expect((signal.reason as DOMException).name).toBe('AbortError');
    await clock.advance(4999);
    expect(shedding.stats().inFlight).toBe(1);
    await clock.advance(1);
    expect(shedding.stats().inFlight).toBe(0);
  });

  it('a response that ends normally frees the slot at once, with no signal abort', async () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    let signal: AbortSignal | undefined;
    const origin = await serve(shedding.node((_req, res, context) => ((signal = context.signal), res.end('ok'))));
    const response = await fetch(origin);
    expect(await response.text()).toBe('ok');
    for (let i = 0; i < 1000 && shedding.stats().inFlight > 0; i++) await sleep(5);
    expect([shedding.stats().inFlight, signal?.aborted]).toEqual([0, false]);
  });

  it('fetch-style: a request whose client aborted keeps its slot until the handler returns', async () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    let finish: () => void = () => undefined;
    let sawAbort = false;
    const handler = shedding.fetch(async (request) => {
      await new Promise<void>((resolve) => (finish = resolve));
      sawAbort = request.signal.aborted;
      return new Response('late');
    });
    const client = new AbortController();
    const first = handler(new Request('http://app.invalid/', { signal: client.signal }));
    client.abort();
    const second = await handler(new Request('http://app.invalid/'));
    expect([second.status, shedding.stats().inFlight]).toEqual([503, 1]);
    finish();
    await first;
    expect([sawAbort, shedding.stats().inFlight]).toEqual([true, 0]);
  });

  it('requestSignal is undefined for a request no shedder admitted', () => {
    expect(requestSignal({})).toBeUndefined();
  });
});

describe('whole-second Retry-After keeps the spread', () => {
  async function shedAnswers(shedding: LoadShedding, count: number): Promise<Array<[string | null, string | null]>> {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const origin = await serve(shedding.node(async (_req, res) => (await held, res.end('ok'))));
    const holder = fetch(`${origin}/hold`);
    while (shedding.stats().inFlight === 0) await sleep(5);
    const answers: Array<[string | null, string | null]> = [];
    for (let i = 0; i < count; i++) {
      const r = await fetch(`${origin}/x`);
      await r.text();
      answers.push([r.headers.get('retry-after'), r.headers.get('retry-after-ms')]);
    }
    release();
    await (await holder).text();
    return answers;
  }

  it('20 shed 503s (window [1 s, 2 s)) carry both 1 and 2 in Retry-After, never below retryAfterMs', async () => {
    const answers = await shedAnswers(loadShedder({ maxInFlight: 1, random: new PyRandom(26) }), 20);
    const seconds = answers.map(([s]) => Number(s));
    expect(new Set(seconds)).toEqual(new Set([1, 2]));
    expect(new Set(answers.map(([, ms]) => ms)).size).toBeGreaterThanOrEqual(19);
  });

  it('the seconds are the draw rounded at random: same mean as retry-after-ms, never below retryAfterMs rounded up', () => {
    // 2000 draws, seeded: the mean of the whole seconds is the mean of the ms within ±3 % (standard error ≈ 0.6 %).
    const { config } = new LoadShedder({ maxInFlight: 1, retryAfterMs: 1500, random: new PyRandom(5) });
    const seconds: number[] = [];
    const ms: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const { headers } = shedAnswer(config, false);
      seconds.push(Number(headers['retry-after']));
      ms.push(Number(headers['retry-after-ms']));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(Math.min(...seconds)).toBe(2); // 1500 ms rounded up: never 1
    expect(new Set(seconds)).toEqual(new Set([2, 3]));
    expect(mean(seconds) * 1000).toBeGreaterThan(mean(ms) * 0.97);
    expect(mean(seconds) * 1000).toBeLessThan(mean(ms) * 1.1);
  });
});

describe('a client forging the attempt header', () => {
  /**
   * 200 requests while the one slot is taken: every 4th from the forgers (attempt 2 each time, split
   * among `forgers` sources), the rest honest first attempts from 7 clients; whether any honest shed
   * answer said "don't retry".
   */
  function honestMarked(forgers: number, clientKey: boolean): boolean {
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.1, retryRatioWindow: 100 });
    shedder.admit(1, undefined, 'holder'); // the one slot stays taken
    let marked = false;
    for (let i = 0; i < 200; i++) {
      // A quarter of the traffic is forged, split among the forgers.
      const forged = i % 4 === 0;
      const source = forged ? `forger-${(i / 4) % forgers}` : `client-${i % 7}`;
      const answer = shedder.admit(forged ? 2 : 1, undefined, clientKey ? source : undefined) as Admission;
      if (!forged && answer.kind === 'shed' && answer.doNotRetry) marked = true;
    }
    return marked;
  }

  it('without clientKey, one forger sending 25 % of the requests marks every honest shed answer "don\'t retry"', () => {
    expect(honestMarked(1, false)).toBe(true);
  });

  it('with clientKey, one forger alone cannot: its retries count up to maxRetryRatio of the window', () => {
    expect(honestMarked(1, true)).toBe(false);
  });

  it('with clientKey, honest overload (many sources retrying) still marks the answers', () => {
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.1, retryRatioWindow: 100 });
    shedder.admit(1);
    const answers: Admission[] = [];
    for (let i = 0; i < 100; i++) answers.push(shedder.admit(i % 3 === 0 ? 2 : 1, undefined, `client-${i % 10}`) as Admission);
    const last = answers.at(-1)!;
    expect(last).toMatchObject({ kind: 'shed', doNotRetry: true });
  });

  it('a forger never changes admission: the same requests are admitted with or without the forged header', async () => {
    const admittedWith = (attempt: number) => {
      const shedder = new LoadShedder({ maxInFlight: 3 });
      return Array.from({ length: 10 }, (_, i) => (shedder.admit(i % 2 === 0 ? attempt : 1) as Admission).kind);
    };
    expect(admittedWith(2)).toEqual(admittedWith(1));
  });

  it('a clientKey that throws makes the source unknown and is reported; the request is served', async () => {
    const errors: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 1, clientKey: () => { throw new Error('no key'); }, onHandlerError: (e) => errors.push(e) });
    const origin = await serve(shedding.node((_req, res) => res.end('ok')));
    expect(await (await fetch(origin)).text()).toBe('ok');
    expect(await (await shedding.fetch(async () => new Response('ok'))(new Request('http://app.invalid/'))).text()).toBe('ok');
    expect(errors.map((e) => (e as Error).message)).toEqual(['no key', 'no key']);
  });

  it('clientKey reads the request: node:http gets the IncomingMessage', async () => {
    const seen: string[] = [];
    const shedding = loadShedder({ maxInFlight: 1, clientKey: (req) => (seen.push(typeof (req as http.IncomingMessage).socket?.remoteAddress), 'x') });
    const origin = await serve(shedding.node((_req, res) => res.end('ok')));
    await (await fetch(origin)).text();
    expect(seen).toEqual(['string']);
  });
});
