/**
 * The hedging HTTP adapters (withHedging(fetch), undici's hedgingInterceptor, axios's
 * hedgingAdapter) with adaptive throttling and a circuit breaker, on real node:http servers on
 * loopback. Where time matters it is virtual (a ManualClock the server reads too); elsewhere the
 * hedge delay is 10 s, so that a hedge sent sooner was sent by a failure, never by the timer, and
 * nothing depends on the machine's speed.
 */
import type http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import axios from 'axios';
import { ManualClock, adaptiveThrottling, circuitBreaker, consecutiveFailures, isCircuitOpenError, isHedgeError, keyedBreakers, type HedgeError, type TelemetryEvent } from 'herdless';
import { withHedging } from 'herdless/http';
import { hedgingInterceptor } from 'herdless/undici';
import { hedgingAdapter } from 'herdless/axios';
import { PyRandom } from 'herdless/sim';
import { startLoopback, stopLoopback } from './support/loopback.js';
import { invalidOption } from './support/invalid-option.js';
import { scriptedThrottle } from './support/scripted-throttle.js';

const servers: http.Server[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  for (const server of servers.splice(0)) await stopLoopback(server);
});

/** A server answering each request as `answer` says (by its number, from 1); records what it saw. */
async function serve(answer: (n: number, res: http.ServerResponse) => void): Promise<{ url: string; seen: { attempt: string | undefined; method: string }[] }> {
  const seen: { attempt: string | undefined; method: string }[] = [];
  const { server, origin } = await startLoopback((req, res) => {
    seen.push({ attempt: req.headers['x-herdless-attempt'] as string | undefined, method: req.method! });
    req.resume();
    answer(seen.length, res);
  });
  servers.push(server);
  return { url: `${origin}/item`, seen };
}
const status = (code: number) => (n: number, res: http.ServerResponse) => res.writeHead(code).end(`${code} ${n}`);

function undiciDispatcher(options: Parameters<typeof hedgingInterceptor>[0]) {
  const agent = new Agent();
  agents.push(agent);
  return agent.compose(hedgingInterceptor(options));
}

describe('withHedging(fetch) with adaptive throttling over node:http (K = 2, 10 s window, virtual time)', () => {
  it('a 10 s outage: what reaches the server collapses to the floor; full traffic returns after it', async () => {
    const clock = new ManualClock();
    const down = (t: number) => t >= 20_000 && t < 30_000;
    /** Requests the server received, per virtual second. */
    const received = new Array<number>(60).fill(0);
    const { url } = await serve((_n, res) => {
      const now = clock.now();
      received[Math.floor(now / 1000)]!++;
      res.writeHead(down(now) ? 503 : 200).end('.');
    });
    const throttle = adaptiveThrottling({ windowMs: 10_000, buckets: 10, maxRejectionProbability: 0.9 });
    // A 10 s hedge delay never fires here (the clock moves only between calls): every hedge is sent by a 503.
    const get = withHedging(fetch, { delayMs: 10_000, maxAttempts: 2, throttle, clock, random: new PyRandom(0) });
    /** Per virtual second: calls refused unsent, calls answered 503. */
    const throttled = new Array<number>(60).fill(0);
    const answered503 = new Array<number>(60).fill(0);
    // 20 calls a virtual second for 60 s: 1,200 calls on keep-alive connections.
    for (let i = 0; i < 1200; i++) {
      try {
        const response = await get(url);
        if (response.status === 503) answered503[Math.floor(clock.now() / 1000)]!++;
        await response.arrayBuffer();
      } catch (error) {
        if (!isHedgeError(error) || error.reason !== 'throttled' || error.attempts !== 0) throw error;
        throttled[Math.floor(clock.now() / 1000)]!++;
      }
      await clock.advance(50);
    }
    const sum = (from: number, to: number) => received.slice(from, to).reduce((a, b) => a + b, 0);
    // Healthy: one attempt per call, every one reaching the server.
    expect(sum(0, 20)).toBe(400);
    // The outage offers 400 attempts (200 calls × the first try and its hedge). While the window's
    // accepts from before it cover requests / K everything goes (40 a second); then the rate falls
    // to the floor's trickle. On this seed, per second: 40 40 40 38 28 26 9 5 2 0 — 228 of 400.
    expect(received.slice(20, 23)).toEqual([40, 40, 40]);
    expect(sum(20, 30)).toBeLessThan(400 * 0.6);
    expect(received[29]).toBeLessThanOrEqual(6);
    // Every call of the outage was either answered with the server's 503 or refused unsent. After
    // it, 1 to 16 a second get through as accepts return; full traffic at 45 s on this seed.
    for (let s = 20; s < 30; s++) expect([s, answered503[s]! + throttled[s]!]).toEqual([s, 20]);
    // Outside the outage each call sent is one attempt, answered 200; a refused one reached nothing.
    const refusedOutside = throttled.reduce((a, b) => a + b, 0) - throttled.slice(20, 30).reduce((a, b) => a + b, 0);
    expect(sum(0, 20) + sum(30, 60)).toBe(1000 - refusedOutside);
    // Recovered: full traffic (20 a second) in the last 10 s, nothing refused any more.
    for (let s = 50; s < 60; s++) expect([s, received[s]]).toEqual([s, 20]);
    expect(throttle.rejectionProbability(clock.now())).toBe(0);
  }, 60_000);

  it('a refused first try is not sent (HedgeError throttled, telemetry throttle-rejection); a refused hedge after a 503: the 503 is the answer', async () => {
    const { url, seen } = await serve(status(503));
    const throttle = scriptedThrottle([false, true, false]);
    const events: TelemetryEvent[] = [];
    const get = withHedging(fetch, { delayMs: 10_000, maxAttempts: 2, throttle, telemetry: { onEvent: (e) => void events.push(e) } });
    const refused = await get(url).then(
      () => undefined,
      (error: unknown) => error as HedgeError,
    );
    expect([refused?.reason, refused?.attempts, refused?.cause]).toEqual(['throttled', 0, undefined]);
    expect(seen).toHaveLength(0);
    expect(events.map((e) => e.type)).toEqual(['throttle-rejection', 'give-up']);
    expect(events[0]).toMatchObject({ call: { layer: 'hedge', method: 'GET', url }, attempt: 1 });
    const answered = await get(url);
    expect([answered.status, await answered.text()]).toEqual([503, '503 1']);
    expect(seen).toHaveLength(1);
    expect(throttle.asked).toEqual([false, false, true]);
    expect(throttle.told).toEqual([false]);
  });

  it('answers follow the classification: a 200 and a 404 are accepts, a 503 a rejection', async () => {
    const codes = [200, 404, 503, 200];
    const { url } = await serve((n, res) => res.writeHead(codes[n - 1]!).end());
    const throttle = scriptedThrottle([]);
    const get = withHedging(fetch, { delayMs: 10_000, maxAttempts: 2, throttle });
    for (const expected of [200, 404, 200]) expect((await get(url)).status).toBe(expected);
    // The third call: its 503 is a rejection, and the hedge that follows at once an accept.
    expect(throttle.told).toEqual([true, true, false, true]);
    expect(throttle.asked).toEqual([false, false, false, true]);
  });

  it('a POST without a key (sent once) is asked too: refused, it is not sent', async () => {
    const { url, seen } = await serve(status(200));
    const throttle = scriptedThrottle([false]);
    const post = withHedging(fetch, { delayMs: 10_000, throttle });
    const refused = await post(url, { method: 'POST', body: 'x' }).then(
      () => undefined,
      (error: unknown) => error as HedgeError,
    );
    expect([refused?.reason, refused?.attempts]).toEqual(['throttled', 0]);
    expect(seen).toHaveLength(0);
    expect((await post(url, { method: 'POST', body: 'x' })).status).toBe(200);
    expect(throttle.told).toEqual([true]);
  });

  it('undici and axios: a refused first try rejects unsent with the HedgeError', async () => {
    const { url, seen } = await serve(status(200));
    const viaUndici = await request(url, { dispatcher: undiciDispatcher({ delayMs: 10_000, throttle: scriptedThrottle([false]) }) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHedgeError(viaUndici) && viaUndici.reason).toBe('throttled');
    const viaAxios = await axios.get(url, { adapter: hedgingAdapter({ delayMs: 10_000, throttle: scriptedThrottle([false]) }) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHedgeError(viaAxios) && viaAxios.reason).toBe('throttled');
    expect(seen).toHaveLength(0);
  });
});

describe('the hedging adapters take a breaker: every attempt goes through it', () => {
  it('withHedging: 503s open it; then a request is refused without being sent (HedgeError circuit-open, the CircuitOpenError as cause)', async () => {
    const { url, seen } = await serve(status(503));
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 600_000 });
    const get = withHedging(fetch, { delayMs: 10_000, maxAttempts: 2, breaker });
    const failed = await get(url);
    expect([failed.status, await failed.text()]).toEqual([503, '503 2']);
    expect(breaker.state).toBe('open');
    const refused = await get(url).then(
      () => undefined,
      (error: unknown) => error as HedgeError,
    );
    expect(refused?.reason).toBe('circuit-open');
    expect(isCircuitOpenError(refused?.cause)).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it('an open circuit stops further hedges; the attempt in flight goes on and its answer is the result', async () => {
    const timers: NodeJS.Timeout[] = [];
    // Request 1 answers after 1.5 s; request 2 (the hedge at 100 ms) a 503 at once, which opens the breaker.
    const { url, seen } = await serve((n, res) => {
      if (n === 1) timers.push(setTimeout(() => res.end('slow 1'), 1500));
      else res.writeHead(503).end(`503 ${n}`);
    });
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000 });
    const hedges: unknown[] = [];
    const get = withHedging(fetch, { delayMs: 100, maxAttempts: 3, breaker, onHedge: (e) => void hedges.push(e) });
    const res = await get(url);
    expect(await res.text()).toBe('slow 1');
    // The third attempt, due at once after the 503, was refused by the open circuit: never sent.
    expect(seen.map((s) => s.attempt)).toEqual([undefined, '2']);
    expect(hedges).toHaveLength(2);
    for (const t of timers) clearTimeout(t);
  });

  it('a loser aborted by the winner is not counted: a hedged success leaves a threshold-1 breaker closed', async () => {
    const timers: NodeJS.Timeout[] = [];
    const { url, seen } = await serve((n, res) => {
      if (n === 1) timers.push(setTimeout(() => res.end('slow'), 5000));
      else res.end(`fast ${n}`);
    });
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000, isFailure: () => true });
    const get = withHedging(fetch, { delayMs: 100, breaker });
    expect(await (await get(url)).text()).toBe('fast 2');
    expect(seen).toHaveLength(2);
    expect(breaker.state).toBe('closed');
    for (const t of timers) clearTimeout(t);
  });

  it('a POST without a key goes through it too: its 503 counts, and once open it is not sent', async () => {
    const { url, seen } = await serve(status(503));
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000 });
    const post = withHedging(fetch, { delayMs: 10_000, breaker });
    const first = await post(url, { method: 'POST', body: 'x' });
    expect(first.status).toBe(503);
    expect(breaker.state).toBe('open');
    const refused = await post(url, { method: 'POST', body: 'x' }).then(
      () => undefined,
      (error: unknown) => error as HedgeError,
    );
    expect([refused?.reason, refused?.attempts, isCircuitOpenError(refused?.cause)]).toEqual(['circuit-open', 0, true]);
    expect(seen).toHaveLength(1);
  });

  it('undici hedgingInterceptor: keyed breakers per host; 503s open the host\'s, then it refuses unsent', async () => {
    const { url, seen } = await serve(status(503));
    const breakers = keyedBreakers(() => circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 600_000 }));
    const dispatcher = undiciDispatcher({ delayMs: 10_000, maxAttempts: 2, breaker: breakers });
    const failed = await request(url, { dispatcher });
    expect(failed.statusCode).toBe(503);
    await failed.body.text();
    const refused = await request(url, { dispatcher }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHedgeError(refused) && refused.reason).toBe('circuit-open');
    expect(seen).toHaveLength(2);
  });

  it('axios hedgingAdapter: 503s open it, then it refuses unsent', async () => {
    const { url, seen } = await serve(status(503));
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 600_000 });
    const adapter = hedgingAdapter({ delayMs: 10_000, maxAttempts: 2, breaker });
    const failed = await axios.get(url, { adapter, validateStatus: () => true });
    expect(failed.status).toBe(503);
    const refused = await axios.get(url, { adapter }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHedgeError(refused) && refused.reason).toBe('circuit-open');
    expect(seen).toHaveLength(2);
  });

  it('breaker is checked: not a breaker is an error naming it', () => {
    expect(invalidOption(() => withHedging(fetch, { delayMs: 5, breaker: {} as never })).field).toBe('breaker');
  });
});

describe('a misspelt hedging option gets a suggestion among every name the adapter takes', () => {
  it.each<[string, () => unknown, string]>([
    ['withHedging atemptHeader', () => withHedging(fetch, { delayMs: 5, atemptHeader: 'x-try' } as never), 'withHedging: atemptHeader is not a hedging option of withHedging (did you mean attemptHeader?'],
    ['withHedging retryStatus', () => withHedging(fetch, { delayMs: 5, retryStatus: [503] } as never), 'did you mean retryStatuses?'],
    ['withHedging throtle', () => withHedging(fetch, { delayMs: 5, throtle: adaptiveThrottling() } as never), 'did you mean throttle?'],
    ['hedgingInterceptor breakr', () => hedgingInterceptor({ delayMs: 5, breakr: 1 } as never), 'hedgingInterceptor: breakr is not a hedging option of hedgingInterceptor (did you mean breaker?'],
    ['hedgingAdapter adaptr', () => hedgingAdapter({ delayMs: 5, adaptr: 1 } as never), 'hedgingAdapter: adaptr is not a hedging option of hedgingAdapter (did you mean adapter?'],
  ])('%s', (_name, make, message) => {
    expect(invalidOption(make).message).toContain(message);
  });

  it('the list names the HTTP options beside the hedger\'s', () => {
    const message = invalidOption(() => withHedging(fetch, { delayMs: 5, zzz: 1 } as never)).message;
    for (const name of ['delayMs', 'maxAttempts', 'budget', 'throttle', 'clock', 'telemetry', 'retryMethods', 'retryStatuses', 'idempotencyKey', 'attemptHeader', 'name', 'breaker']) {
      expect(message).toContain(name);
    }
  });

  it('signal is per request', () => {
    expect(invalidOption(() => withHedging(fetch, { delayMs: 5, signal: AbortSignal.abort() } as never)).message).toContain('is per request');
  });
});
