import * as grpc from '@grpc/grpc-js';
import { grpcThrottleOf, type GrpcGiveUpEvent, type GrpcRetryEvent } from 'herdless/grpc';
import { grpcRetryInterceptor, type GrpcJsRetryInterceptorOptions } from 'herdless/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEADLINE_MS, FlakyClient, a6ServiceConfig, deadlineServiceConfig, expectA6Waits, startFlakyServer, type FlakyClientInstance, type FlakyServer, type Outcome } from './support/grpc-server.js';
import { invalidOption } from './support/invalid-option.js';

const UNAVAILABLE = grpc.status.UNAVAILABLE;

const a6Config = a6ServiceConfig;

let server: FlakyServer;
const clients: grpc.Client[] = [];
let ids = 0;

beforeEach(async () => {
  server = await startFlakyServer();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

interface Seen {
  retries: GrpcRetryEvent[];
  giveUps: GrpcGiveUpEvent[];
}

function client(options: Partial<GrpcJsRetryInterceptorOptions> = {}, target = `127.0.0.1:${server.port}`): FlakyClientInstance & Seen {
  const seen: Seen = { retries: [], giveUps: [] };
  const interceptor = grpcRetryInterceptor({
    serviceConfig: a6Config(),
    target,
    onRetry: (e) => void seen.retries.push(e),
    onGiveUp: (e) => void seen.giveUps.push(e),
    ...options,
  });
  const c = new FlakyClient(target, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [interceptor] }) as FlakyClientInstance;
  clients.push(c);
  return Object.assign(c, seen);
}

function unary(c: FlakyClientInstance, script: Outcome[], options: grpc.CallOptions = {}): Promise<{ error: grpc.ServiceError | null; value: unknown; id: string }> {
  const id = `call-${++ids}`;
  return new Promise((resolve) => c.unary({ id, script }, options, (error, value) => resolve({ error, value, id })));
}

function stream(c: FlakyClientInstance, script: Outcome[]): Promise<{ error: grpc.ServiceError | null; messages: unknown[]; id: string; metadata: number }> {
  const id = `call-${++ids}`;
  const messages: unknown[] = [];
  let metadata = 0;
  return new Promise((resolve) => {
    const call = c.stream({ id, script });
    call.on('metadata', () => metadata++);
    call.on('data', (m) => messages.push(m));
    call.on('error', (error: grpc.ServiceError) => resolve({ error, messages, id, metadata }));
    call.on('end', () => resolve({ error: null, messages, id, metadata }));
  });
}

const arrivalsOf = (id: string) => server.arrivals.filter((a) => a.id === id);

describe('grpcRetryInterceptor against a real grpc-js server (gRFC A6 behaviour table)', () => {
  it("A6's example policy, UNAVAILABLE twice then OK: 3 attempts, waits in [80, 120] and [160, 240] ms, grpc-previous-rpc-attempts on retries", async () => {
    const c = client();
    const { error, value, id } = await unary(c, [{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }]);
    expect(error).toBeNull();
    expect(value).toEqual({ ok: true, attempt: 3 });
    const arrivals = arrivalsOf(id);
    expect(arrivals.map((a) => a.previous)).toEqual(['', '1', '2']);
    expect(c.retries.map((r) => [r.attempt, r.code, r.delaySource])).toEqual([
      [1, UNAVAILABLE, 'backoff'],
      [2, UNAVAILABLE, 'backoff'],
    ]);
    expectA6Waits(c.retries.map((r) => r.delayMs), arrivals);
  });

  it('INVALID_ARGUMENT (not in retryableStatusCodes): 1 attempt, the status as the server sent it', async () => {
    const c = client();
    const { error, id } = await unary(c, [{ code: grpc.status.INVALID_ARGUMENT }, { ok: true }]);
    expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(error?.details).toBe('scripted INVALID_ARGUMENT');
    expect(arrivalsOf(id)).toHaveLength(1);
    expect(c.giveUps.map((g) => [g.reason, g.attempts])).toEqual([['fatal', 1]]);
  });

  it('maxAttempts exhausted: 4 attempts (A6 example), then the last status', async () => {
    const c = client({ random: { random: () => 0.5 } });
    const { error, id } = await unary(c, [{ code: UNAVAILABLE }]);
    expect(error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(id).map((a) => a.previous)).toEqual(['', '1', '2', '3']);
    // random 0.5 is the middle of ±20%: the un-jittered A6 values, 100, 200, 400 ms.
    expect(c.retries.map((r) => r.delayMs)).toEqual([100, 200, 400]);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['exhausted']);
  });

  it('pushback 2000: the retry waits 2000 ms, and the next backoff starts again at 100 ± 20% ms', async () => {
    const c = client();
    const { error, id } = await unary(c, [{ code: UNAVAILABLE, pushback: '2000' }, { code: UNAVAILABLE }, { ok: true }]);
    expect(error).toBeNull();
    const arrivals = arrivalsOf(id);
    expect(arrivals).toHaveLength(3);
    expect(c.retries.map((r) => [r.delayMs, r.delaySource])).toEqual([
      [2000, 'pushback'],
      [expect.any(Number), 'backoff'],
    ]);
    const next = c.retries[1]!.delayMs;
    expect(next).toBeGreaterThanOrEqual(80);
    expect(next).toBeLessThanOrEqual(120);
    expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(1999);
  });

  it.each(['-1', 'abc', '1.5', ''])('pushback %j: no retry (gRFC A6: negative or malformed means "do not retry")', async (pushback) => {
    const c = client();
    const { error, id } = await unary(c, [{ code: UNAVAILABLE, pushback }, { ok: true }]);
    expect(error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(id)).toHaveLength(1);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['do-not-retry']);
  });

  it('retryThrottling {10, 0.1}: after 5 failures to one server name, no retry on any channel to it', async () => {
    const config = a6Config({ maxTokens: 10, tokenRatio: 0.1 });
    const a = client({ serviceConfig: config, random: { random: () => 0.5 } }, `127.0.0.1:${server.port}`);
    // Another channel, spelt as a dns: target: the same server name, so the same bucket.
    const b = client({ serviceConfig: config }, `dns:///127.0.0.1:${server.port}`);
    const first = await unary(a, [{ code: UNAVAILABLE }]);
    expect(arrivalsOf(first.id)).toHaveLength(4); // 4 failures: tokens 10 → 6, retries allowed while > 5
    expect(grpcThrottleOf(`127.0.0.1:${server.port}`)?.tokens).toBe(6);
    const onB = await unary(b, [{ code: UNAVAILABLE }, { ok: true }]);
    expect(onB.error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(onB.id)).toHaveLength(1); // the 5th failure: 5 tokens, not > 5
    expect(b.giveUps.map((g) => g.reason)).toEqual(['budget']);
    const againOnA = await unary(a, [{ code: UNAVAILABLE }, { ok: true }]);
    expect(arrivalsOf(againOnA.id)).toHaveLength(1);
    expect(grpcThrottleOf(`dns:///127.0.0.1:${server.port}`)?.tokens).toBe(4);
    // Successes refill it (0.1 each) on any channel; another method shares the bucket too.
    for (let i = 0; i < 21; i++) expect((await unary(b, [{ ok: true }])).error).toBeNull();
    expect(grpcThrottleOf(`127.0.0.1:${server.port}`)?.tokens).toBe(6.1); // exact: kept in thousandths
    // The next failure leaves 5.1 > 5: retried again.
    const recovered = await unary(a, [{ code: UNAVAILABLE }, { ok: true }]);
    expect(recovered.error).toBeNull();
    expect(arrivalsOf(recovered.id)).toHaveLength(2);
  });

  it("the call's deadline spans every attempt: a wait that would cross it is not started", async () => {
    const c = client({ serviceConfig: deadlineServiceConfig(), random: { random: () => 0.5 } });
    // Connect first: the channel's set-up would otherwise come out of the deadline's slack.
    expect((await unary(c, [{ ok: true }])).error).toBeNull();
    const { error, id } = await unary(c, [{ code: UNAVAILABLE }], { deadline: Date.now() + DEADLINE_MS });
    // Waits 10 and 1000 ms fit in 6000 ms; the next one (60 s) would cross the deadline whatever the
    // round trips took: the last status now, not DEADLINE_EXCEEDED later. The 4990 ms left over are
    // slack for a busy machine's three round trips (a few ms each on an idle one).
    expect(error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(id)).toHaveLength(3);
    expect(c.retries.map((r) => r.delayMs)).toEqual([10, 1000]);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['deadline']);
  });

  it('a method without a retryPolicy in the service config is not retried', async () => {
    const c = client();
    const id = `call-${++ids}`;
    const error = await new Promise<grpc.ServiceError | null>((resolve) => c.other({ id, script: [{ code: UNAVAILABLE }, { ok: true }] }, {}, (e) => resolve(e)));
    expect(error?.code).toBe(UNAVAILABLE);
    expect(arrivalsOf(id)).toHaveLength(1);
  });

  it('a herdless policy instead of a service config: maxAttempts, backoff, retryableStatusCodes', async () => {
    const c = client({ serviceConfig: undefined, maxAttempts: 3, retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'], random: { random: () => 0 } });
    const { error, id } = await unary(c, [{ code: grpc.status.RESOURCE_EXHAUSTED }, { code: UNAVAILABLE }, { ok: true }]);
    expect(error).toBeNull();
    expect(arrivalsOf(id)).toHaveLength(3);
    expect(c.retries.map((r) => r.delayMs)).toEqual([0, 0]); // full jitter, random 0
  });

  it('cancelling during a backoff wait ends the call with CANCELLED and no further attempt', async () => {
    let call: grpc.ClientUnaryCall | undefined;
    const retries: number[] = [];
    // The hook runs as the wait starts: cancel on the next turn, well inside the 100 ms wait.
    const c = client({ random: { random: () => 0.5 }, onRetry: (e) => void (retries.push(e.attempt), setImmediate(() => call!.cancel())) });
    const id = `call-${++ids}`;
    const error = await new Promise<grpc.ServiceError | null>((resolve) => {
      call = c.unary({ id, script: [{ code: UNAVAILABLE }, { ok: true }] }, {}, (e) => resolve(e));
    });
    expect(error?.code).toBe(grpc.status.CANCELLED);
    expect(retries).toEqual([1]);
    // One attempt was made: the one the wait led to never started.
    expect(c.giveUps.map((g) => [g.reason, g.attempts])).toEqual([['aborted', 1]]);
    expect(arrivalsOf(id)).toHaveLength(1);
  });
});

describe('grpcRetryInterceptor: server streaming and the commit rule', () => {
  it('UNAVAILABLE before anything arrived: retried; the caller sees only the successful stream', async () => {
    const c = client();
    const r = await stream(c, [{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }]);
    expect(r.error).toBeNull();
    expect(r.messages).toEqual([{ n: 1 }, { n: 2 }]);
    expect(arrivalsOf(r.id).map((a) => a.previous)).toEqual(['', '1', '2']);
  });

  it('response headers received, then UNAVAILABLE: committed, no retry', async () => {
    const c = client();
    const r = await stream(c, [{ headersThen: UNAVAILABLE }, { ok: true }]);
    expect(r.error?.code).toBe(UNAVAILABLE);
    expect(r.metadata).toBe(1);
    expect(arrivalsOf(r.id)).toHaveLength(1);
    expect(c.giveUps.map((g) => g.reason)).toEqual(['committed']);
  });

  it('a message received, then UNAVAILABLE: committed, no retry; the message was delivered', async () => {
    const c = client();
    const r = await stream(c, [{ messageThen: UNAVAILABLE }, { ok: true }]);
    expect(r.error?.code).toBe(UNAVAILABLE);
    expect(r.messages).toEqual([{ n: 1 }]);
    expect(arrivalsOf(r.id)).toHaveLength(1);
  });
});

describe('grpcRetryInterceptor: options', () => {
  it.each([
    [{ serviceConfig: { methodConfig: [{ name: [{}], retryPolicy: { maxAttempts: 1 } }] } }, 'serviceConfig.methodConfig[0].retryPolicy.maxAttempts', 1],
    [{ serviceConfig: a6Config({ maxTokens: 10, tokenRatio: 0.1 }) }, 'target', undefined],
    [{ serviceConfig: a6Config(), maxAttempts: 3 }, 'maxAttempts', 3],
    [{ maxAttemps: 3 }, 'maxAttemps', 3],
    [{ retryableStatusCodes: ['unavailable'] }, 'retryableStatusCodes[0]', 'unavailable'],
    [{ retryableStatusCodes: [] }, 'retryableStatusCodes', []],
    [{ maxRetryAfterMs: -1 }, 'maxRetryAfterMs', -1],
    [{ target: '' }, 'target', ''],
    [{ onRetry: 'log' }, 'onRetry', 'log'],
  ])('%j → InvalidOptionError naming %s', (options, field, value) => {
    const error = invalidOption(() => grpcRetryInterceptor(options as never));
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toContain('grpcRetryInterceptor');
  });
});
