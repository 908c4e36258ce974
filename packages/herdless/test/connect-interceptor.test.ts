import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { connectRetryInterceptor, type ConnectRetryInterceptorOptions, type GrpcGiveUpEvent, type GrpcRetryEvent } from 'herdless/connect';
import { grpcThrottleOf } from 'herdless/grpc';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlakyService, startConnectServer, type ConnectFlakyServer } from './support/connect-server.js';
import { DEADLINE_MS, a6ServiceConfig, deadlineServiceConfig, expectA6Waits, type Outcome } from './support/grpc-server.js';
import { invalidOption } from './support/invalid-option.js';

const UNAVAILABLE = Code.Unavailable;
const a6Config = a6ServiceConfig;

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

const PROTOCOLS = {
  connect: createConnectTransport,
  grpc: createGrpcTransport,
  'grpc-web': createGrpcWebTransport,
} as const;
type Protocol = keyof typeof PROTOCOLS;

interface Seen {
  retries: GrpcRetryEvent[];
  giveUps: GrpcGiveUpEvent[];
}

type FlakyClient = Client<typeof FlakyService> & { unary(req: { value: string }, options?: { timeoutMs?: number }): Promise<{ value: string }> };

function client(protocol: Protocol, options: Partial<ConnectRetryInterceptorOptions> = {}): { client: FlakyClient } & Seen {
  const seen: Seen = { retries: [], giveUps: [] };
  const sessionManager = new Http2SessionManager(server.baseUrl);
  sessions.push(sessionManager);
  const interceptor = connectRetryInterceptor({
    serviceConfig: a6Config(),
    onRetry: (e) => void seen.retries.push(e),
    onGiveUp: (e) => void seen.giveUps.push(e),
    ...options,
  });
  const transport: Transport = PROTOCOLS[protocol]({ baseUrl: server.baseUrl, httpVersion: '2', sessionManager, interceptors: [interceptor] } as never);
  return { client: createClient(FlakyService, transport) as FlakyClient, ...seen };
}

async function unary(c: FlakyClient, script: Outcome[], timeoutMs?: number): Promise<{ error: ConnectError | undefined; value: unknown; id: string }> {
  const id = `call-${++ids}`;
  try {
    const res = await c.unary({ value: JSON.stringify({ id, script }) }, timeoutMs === undefined ? {} : { timeoutMs });
    return { error: undefined, value: JSON.parse(res.value), id };
  } catch (error) {
    return { error: ConnectError.from(error), value: undefined, id };
  }
}

const arrivalsOf = (id: string) => server.arrivals.filter((a) => a.id === id);

describe.each(Object.keys(PROTOCOLS) as Protocol[])('connectRetryInterceptor over the %s protocol, against a real Connect server', (protocol) => {
  it("A6's example policy, UNAVAILABLE twice then OK: 3 attempts, waits in [80, 120] and [160, 240] ms", async () => {
    const c = client(protocol);
    const { error, value, id } = await unary(c.client, [{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }]);
    expect(error).toBeUndefined();
    expect(value).toEqual({ ok: true, attempt: 3 });
    const arrivals = arrivalsOf(id);
    expect(arrivals.map((a) => a.previous)).toEqual(['', '1', '2']);
    expectA6Waits(c.retries.map((r) => r.delayMs), arrivals);
  });

  it('INVALID_ARGUMENT: 1 attempt, the error as the server sent it', async () => {
    const c = client(protocol);
    const { error, id } = await unary(c.client, [{ code: Code.InvalidArgument }, { ok: true }]);
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toBe('scripted InvalidArgument');
    expect(arrivalsOf(id)).toHaveLength(1);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['fatal']);
  });

  it('pushback 2000: the retry waits 2000 ms, and the next backoff starts again at 100 ± 20% ms', async () => {
    const c = client(protocol);
    const { error, id } = await unary(c.client, [{ code: UNAVAILABLE, pushback: '2000' }, { code: UNAVAILABLE }, { ok: true }]);
    expect(error).toBeUndefined();
    const arrivals = arrivalsOf(id);
    expect(arrivals).toHaveLength(3);
    expect(c.retries.map((r) => r.delaySource)).toEqual(['pushback', 'backoff']);
    expect(c.retries[0]!.delayMs).toBe(2000);
    expect(c.retries[1]!.delayMs).toBeGreaterThanOrEqual(80);
    expect(c.retries[1]!.delayMs).toBeLessThanOrEqual(120);
    expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(1999);
  });

  it.each(['-1', 'abc'])('pushback %j: no retry', async (pushback) => {
    const c = client(protocol);
    const { error, id } = await unary(c.client, [{ code: UNAVAILABLE, pushback }, { ok: true }]);
    expect(error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(id)).toHaveLength(1);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['do-not-retry']);
  });

  it('retryThrottling {10, 0.1}: after 5 failures to one server name, no retry on any transport to it', async () => {
    const config = a6Config({ maxTokens: 10, tokenRatio: 0.1 });
    const a = client(protocol, { serviceConfig: config, random: { random: () => 0.5 } });
    const b = client(protocol, { serviceConfig: config });
    const first = await unary(a.client, [{ code: UNAVAILABLE }]);
    expect(arrivalsOf(first.id)).toHaveLength(4);
    const onB = await unary(b.client, [{ code: UNAVAILABLE }, { ok: true }]);
    expect(onB.error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(onB.id)).toHaveLength(1);
    expect(b.giveUps.map((g) => g.reason)).toEqual(['budget']);
    expect(grpcThrottleOf(server.baseUrl)?.tokens).toBe(5);
  });

  it("the call's timeout spans every attempt: a wait that would cross it is not started", async () => {
    const c = client(protocol, { serviceConfig: deadlineServiceConfig(), random: { random: () => 0.5 } });
    // Connect first: the transport's set-up would otherwise come out of the timeout's slack.
    expect((await unary(c.client, [{ ok: true }])).error).toBeUndefined();
    // Waits 10 and 1000 ms fit in 6000 ms; the next one (60 s) would cross the timeout whatever the
    // round trips took. The 4990 ms left over are slack for a busy machine's three round trips.
    const { error, id } = await unary(c.client, [{ code: UNAVAILABLE }], DEADLINE_MS);
    expect(error?.code).toBe(UNAVAILABLE);
    const arrivals = arrivalsOf(id);
    expect(arrivals).toHaveLength(3);
    expect(c.retries.map((r) => r.delayMs)).toEqual([10, 1000]);
    // Each retry sends the time that is left, not the whole 6000 ms again: at most the timeout less
    // the waits before it, and still some left for the last attempt.
    const left = arrivals.map((a) => a.timeoutMs!);
    expect(left[0]).toBeLessThanOrEqual(DEADLINE_MS);
    expect(left[1]).toBeLessThanOrEqual(DEADLINE_MS - 10);
    expect(left[2]).toBeLessThanOrEqual(DEADLINE_MS - 1010);
    expect(left[2]).toBeGreaterThan(0);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['deadline']);
  });
});

describe('connectRetryInterceptor: options', () => {
  it.each([
    [{ serviceConfig: { methodConfig: [{ name: [{}], retryPolicy: { maxAttempts: 1 } }] } }, 'serviceConfig.methodConfig[0].retryPolicy.maxAttempts', 1],
    [{ serviceConfig: { methodConfig: [{ retryPolicy: {} }] } }, 'serviceConfig.methodConfig[0].name', undefined],
    [{ target: 'x' }, 'target', 'x'],
    [{ retryableStatusCodes: ['OK'] }, 'retryableStatusCodes[0]', 'OK'],
  ])('%j → InvalidOptionError naming %s', (options, field, value) => {
    const error = invalidOption(() => connectRetryInterceptor(options as never));
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toContain('connectRetryInterceptor');
  });
});
