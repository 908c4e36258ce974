// Keyed breakers: one breaker per host or server name, bounded in number, idle ones dropped — and
// the adapters' `breaker` option, against real loopback servers (HTTP: fetch, undici, axios; gRPC:
// grpc-js and Connect), where one failing server out of several must open only its own breaker.
import type http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ManualClock,
  circuitBreaker,
  consecutiveFailures,
  constantBackoff,
  isCircuitOpenError,
  isRetryError,
  keyedBreakers,
  type BreakerSnapshot,
  type CircuitBreaker,
  type KeyedBreakers,
} from 'herdless';
import { connectRetryInterceptor } from 'herdless/connect';
import { grpcRetryInterceptor } from 'herdless/grpc-js';
import { withRetry } from 'herdless/http';
import { FlakyService, startConnectServer, type ConnectFlakyServer } from './support/connect-server.js';
import { FlakyClient, startFlakyServer, type FlakyClientInstance, type FlakyServer, type Outcome } from './support/grpc-server.js';
import { httpClients } from './support/http-clients.js';
import { invalidOption } from './support/invalid-option.js';
import { startLoopback, stopLoopback } from './support/loopback.js';

/** Per-host breakers that open after 3 failures in a row and stay open 10 minutes (longer than any test). */
const perHost = (clock = new ManualClock(0), options: { maxKeys?: number; idleMs?: number } = {}): KeyedBreakers =>
  keyedBreakers((host) => circuitBreaker({ name: host, clock, counting: consecutiveFailures({ threshold: 3 }), openDurationMs: 600_000 }), { clock, ...options });

describe('keyedBreakers', () => {
  it('10 000 distinct hosts never hold more than maxKeys breakers; the most recent stay', () => {
    const breakers = perHost(new ManualClock(0), { maxKeys: 100 });
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      breakers.get(`host-${i}.example:443`);
      most = Math.max(most, breakers.size);
    }
    expect(most).toBe(100);
    expect(breakers.has('host-9999.example:443')).toBe(true);
    expect(breakers.has('host-9899.example:443')).toBe(false);
    expect([...breakers.keys()][0]).toBe('host-9900.example:443');
  });

  it('through the retrying fetch: 10 000 requests to distinct hosts keep at most maxKeys breakers', async () => {
    const breakers = perHost(new ManualClock(0), { maxKeys: 50 });
    let most = 0;
    const stub = async (): Promise<Response> => {
      most = Math.max(most, breakers.size);
      return new Response('ok');
    };
    const api = withRetry(stub, { breaker: breakers });
    for (let i = 0; i < 10_000; i++) await api(`https://h${i}.example/x`);
    expect(most).toBe(50);
    expect(breakers.size).toBe(50);
    expect(breakers.peek('h9999.example')?.name).toBe('h9999.example');
  });

  it('a closed breaker unused for idleMs is dropped at the next get(); a breaker not closed holds the sweep up', async () => {
    const clock = new ManualClock(0);
    const breakers = perHost(clock, { idleMs: 1000 });
    const down = breakers.get('down');
    for (let i = 0; i < 3; i++) await down.execute(() => Promise.reject(Object.assign(new Error('x'), { status: 503 }))).catch(() => undefined);
    expect(down.state).toBe('open');
    breakers.get('idle');
    await clock.advance(1000);
    breakers.get('fresh');
    expect([...breakers.keys()]).toEqual(['down', 'idle', 'fresh']); // 'down' is open: kept, and the sweep stops there
    down.reset();
    breakers.get('fresh');
    expect([...breakers.keys()]).toEqual(['fresh']);
    await clock.advance(999);
    breakers.get('other');
    expect([...breakers.keys()]).toEqual(['fresh', 'other']);
    expect(breakers.delete('other')).toBe(true);
    breakers.clear();
    expect(breakers.size).toBe(0);
  });

  it('per-host state survives a restart: each host starts from its own snapshot, an unreadable one closed', async () => {
    const clock = new ManualClock(0);
    const options = { clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, now: () => 1_764_600_000_000 };
    const before = keyedBreakers((host) => circuitBreaker({ ...options, name: host }));
    await before.get('down.example').execute(() => Promise.reject(Object.assign(new Error('x'), { status: 503 }))).catch(() => undefined);
    before.get('up.example');
    const saved = JSON.parse(JSON.stringify(Object.fromEntries([...before.keys()].map((host) => [host, before.peek(host)!.snapshot()])))) as Record<string, BreakerSnapshot>;
    saved['odd.example'] = { ...saved['up.example']!, schemaVersion: 7 as never };
    const after = keyedBreakers((host) => {
      try {
        return circuitBreaker({ ...options, clock: new ManualClock(0), name: host, initialState: saved[host] });
      } catch {
        return circuitBreaker({ ...options, name: host });
      }
    });
    expect(after.get('down.example').state).toBe('open');
    expect(after.get('up.example').state).toBe('closed');
    expect(after.get('odd.example').state).toBe('closed');
  });

  it('one CircuitBreaker in the option is shared by every host; the caller\'s abort is not counted', async () => {
    const shared = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 2 }) });
    const hung = (_input: unknown, init?: RequestInit): Promise<Response> =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));
    const controller = new AbortController();
    const pending = withRetry(hung, { breaker: shared })('https://a.example/', { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect(shared.snapshot().counts).toMatchObject({ consecutiveFailures: 0 });
    const failing = async (): Promise<Response> => new Response('down', { status: 503 });
    const api = withRetry(failing, { breaker: shared, maxAttempts: 1 });
    await api('https://a.example/');
    await api('https://b.example/');
    expect(shared.state).toBe('open');
    await expect(api('https://c.example/')).rejects.toMatchObject({ reason: 'circuit-open' });
  });

  const bad: [string, () => unknown, string][] = [
    ['a factory that is not a function', () => keyedBreakers('x' as never), 'factory'],
    ['maxKeys 0', () => keyedBreakers(() => circuitBreaker(), { maxKeys: 0 }), 'maxKeys'],
    ['idleMs 0', () => keyedBreakers(() => circuitBreaker(), { idleMs: 0 }), 'idleMs'],
    ['idleMs past a timer', () => keyedBreakers(() => circuitBreaker(), { idleMs: 2 ** 31 }), 'idleMs'],
    ['a clock without now()', () => keyedBreakers(() => circuitBreaker(), { clock: {} as never }), 'clock'],
    ['a misspelt option', () => keyedBreakers(() => circuitBreaker(), { maxkeys: 5 } as never), 'maxkeys'],
    ['a factory returning something else', () => keyedBreakers(() => ({}) as CircuitBreaker).get('a'), 'factory'],
    ['a key that is not a string', () => keyedBreakers(() => circuitBreaker()).get(5 as never), 'key'],
    ['an adapter breaker that is neither', () => withRetry(fetch, { breaker: { get: 1 } as never }), 'breaker'],
    ['a grpc-js interceptor with keyed breakers and no target', () => grpcRetryInterceptor({ breaker: perHost() }), 'target'],
  ];
  it.each(bad)('refuses %s, naming the field', (_name, make, field) => {
    expect(invalidOption(make).field).toBe(field);
  });
});

describe('one failing host out of 10 real loopback servers opens only its own breaker', () => {
  const servers: { server: http.Server; origin: string; hits: number }[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 10; i++) {
      const entry = { server: undefined as unknown as http.Server, origin: '', hits: 0 };
      const failing = i === 3;
      const { server, origin } = await startLoopback((_req, res) => {
        entry.hits++;
        res.writeHead(failing ? 503 : 200, { 'content-type': 'text/plain' }).end(failing ? 'down' : 'ok');
      });
      Object.assign(entry, { server, origin });
      servers.push(entry);
    }
  });
  afterAll(async () => {
    for (const s of servers) await stopLoopback(s.server);
  });

  let origin = '';
  for (const driver of httpClients(() => origin)) {
    it(`${driver.name}`, async () => {
      for (const s of servers) s.hits = 0;
      const breakers = perHost();
      const client = driver.make({ breaker: breakers, maxAttempts: 2, backoff: constantBackoff({ delayMs: 0 }) });
      const outcomes: string[][] = servers.map(() => []);
      try {
        for (let round = 0; round < 4; round++) {
          for (const [i, s] of servers.entries()) {
            origin = s.origin;
            const out = await client.send({ path: '/' });
            outcomes[i]!.push(out.status === undefined ? String(out.reason) : String(out.status));
          }
        }
      } finally {
        await client.close();
      }
      const host = (s: { origin: string }) => new URL(s.origin).host;
      expect(breakers.size).toBe(10);
      for (const [i, s] of servers.entries()) {
        if (i === 3) {
          // Round 1: two attempts, two failures; round 2: one more opens it, the retry is refused.
          expect(outcomes[i]).toEqual(['503', 'circuit-open', 'circuit-open', 'circuit-open']);
          expect(s.hits).toBe(3);
          expect(breakers.peek(host(s))?.state).toBe('open');
        } else {
          expect(outcomes[i]).toEqual(['200', '200', '200', '200']);
          expect(s.hits).toBe(4);
          expect(breakers.peek(host(s))?.state).toBe('closed');
        }
      }
    });
  }

  it('the retrying fetch rejects a refused call with a RetryError (circuit-open) whose cause says which breaker', async () => {
    const breakers = perHost();
    const api = withRetry(fetch, { breaker: breakers, maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) });
    await api(servers[3]!.origin);
    const refused = await api(servers[3]!.origin).catch((e: unknown) => e);
    expect(isRetryError(refused) && refused.reason).toBe('circuit-open');
    expect(isCircuitOpenError((refused as Error).cause)).toBe(true);
  });
});

describe('gRPC: keyed by server name', () => {
  let flaky: FlakyServer;
  let healthy: FlakyServer;
  const clients: FlakyClientInstance[] = [];
  beforeAll(async () => {
    flaky = await startFlakyServer();
    healthy = await startFlakyServer();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await flaky.close();
    await healthy.close();
  });
  let ids = 0;
  const unary = (c: FlakyClientInstance, script: Outcome[]) =>
    new Promise<{ error: grpc.ServiceError | null; id: string }>((resolve) => {
      const id = `k-${++ids}`;
      c.unary({ id, script }, {}, (error) => resolve({ error, id }));
    });

  it('grpc-js: UNAVAILABLE from one server opens its breaker only; refused calls end UNAVAILABLE without reaching it', async () => {
    const breakers = perHost();
    const make = (port: number) => {
      const target = `127.0.0.1:${port}`;
      const interceptor = grpcRetryInterceptor({ target, breaker: breakers, maxAttempts: 1 });
      const c = new FlakyClient(target, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [interceptor] }) as FlakyClientInstance;
      clients.push(c);
      return c;
    };
    const bad = make(flaky.port);
    const good = make(healthy.port);
    for (let i = 0; i < 3; i++) expect((await unary(bad, [{ code: grpc.status.UNAVAILABLE }])).error?.code).toBe(grpc.status.UNAVAILABLE);
    const before = flaky.arrivals.length;
    const refused = await unary(bad, [{ ok: true }]);
    expect(refused.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(refused.error?.details).toContain('circuit breaker is open');
    expect(flaky.arrivals.length).toBe(before);
    for (let i = 0; i < 3; i++) expect((await unary(good, [{ ok: true }])).error).toBeNull();
    expect(breakers.peek(`127.0.0.1:${flaky.port}`)?.state).toBe('open');
    expect(breakers.peek(`127.0.0.1:${healthy.port}`)?.state).toBe('closed');
  });

  it('Connect: the same, keyed by the request URL host', async () => {
    const servers: ConnectFlakyServer[] = [await startConnectServer(), await startConnectServer()];
    const breakers = perHost();
    type C = Client<typeof FlakyService> & { unary(req: { value: string }): Promise<{ value: string }> };
    const sessions: Http2SessionManager[] = [];
    const clientOf = (baseUrl: string): C => {
      const sessionManager = new Http2SessionManager(baseUrl);
      sessions.push(sessionManager);
      const interceptors = [connectRetryInterceptor({ breaker: breakers, maxAttempts: 1 })];
      return createClient(FlakyService, createConnectTransport({ baseUrl, httpVersion: '2', sessionManager, interceptors })) as C;
    };
    const [bad, good] = servers.map((s) => clientOf(s.baseUrl)) as [C, C];
    const call = async (c: C, script: Outcome[]) => {
      try {
        await c.unary({ value: JSON.stringify({ id: `c-${++ids}`, script }) });
        return 'ok';
      } catch (error) {
        return Code[ConnectError.from(error).code];
      }
    };
    try {
      for (let i = 0; i < 3; i++) expect(await call(bad, [{ code: Code.Unavailable }])).toBe('Unavailable');
      const before = servers[0]!.arrivals.length;
      expect(await call(bad, [{ ok: true }])).toBe('Unavailable');
      expect(servers[0]!.arrivals.length).toBe(before);
      for (let i = 0; i < 3; i++) expect(await call(good, [{ ok: true }])).toBe('ok');
      expect(breakers.peek(new URL(servers[0]!.baseUrl).host)?.state).toBe('open');
      expect(breakers.peek(new URL(servers[1]!.baseUrl).host)?.state).toBe('closed');
    } finally {
      for (const s of sessions) s.abort();
      for (const s of servers) await s.close();
    }
  });
});
