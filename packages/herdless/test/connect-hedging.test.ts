import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { connectRetryInterceptor, type ConnectRetryInterceptorOptions, type GrpcGiveUpEvent, type GrpcHedgeEvent } from 'herdless/connect';
import { circuitBreaker, consecutiveFailures, type TelemetryEvent } from 'herdless';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedThrottle } from './support/scripted-throttle.js';
import { FlakyService, startConnectServer, type ConnectFlakyServer } from './support/connect-server.js';
import type { Outcome } from './support/grpc-server.js';

/*
 * gRFC A6 hedging through the Connect interceptor, on a real Connect server, over each protocol.
 * Real time: the hedge delay is 200 ms and the slow answer 5 s away. Times are checked from below
 * (the call takes at least the delay; the server sees the hedge at least 160 ms after the first, the
 * first request's trip allowed for) and from above only against something seconds away: the slow
 * answer (5 s), or 1 s for the hedge's arrival (5× the delay; on an idle machine it is 200–203 ms).
 * "At once" after a non-fatal status is told apart from "at the delay" by a client whose delay is 10 s.
 */
const DELAY_MS = 200;
const serviceConfig = {
  methodConfig: [{ name: [{ service: 'test.Flaky' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.2s', nonFatalStatusCodes: ['UNAVAILABLE'] } }],
};

let server: ConnectFlakyServer;
const sessions: Http2SessionManager[] = [];
let ids = 0;
beforeEach(async () => {
  server = await startConnectServer();
});
afterEach(async () => {
  for (const s of sessions.splice(0)) s.abort();
  await server.close();
});

const PROTOCOLS = { connect: createConnectTransport, grpc: createGrpcTransport, 'grpc-web': createGrpcWebTransport } as const;
type FlakyClient = Client<typeof FlakyService> & { unary(req: { value: string }, options?: { timeoutMs?: number }): Promise<{ value: string }> };

async function client(protocol: keyof typeof PROTOCOLS, config: object = serviceConfig, options: Partial<ConnectRetryInterceptorOptions> = {}): Promise<FlakyClient> {
  const sessionManager = new Http2SessionManager(server.baseUrl);
  sessions.push(sessionManager);
  const transport: Transport = PROTOCOLS[protocol]({ baseUrl: server.baseUrl, httpVersion: '2', sessionManager, interceptors: [connectRetryInterceptor({ serviceConfig: config, ...options })] } as never);
  const c = createClient(FlakyService, transport) as FlakyClient;
  await unary(c, [{ ok: true }]); // connect the session first
  return c;
}

async function unary(c: FlakyClient, script: Outcome[]): Promise<{ error: ConnectError | undefined; value: unknown; id: string; elapsed: number }> {
  const id = `call-${++ids}`;
  const started = performance.now();
  try {
    const res = await c.unary({ value: JSON.stringify({ id, script }) }, { timeoutMs: 10_000 });
    return { error: undefined, value: JSON.parse(res.value), id, elapsed: performance.now() - started };
  } catch (error) {
    return { error: ConnectError.from(error), value: undefined, id, elapsed: performance.now() - started };
  }
}

describe.each(Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[])('connectRetryInterceptor with a hedgingPolicy, over the %s protocol', (protocol) => {
  it('the first attempt hangs: the hedge goes at hedgingDelay and answers; the first is cancelled', async () => {
    const c = await client(protocol);
    const { error, value, id, elapsed } = await unary(c, [{ hangMs: 5000 }, { ok: true }]);
    expect(error).toBeUndefined();
    expect(value).toEqual({ ok: true, attempt: 2 });
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(elapsed).toBeLessThan(5000);
    const seen = server.arrivals.filter((a) => a.id === id);
    expect(seen.map((a) => a.previous)).toEqual(['', '1']);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(DELAY_MS - 40);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(5 * DELAY_MS);
    const end = performance.now() + 3000;
    while (seen[0]!.cancelled !== true && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(seen[0]!.cancelled).toBe(true);
    // The hedge carries the time left of the call's timeout.
    expect(seen[1]!.timeoutMs).toBeLessThanOrEqual(10_000 - DELAY_MS + 5);
  });

  it('UNAVAILABLE then OK: the next hedge goes at once; INVALID_ARGUMENT: the error, no hedge', async () => {
    const slowHedge = { methodConfig: [{ ...serviceConfig.methodConfig[0]!, hedgingPolicy: { ...serviceConfig.methodConfig[0]!.hedgingPolicy, hedgingDelay: '10s' } }] };
    const quick = await unary(await client(protocol, slowHedge), [{ code: Code.Unavailable }, { ok: true }]);
    expect(quick.value).toEqual({ ok: true, attempt: 2 });
    expect(quick.elapsed).toBeLessThan(10_000); // at once, not after the 10 s delay
    const c = await client(protocol);
    const fatal = await unary(c, [{ code: Code.InvalidArgument }, { ok: true }]);
    expect(fatal.error?.code).toBe(Code.InvalidArgument);
    await new Promise((r) => setTimeout(r, DELAY_MS + 50));
    expect(server.arrivals.filter((a) => a.id === fatal.id)).toHaveLength(1);
  });

  it('every attempt UNAVAILABLE: the last attempt\'s error, unchanged', async () => {
    const c = await client(protocol);
    const { error, id } = await unary(c, [{ code: Code.Unavailable }]);
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toBe('scripted Unavailable');
    expect(server.arrivals.filter((a) => a.id === id)).toHaveLength(2);
  });
});

const slowHedge = { methodConfig: [{ ...serviceConfig.methodConfig[0]!, hedgingPolicy: { ...serviceConfig.methodConfig[0]!.hedgingPolicy, hedgingDelay: '10s' } }] };

describe('connectRetryInterceptor: hedged calls report through the hooks and telemetry', () => {
  async function hooked(config: object = serviceConfig, events?: TelemetryEvent[]) {
    const hedges: GrpcHedgeEvent[] = [];
    const giveUps: GrpcGiveUpEvent[] = [];
    const retries: unknown[] = [];
    const c = await client('grpc', config, {
      onHedge: (e) => void hedges.push(e),
      onGiveUp: (e) => void giveUps.push(e),
      onRetry: (e) => void retries.push(e),
      ...(events === undefined ? {} : { telemetry: { onEvent: (e: TelemetryEvent) => void events.push(e) } }),
    });
    hedges.length = 0; // the session's warm-up call
    return { c, hedges, giveUps, retries };
  }

  it('a hedge at hedgingDelay: onHedge hears which attempt, why and when; no give-up, no onRetry', async () => {
    const { c, hedges, giveUps, retries } = await hooked();
    const { error } = await unary(c, [{ hangMs: 5000 }, { ok: true }]);
    expect(error).toBeUndefined();
    expect(hedges.map(({ afterMs: _afterMs, ...rest }) => rest)).toEqual([{ method: '/test.Flaky/Unary', attempt: 2, trigger: 'delay' }]);
    expect(hedges[0]!.afterMs).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(giveUps).toEqual([]);
    expect(retries).toEqual([]);
  });

  it('every attempt UNAVAILABLE: onHedge (failure, the code), onGiveUp exhausted speaking of hedging; telemetry has the method and each status', async () => {
    const events: TelemetryEvent[] = [];
    const { c, hedges, giveUps } = await hooked(slowHedge, events);
    events.length = 0;
    const { error } = await unary(c, [{ code: Code.Unavailable }]);
    expect(error?.code).toBe(Code.Unavailable);
    expect(hedges.map(({ afterMs: _afterMs, ...rest }) => rest)).toEqual([{ method: '/test.Flaky/Unary', attempt: 2, trigger: 'failure', code: Code.Unavailable }]);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['exhausted', 2, Code.Unavailable, true]]);
    expect(giveUps[0]!.message).toMatch(/^hedged call gave up after 2 attempts \(the first and 1 hedge\) \(exhausted\)/);
    const start = events.find((e) => e.type === 'attempt-start');
    expect(start?.call).toEqual({ layer: 'hedge', client: 'connect', method: '/test.Flaky/Unary', url: `${server.baseUrl}/test.Flaky/Unary`, name: 'test.Flaky' });
    expect(events.filter((e) => e.type === 'attempt-end').map((e) => e.type === 'attempt-end' && [e.attempt, e.outcome, e.status])).toEqual([
      [1, 'failure', Code.Unavailable],
      [2, 'failure', Code.Unavailable],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'exhausted', attempts: 2, status: Code.Unavailable });
  });

  it('a fatal status: onGiveUp fatal after one attempt; the caller cancels: onGiveUp aborted', async () => {
    const { c, giveUps } = await hooked();
    await unary(c, [{ code: Code.InvalidArgument }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), DELAY_MS + 100);
    await c.unary({ value: JSON.stringify({ id: `call-${++ids}`, script: [{ hangMs: 5000 }] }) }, { signal: controller.signal } as never).catch(() => undefined);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([
      ['fatal', 1, Code.InvalidArgument, true],
      ['aborted', 2, Code.Canceled, true],
    ]);
  });
});

describe('connectRetryInterceptor: the hedged request is held in the retry buffer (gRFC A6)', () => {
  it('a request larger than perRpcBufferLimit commits the call: sent once, never hedged; onGiveUp committed', async () => {
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = await client('grpc', slowHedge, { perRpcBufferLimit: 16, onGiveUp: (e) => void giveUps.push(e) });
    const { error, id } = await unary(c, [{ code: Code.Unavailable }, { ok: true }]);
    expect(error?.code).toBe(Code.Unavailable);
    expect(server.arrivals.filter((a) => a.id === id)).toHaveLength(1);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['committed', 1, Code.Unavailable, true]]);
    expect(giveUps[0]!.message).toMatch(/^the request outgrew the retry buffer \(perRpcBufferLimit 16,/);
  });

  it('the bytes are given back at each call’s end: a pool that holds one request hedges call after call', async () => {
    // Each request below is a StringValue of about 54 bytes (the warm-up's 41): a pool of 80 holds
    // one at a time, so a request left in it would stop the next call from being hedged.
    const c = await client('grpc', slowHedge, { retryBufferSize: 80 });
    for (let i = 0; i < 3; i++) {
      const { error, id } = await unary(c, [{ code: Code.Unavailable }, { ok: true }]);
      expect(error).toBeUndefined();
      expect(server.arrivals.filter((a) => a.id === id)).toHaveLength(2);
    }
  });
});

describe('connectRetryInterceptor: every hedged attempt goes through the breaker', () => {
  it('UNAVAILABLE attempts open it; then a call is refused without being sent (UNAVAILABLE, onGiveUp circuit-open)', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 600_000 });
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = await client('grpc', slowHedge, { breaker, onGiveUp: (e) => void giveUps.push(e) });
    const failed = await unary(c, [{ code: Code.Unavailable }]);
    expect(failed.error?.code).toBe(Code.Unavailable);
    expect(breaker.state).toBe('open');
    const refused = await unary(c, [{ ok: true }]);
    expect(refused.error?.code).toBe(Code.Unavailable);
    expect(refused.error?.rawMessage).toMatch(/circuit/i);
    expect(server.arrivals.filter((a) => a.id === refused.id)).toHaveLength(0);
    expect(giveUps.map((e) => [e.reason, e.code, e.hedged])).toEqual([
      ['exhausted', Code.Unavailable, true],
      ['circuit-open', Code.Unavailable, true],
    ]);
  });

  it('a loser aborted by the winner is not counted: a hedged success leaves a threshold-1 breaker closed', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000, isFailure: () => true });
    const c = await client('grpc', serviceConfig, { breaker });
    const { error, value } = await unary(c, [{ hangMs: 5000 }, { ok: true }]);
    expect(error).toBeUndefined();
    expect(value).toEqual({ ok: true, attempt: 2 });
    await new Promise((r) => setTimeout(r, 50));
    expect(breaker.state).toBe('closed');
  });
});

describe('connectRetryInterceptor: adaptive throttling is asked before every hedged attempt', () => {
  it('a refused first try is never sent: Unavailable "adaptive throttling rejected the call locally", onGiveUp throttled with 0 attempts', async () => {
    const throttle = scriptedThrottle();
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = await client('grpc', serviceConfig, { throttle, onGiveUp: (e) => void giveUps.push(e) });
    throttle.reset([false]);
    const refused = await unary(c, [{ ok: true }]);
    expect(refused.error?.code).toBe(Code.Unavailable);
    expect(refused.error?.rawMessage).toBe('adaptive throttling rejected the call locally');
    expect(server.arrivals.filter((a) => a.id === refused.id)).toHaveLength(0);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['throttled', 0, Code.Unavailable, true]]);
  });

  it('a refused hedge is not sent: after an Unavailable the call ends with that error (onGiveUp throttled, 1 attempt)', async () => {
    const throttle = scriptedThrottle();
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = await client('grpc', slowHedge, { throttle, onGiveUp: (e) => void giveUps.push(e) });
    throttle.reset([true, false]);
    const failed = await unary(c, [{ code: Code.Unavailable }, { ok: true }]);
    expect(failed.error?.code).toBe(Code.Unavailable);
    expect(server.arrivals.filter((a) => a.id === failed.id)).toHaveLength(1);
    expect(throttle.asked).toEqual([false, true]);
    expect(throttle.told).toEqual([false]);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.hedged])).toEqual([['throttled', 1, true]]);
  });
});
