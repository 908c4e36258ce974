import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { retryRatioBudget } from 'herdless';
import { retryInfo, withHedging } from 'herdless/http';
import { hedgingInterceptor } from 'herdless/undici';
import { Agent, request } from 'undici';
import axios from 'axios';
import { hedgingAdapter } from 'herdless/axios';

/*
 * Real sockets, real time. The slow answer is 5 s away and the hedge delay 100 ms. "The call ends
 * near the hedge delay, not the slow answer": it takes at least the delay (a timer never fires
 * early), it returns the hedge's answer, and the server sees the slow attempt cancelled — so it did
 * not wait for it. The one bound from above is the slow answer itself (4.9 s of margin).
 */
const SLOW_MS = 5000;
const DELAY_MS = 100;

interface Seen {
  method: string;
  attempt: string | undefined;
  key: string | undefined;
  /** The client went away before the answer (the loser was cancelled). */
  cancelled: boolean;
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server whose first request answers after SLOW_MS (unless cancelled) and every later one at once. */
async function start(answer?: (n: number, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const entry: Seen = { method: req.method!, attempt: req.headers['x-herdless-attempt'] as string | undefined, key: req.headers['idempotency-key'] as string | undefined, cancelled: false };
    seen.push(entry);
    const n = seen.length;
    res.on('close', () => {
      if (!res.writableFinished) entry.cancelled = true;
    });
    req.resume();
    if (answer) return answer(n, res);
    if (n === 1) {
      const timer = setTimeout(() => res.end('slow'), SLOW_MS);
      res.on('close', () => clearTimeout(timer));
    } else res.end(`fast ${n}`);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`, seen };
}

const until = async (check: () => boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

describe('withHedging(fetch) on a real server', () => {
  it('a slow first response: the hedge answers, the call ends near the delay, and the server sees the first cancelled', async () => {
    const { url, seen } = await start();
    const get = withHedging(fetch, { delayMs: DELAY_MS });
    const started = performance.now();
    const res = await get(url);
    const elapsed = performance.now() - started;
    expect(await res.text()).toBe('fast 2');
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(elapsed).toBeLessThan(SLOW_MS);
    expect(seen.map((s) => s.attempt)).toEqual([undefined, '2']);
    await until(() => seen[0]!.cancelled);
    expect(seen[0]!.cancelled).toBe(true);
  });

  it('a POST without an idempotency key is never hedged: one request, the slow answer', async () => {
    const { url, seen } = await start((n, res) => setTimeout(() => res.end(`answer ${n}`), 400));
    const post = withHedging(fetch, { delayMs: DELAY_MS });
    const started = performance.now();
    const res = await post(url, { method: 'POST', body: 'x' });
    expect(await res.text()).toBe('answer 1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(399);
    expect(seen).toHaveLength(1);
  });

  it('a POST with idempotencyKey: hedged, every attempt with the same key', async () => {
    const { url, seen } = await start();
    const post = withHedging(fetch, { delayMs: DELAY_MS, idempotencyKey: true });
    const res = await post(url, { method: 'POST', body: 'x' });
    expect(await res.text()).toBe('fast 2');
    expect(seen).toHaveLength(2);
    expect(seen[0]!.key).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(seen[1]!.key).toBe(seen[0]!.key);
  });

  it('a 503 is a failed attempt: the next hedge goes at once; when all fail, the last response is returned with its retryInfo', async () => {
    const { url, seen } = await start((n, res) => {
      res.statusCode = 503;
      res.end(`busy ${n}`);
    });
    const get = withHedging(fetch, { delayMs: 10_000, maxAttempts: 3 });
    const started = performance.now();
    const res = await get(url);
    expect(performance.now() - started).toBeLessThan(10_000); // never waited for the 10 s delay
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy 3');
    expect(retryInfo(res)).toMatchObject({ attempts: 3, reason: 'exhausted' });
    expect(seen).toHaveLength(3);
  });

  it('a budget that refuses: no hedge, the slow answer', async () => {
    const { url, seen } = await start((n, res) => setTimeout(() => res.end(`answer ${n}`), 300));
    const budget = retryRatioBudget({ ratio: 0, minRetriesPerWindow: 0 });
    const get = withHedging(fetch, { delayMs: 50, budget });
    const res = await get(url);
    expect(await res.text()).toBe('answer 1');
    expect(seen).toHaveLength(1);
  });

  it("the caller's signal aborts the winner's body after the call has returned (fetch semantics), and only then", async () => {
    let tail: (() => void) | undefined;
    const { url } = await start((n, res) => {
      if (n === 1) return; // the first attempt hangs until cancelled
      res.write('head ');
      tail = () => res.end('tail');
    });
    const controller = new AbortController();
    const get = withHedging(fetch, { delayMs: DELAY_MS });
    const res = await get(url, { signal: controller.signal });
    expect(res.status).toBe(200);
    const reading = res.text();
    controller.abort(new Error('caller gone'));
    await expect(reading).rejects.toThrow('caller gone');
    tail?.();
  });

  it('without an abort, the returned body reads to its end', async () => {
    const { url } = await start((n, res) => {
      if (n === 1) return;
      res.write('head ');
      setTimeout(() => res.end('tail'), 50);
    });
    const controller = new AbortController();
    const res = await withHedging(fetch, { delayMs: DELAY_MS })(url, { signal: controller.signal });
    expect(await res.text()).toBe('head tail');
  });

  it('options are checked: delayMs required, unknown keys named', () => {
    expect(() => withHedging(fetch, {} as never)).toThrow(/withHedging: delayMs is required/);
    expect(() => withHedging(fetch, { delayMs: 5, retryStatuses: [700] })).toThrow(/retryStatuses/);
    expect(() => withHedging(fetch, { delayMs: 5, maxAttempt: 2 } as never)).toThrow(/maxAttempt /);
  });
});

describe('hedgingInterceptor (undici) on a real server', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.close();
  });
  const dispatcher = (options: Parameters<typeof hedgingInterceptor>[0]) => {
    const agent = new Agent();
    agents.push(agent);
    return agent.compose(hedgingInterceptor(options));
  };

  it('a slow first response: the hedge answers near the delay, the first is cancelled', async () => {
    const { url, seen } = await start();
    const started = performance.now();
    const res = await request(url, { dispatcher: dispatcher({ delayMs: DELAY_MS }) });
    expect(await res.body.text()).toBe('fast 2');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(elapsed).toBeLessThan(SLOW_MS);
    expect(seen.map((s) => s.attempt)).toEqual([undefined, '2']);
    await until(() => seen[0]!.cancelled);
    expect(seen[0]!.cancelled).toBe(true);
  });

  it('a POST without an idempotency key is dispatched once', async () => {
    const { url, seen } = await start((n, res) => setTimeout(() => res.end(`answer ${n}`), 400));
    const res = await request(url, { method: 'POST', body: 'x', dispatcher: dispatcher({ delayMs: DELAY_MS }) });
    expect(await res.body.text()).toBe('answer 1');
    expect(seen).toHaveLength(1);
  });

  it('every attempt 503: the last response is delivered', async () => {
    const { url, seen } = await start((n, res) => {
      res.statusCode = 503;
      res.end(`busy ${n}`);
    });
    const res = await request(url, { dispatcher: dispatcher({ delayMs: 10_000, maxAttempts: 2 }) });
    expect(res.statusCode).toBe(503);
    expect(await res.body.text()).toBe('busy 2');
    expect(seen).toHaveLength(2);
  });
});

describe('hedgingAdapter (axios) on a real server', () => {
  it('a slow first response: the hedge answers near the delay, the first is cancelled', async () => {
    const { url, seen } = await start();
    const started = performance.now();
    const res = await axios.get<string>(url, { adapter: hedgingAdapter({ delayMs: DELAY_MS }), responseType: 'text' });
    expect(res.data).toBe('fast 2');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(elapsed).toBeLessThan(SLOW_MS);
    expect(seen.map((s) => s.attempt)).toEqual([undefined, '2']);
    await until(() => seen[0]!.cancelled);
    expect(seen[0]!.cancelled).toBe(true);
  });

  it('a POST without an idempotency key is sent once', async () => {
    const { url, seen } = await start((n, res) => setTimeout(() => res.end(`answer ${n}`), 400));
    const res = await axios.post<string>(url, 'x', { adapter: hedgingAdapter({ delayMs: DELAY_MS }), responseType: 'text' });
    expect(res.data).toBe('answer 1');
    expect(seen).toHaveLength(1);
  });

  it('a network failure (connection refused) is non-fatal: the next hedge goes at once', async () => {
    const { url, seen } = await start((n, res) => res.end(`ok ${n}`));
    let n = 0;
    // The first attempt fails as axios reports a refused connection (ERR_NETWORK), the second goes through axios's http adapter.
    const base = axios.getAdapter('http');
    const adapter = hedgingAdapter({
      delayMs: 10_000,
      adapter: (config) => (++n === 1 ? Promise.reject(new axios.AxiosError('Network Error', 'ERR_NETWORK', config)) : base(config)),
    });
    const started = performance.now();
    const res = await axios.get<string>(url, { adapter, responseType: 'text' });
    expect(res.data).toBe('ok 1');
    expect(performance.now() - started).toBeLessThan(10_000); // the hedge went at once, not after the 10 s delay
    expect(seen).toHaveLength(1);
  });
});

describe('the hedging fetch takes idempotencyKey per request, and nothing of the retrying fetch', () => {
  // The hedger fixes the attempts and their timing when it is made: a per-request policy or hook
  // would be silently ignored, so it is refused, naming the field. Nothing is sent (port 9: discard).
  it.each([
    [{ maxAttempts: 2 }, 'withHedging: maxAttempts is not a per-request option of the hedging fetch (idempotencyKey), got 2'],
    [{ beforeAttempt: () => undefined }, 'withHedging: beforeAttempt is not a per-request option of the hedging fetch (idempotencyKey), got a function'],
    [{ bodyFactory: () => 'x' }, 'withHedging: bodyFactory is not supported by the hedging fetch: hedge requests whose body can be sent again, got a function'],
    [{ idempotencyKey: 3 }, 'withHedging: idempotencyKey must be a boolean or a function returning the key, got 3'],
  ])('%o is refused', async (options, message) => {
    let sent = 0;
    const hedged = withHedging(async () => {
      sent++;
      return new Response('ok');
    }, { delayMs: 5 });
    await expect(hedged('http://127.0.0.1:9/', { method: 'POST' }, options as never)).rejects.toThrow(message);
    expect(sent).toBe(0);
  });

  it('beforeAttempt is not a hedging option', () => {
    expect(() => withHedging(fetch, { delayMs: 5, beforeAttempt: () => undefined } as never)).toThrow('withHedging: beforeAttempt is not a hedging option');
  });
});
