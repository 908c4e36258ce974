/**
 * gRFC A6's retry buffer and stream retries, on real servers on loopback: herdless's grpc-js
 * interceptor and Connect interceptor beside grpc-js's own built-in retries (the reference), all
 * against the same grpc-js server; the Connect protocol against a Connect server.
 */
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { connectRetryInterceptor, type ConnectRetryInterceptorOptions } from 'herdless/connect';
import { grpcRetryInterceptor, type GrpcGiveUpEvent, type GrpcJsRetryInterceptorOptions } from 'herdless/grpc-js';
import { ManualClock } from 'herdless';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { invalidOption } from './support/invalid-option.js';
import {
  StreamsClient,
  StreamsService,
  startConnectStreamServer,
  startGrpcStreamServer,
  streamsServiceConfig,
  type ConnectStreamServer,
  type GrpcStreamServer,
  type StreamOutcome,
  type StreamsClientInstance,
} from './support/stream-servers.js';

const UNAVAILABLE = grpc.status.UNAVAILABLE;

let grpcServer: GrpcStreamServer;
let connectServer: ConnectStreamServer;
const clients: grpc.Client[] = [];
const sessions: Http2SessionManager[] = [];
let ids = 0;

beforeEach(async () => {
  grpcServer = await startGrpcStreamServer();
  connectServer = await startConnectStreamServer();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of sessions.splice(0)) s.abort();
  await grpcServer.close();
  await connectServer.close();
});

const target = (): string => `127.0.0.1:${grpcServer.port}`;

/** A grpc-js client with grpc-js's own retries (the service config as a channel option). */
function builtIn(channelOptions: grpc.ChannelOptions = {}, serviceConfig: object = streamsServiceConfig()): StreamsClientInstance {
  const c = new StreamsClient(target(), grpc.credentials.createInsecure(), { 'grpc.service_config': JSON.stringify(serviceConfig), ...channelOptions });
  clients.push(c);
  return c as StreamsClientInstance;
}

/** A grpc-js client with herdless's interceptor (grpc-js's retries off). */
function herdlessGrpc(giveUps: GrpcGiveUpEvent[], options: Partial<GrpcJsRetryInterceptorOptions> = {}): StreamsClientInstance {
  const interceptor = grpcRetryInterceptor({ serviceConfig: streamsServiceConfig(), target: target(), onGiveUp: (e) => void giveUps.push(e), ...options });
  const c = new StreamsClient(target(), grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [interceptor] });
  clients.push(c);
  return c as StreamsClientInstance;
}

type StreamsConnectClient = Client<typeof StreamsService> & {
  unary(req: { value: string }): Promise<{ value: string }>;
  serverStream(req: { value: string }): AsyncIterable<{ value: string }>;
  clientStream(req: AsyncIterable<{ value: string }>): Promise<{ value: string }>;
  bidi(req: AsyncIterable<{ value: string }>): AsyncIterable<{ value: string }>;
};

/** A Connect client with herdless's interceptor: gRPC to the grpc-js server, or the Connect protocol to the Connect server. */
function herdlessConnect(giveUps: GrpcGiveUpEvent[], protocol: 'grpc' | 'connect', options: Partial<ConnectRetryInterceptorOptions> = {}): StreamsConnectClient {
  const baseUrl = protocol === 'grpc' ? `http://${target()}` : connectServer.baseUrl;
  const sessionManager = new Http2SessionManager(baseUrl);
  sessions.push(sessionManager);
  const interceptor = connectRetryInterceptor({ serviceConfig: streamsServiceConfig(), onGiveUp: (e) => void giveUps.push(e), ...options });
  const create = protocol === 'grpc' ? createGrpcTransport : createConnectTransport;
  const transport: Transport = create({ baseUrl, httpVersion: '2', sessionManager, interceptors: [interceptor] } as never);
  return createClient(StreamsService, transport) as StreamsConnectClient;
}

function head(script: StreamOutcome[], padBytes?: number): { id: string; text: string } {
  const id = `call-${++ids}`;
  return { id, text: JSON.stringify(padBytes === undefined ? { id, script } : { id, script, pad: 'x'.repeat(padBytes) }) };
}

type Result = { code: number; value: unknown };

function grpcUnary(c: StreamsClientInstance, text: string): Promise<Result> {
  return new Promise((resolve) =>
    c.unary(text, {}, (error, value) => resolve(error ? { code: error.code, value: undefined } : { code: 0, value: JSON.parse(value!) })),
  );
}

/** Writes the messages at once, then half-closes, as an application that has them all would. */
function grpcClientStream(c: StreamsClientInstance, messages: string[]): Promise<Result> {
  return new Promise((resolve) => {
    const call = c.clientStream({}, (error, value) => resolve(error ? { code: error.code, value: undefined } : { code: 0, value: JSON.parse(value!) }));
    for (const m of messages) call.write(m);
    call.end();
  });
}

function grpcBidi(c: StreamsClientInstance, messages: string[]): Promise<{ code: number; received: unknown[] }> {
  return new Promise((resolve) => {
    const received: unknown[] = [];
    const call = c.bidi();
    call.on('data', (m: string) => received.push(JSON.parse(m)));
    call.on('error', (error: grpc.ServiceError) => resolve({ code: error.code, received }));
    call.on('end', () => resolve({ code: 0, received }));
    for (const m of messages) call.write(m);
    call.end();
  });
}

async function connectResult(run: () => Promise<unknown>): Promise<Result> {
  try {
    return { code: 0, value: await run() };
  } catch (error) {
    return { code: ConnectError.from(error).code, value: undefined };
  }
}

async function* requests(messages: string[]): AsyncGenerator<{ value: string }> {
  for (const value of messages) yield { value };
}

async function collect(stream: AsyncIterable<{ value: string }>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const m of stream) out.push(JSON.parse(m.value));
  return out;
}

const attemptsOf = (server: { attempts: readonly { id: string }[] }, id: string) => server.attempts.filter((a) => a.id === id);

describe('the retry buffer (gRFC A6 "Memory Management"): grpc-js built-in, herdless/grpc and herdless/connect side by side', () => {
  it.each([
    ['100 kB', 100_000, 2, 0],
    ['1.2 MB', 1_200_000, 1, UNAVAILABLE],
  ])('a %s unary request, UNAVAILABLE then OK, default limits: %i attempt(s) in all three clients', async (_label, bytes, attempts, code) => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const reference = head(script, bytes);
    const viaGrpc = head(script, bytes);
    const viaConnect = head(script, bytes);
    const results = await Promise.all([
      grpcUnary(builtIn(), reference.text),
      grpcUnary(herdlessGrpc(giveUps), viaGrpc.text),
      connectResult(() => herdlessConnect(giveUps, 'grpc').unary({ value: viaConnect.text })),
    ]);
    expect(results.map((r) => r.code)).toEqual([code, code, code]);
    for (const { id } of [reference, viaGrpc, viaConnect]) {
      const seen = attemptsOf(grpcServer, id);
      expect(seen).toHaveLength(attempts);
      // The server got the whole request each time: its JSON text, padding included.
      for (const a of seen) expect(a.received).toEqual([`#${reference.text.length}`]);
    }
    if (attempts === 1) {
      expect(giveUps.map((g) => g.reason)).toEqual(['committed', 'committed']);
      expect(giveUps[0]!.message).toContain('outgrew the retry buffer (perRpcBufferLimit 1048576');
    } else {
      expect(giveUps).toEqual([]);
    }
  });

  it('perRpcBufferLimit: a request above it is committed, one at it is retried', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const small = head(script, 1000);
    const size = Buffer.byteLength(small.text) + 3; // StringValue: a tag byte and a 2-byte length
    const atLimit = herdlessGrpc(giveUps, { perRpcBufferLimit: size });
    expect((await grpcUnary(atLimit, small.text)).code).toBe(0);
    expect(attemptsOf(grpcServer, small.id)).toHaveLength(2);
    const over = herdlessGrpc(giveUps, { perRpcBufferLimit: size - 1 });
    const big = head(script, 1000);
    expect((await grpcUnary(over, big.text)).code).toBe(UNAVAILABLE);
    expect(attemptsOf(grpcServer, big.id)).toHaveLength(1);
    const connect = herdlessConnect(giveUps, 'grpc', { perRpcBufferLimit: size - 1 });
    const viaConnect = head(script, 1000);
    expect((await connectResult(() => connect.unary({ value: viaConnect.text }))).code).toBe(UNAVAILABLE);
    expect(attemptsOf(grpcServer, viaConnect.id)).toHaveLength(1);
    expect(giveUps.map((g) => g.reason)).toEqual(['committed', 'committed']);
  });

  it('retryBufferSize is shared by the calls of one interceptor: the second of two concurrent 100 kB calls does not fit 150 kB', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = herdlessGrpc(giveUps, { retryBufferSize: 150_000 });
    const first = head(script, 100_000);
    const second = head(script, 100_000);
    // Both calls hold their request from the moment they are made: the first until it ends.
    const results = await Promise.all([grpcUnary(c, first.text), grpcUnary(c, second.text)]);
    expect(results.map((r) => r.code)).toEqual([0, UNAVAILABLE]);
    expect(attemptsOf(grpcServer, first.id)).toHaveLength(2);
    expect(attemptsOf(grpcServer, second.id)).toHaveLength(1);
    expect(giveUps[0]!.message).toContain('retryBufferSize 150000');
    // Everything was given back: a third call fits again.
    const third = head(script, 100_000);
    expect((await grpcUnary(c, third.text)).code).toBe(0);
    expect(attemptsOf(grpcServer, third.id)).toHaveLength(2);
  });
});

describe('client streams: buffered and replayed until the call commits', () => {
  const three = (id: string, text: string): string[] => [text, `${id}/2`, `${id}/3`];

  it('3 messages, UNAVAILABLE twice after the server read them all: attempt 3 succeeds, the server got all 3 each time (all three clients)', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const reference = head(script);
    const viaGrpc = head(script);
    const viaConnect = head(script);
    const viaConnectProtocol = head(script);
    const results = await Promise.all([
      grpcClientStream(builtIn(), three(reference.id, reference.text)),
      grpcClientStream(herdlessGrpc(giveUps), three(viaGrpc.id, viaGrpc.text)),
      connectResult(async () => JSON.parse((await herdlessConnect(giveUps, 'grpc').clientStream(requests(three(viaConnect.id, viaConnect.text)))).value)),
      connectResult(async () =>
        JSON.parse((await herdlessConnect(giveUps, 'connect').clientStream(requests(three(viaConnectProtocol.id, viaConnectProtocol.text)))).value),
      ),
    ]);
    for (const r of results) expect(r).toEqual({ code: 0, value: { ok: true, attempt: 3, received: 3 } });
    for (const [server, call] of [
      [grpcServer, reference],
      [grpcServer, viaGrpc],
      [grpcServer, viaConnect],
      [connectServer, viaConnectProtocol],
    ] as const) {
      const seen = attemptsOf(server, call.id);
      expect(seen.map((a) => a.received)).toEqual([three(call.id, call.text), three(call.id, call.text), three(call.id, call.text)]);
      expect(seen.map((a) => a.previous)).toEqual(['', '1', '2']);
    }
    expect(giveUps).toEqual([]);
  });

  it('UNAVAILABLE as soon as the first message arrives, twice: the third attempt gets all 3, in order', async () => {
    const script: StreamOutcome[] = [{ afterFirst: UNAVAILABLE }, { afterFirst: UNAVAILABLE }, { ok: true }];
    const viaGrpc = head(script);
    const viaConnect = head(script);
    const results = await Promise.all([
      grpcClientStream(herdlessGrpc([]), three(viaGrpc.id, viaGrpc.text)),
      connectResult(async () => JSON.parse((await herdlessConnect([], 'connect').clientStream(requests(three(viaConnect.id, viaConnect.text)))).value)),
    ]);
    for (const r of results) expect(r).toEqual({ code: 0, value: { ok: true, attempt: 3, received: 3 } });
    expect(attemptsOf(grpcServer, viaGrpc.id).at(-1)!.received).toEqual(three(viaGrpc.id, viaGrpc.text));
    expect(attemptsOf(connectServer, viaConnect.id).at(-1)!.received).toEqual(three(viaConnect.id, viaConnect.text));
  });

  it('a stream that outgrows perRpcBufferLimit is committed: the server still gets every message, and a failure is not retried', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const viaGrpc = head(script);
    const viaConnect = head(script);
    const filler = (id: string): string[] => [`${id}/${'a'.repeat(600)}`, `${id}/${'b'.repeat(600)}`];
    const results = await Promise.all([
      grpcClientStream(herdlessGrpc(giveUps, { perRpcBufferLimit: 1000 }), [viaGrpc.text, ...filler(viaGrpc.id)]),
      connectResult(() => herdlessConnect(giveUps, 'grpc', { perRpcBufferLimit: 1000 }).clientStream(requests([viaConnect.text, ...filler(viaConnect.id)]))),
    ]);
    expect(results.map((r) => r.code)).toEqual([UNAVAILABLE, UNAVAILABLE]);
    for (const call of [viaGrpc, viaConnect]) {
      const seen = attemptsOf(grpcServer, call.id);
      expect(seen.map((a) => a.received)).toEqual([[call.text, ...filler(call.id)]]);
    }
    expect(giveUps.map((g) => g.reason)).toEqual(['committed', 'committed']);
    expect(giveUps[0]!.message).toContain('outgrew the retry buffer');
  });
});

describe('the commit rule beside grpc-js', () => {
  it('unary, response headers then UNAVAILABLE: grpc-js and herdless/grpc commit (1 attempt); herdless/connect retries (connect-unary-commit)', async () => {
    const script: StreamOutcome[] = [{ headersThen: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const [reference, viaGrpc, viaConnect] = [head(script), head(script), head(script)];
    const results = await Promise.all([
      grpcUnary(builtIn(), reference.text),
      grpcUnary(herdlessGrpc(giveUps), viaGrpc.text),
      connectResult(() => herdlessConnect([], 'grpc').unary({ value: viaConnect.text })),
    ]);
    expect(results.map((r) => r.code)).toEqual([UNAVAILABLE, UNAVAILABLE, 0]);
    expect([reference, viaGrpc, viaConnect].map((c) => attemptsOf(grpcServer, c.id).length)).toEqual([1, 1, 2]);
    expect(giveUps.map((g) => g.reason)).toEqual(['committed']);
  });

  it('a client stream that outgrows the buffer during a backoff wait ends at once with the last status (refusal-not-waited)', async () => {
    const clock = new ManualClock();
    const giveUps: GrpcGiveUpEvent[] = [];
    let onRetry = (): void => undefined;
    const retried = new Promise<void>((resolve) => (onRetry = resolve));
    const c = herdlessGrpc(giveUps, { clock, perRpcBufferLimit: 1000, onRetry: () => onRetry() });
    const call = head([{ afterFirst: UNAVAILABLE }, { ok: true }]);
    const done = new Promise<Result>((resolve) => {
      const stream = c.clientStream({}, (error, value) => resolve(error ? { code: error.code, value: undefined } : { code: 0, value }));
      stream.write(call.text);
      // The first attempt fails at its first message; during the wait (the clock never moves), a
      // message too big for what is left of the buffer commits the call: no attempt can follow.
      void retried.then(() => stream.write('x'.repeat(1000)));
    });
    expect((await done).code).toBe(UNAVAILABLE);
    expect(attemptsOf(grpcServer, call.id)).toHaveLength(1);
    expect(giveUps.map((g) => [g.reason, g.attempts])).toEqual([['committed', 1]]);
    expect(clock.pending).toBe(0);
  });
});

describe('pushback beside grpc-js', () => {
  it('pushback 120000 under a 2 s deadline: grpc-js waits and ends DEADLINE_EXCEEDED at the deadline; herdless ends at once with UNAVAILABLE (pushback-over-max-retry-after)', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE, pushback: '120000' }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const [reference, viaGrpc, raised] = [head(script), head(script), head(script)];
    const timed = async (run: () => Promise<Result>): Promise<{ code: number; ms: number }> => {
      const started = performance.now();
      const { code } = await run();
      return { code, ms: performance.now() - started };
    };
    const deadline = (): grpc.CallOptions => ({ deadline: Date.now() + 2000 });
    const unaryWith = (c: StreamsClientInstance, text: string): Promise<Result> =>
      new Promise((resolve) => c.unary(text, deadline(), (error, value) => resolve(error ? { code: error.code, value: undefined } : { code: 0, value })));
    const [theirs, ours, oursRaised] = await Promise.all([
      timed(() => unaryWith(builtIn(), reference.text)),
      timed(() => unaryWith(herdlessGrpc(giveUps), viaGrpc.text)),
      // maxRetryAfterMs raised: the wait would cross the deadline, so the call ends at once all the same.
      timed(() => unaryWith(herdlessGrpc(giveUps, { maxRetryAfterMs: 200_000 }), raised.text)),
    ]);
    expect(theirs.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // Timers never fire early: grpc-js's answer comes at the deadline or after it.
    expect(theirs.ms).toBeGreaterThanOrEqual(1990);
    expect([ours.code, oursRaised.code]).toEqual([UNAVAILABLE, UNAVAILABLE]);
    // herdless answered before the deadline without waiting (no timer ran: the margin is the round trip).
    expect(ours.ms).toBeLessThan(theirs.ms);
    // Both: the pushback is longer than what they allow (60 s by default; the 2 s left before the deadline).
    expect(giveUps.map((g) => g.reason)).toEqual(['hint-too-long', 'hint-too-long']);
    for (const c of [reference, viaGrpc, raised]) expect(attemptsOf(grpcServer, c.id)).toHaveLength(1);
  });
});

describe('bidi streams and server streams: retried until a response message (or headers) arrives', () => {
  it('bidi, UNAVAILABLE before any response: replayed and retried; the caller sees one clean stream', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }, { ok: true }];
    const viaGrpc = head(script);
    const r = await grpcBidi(herdlessGrpc([]), [viaGrpc.text, `${viaGrpc.id}/2`]);
    expect(r).toEqual({ code: 0, received: [{ echo: viaGrpc.text, attempt: 2 }, { echo: `${viaGrpc.id}/2`, attempt: 2 }] });
    for (const protocol of ['grpc', 'connect'] as const) {
      const call = head(script);
      const out = await collect(herdlessConnect([], protocol).bidi(requests([call.text, `${call.id}/2`])));
      expect(out).toEqual([{ echo: call.text, attempt: 2 }, { echo: `${call.id}/2`, attempt: 2 }]);
    }
  });

  it('bidi, a response message then UNAVAILABLE: committed, no retry; the message was delivered', async () => {
    const script: StreamOutcome[] = [{ messageThen: UNAVAILABLE }, { ok: true }];
    const giveUps: GrpcGiveUpEvent[] = [];
    const viaGrpc = head(script);
    const r = await grpcBidi(herdlessGrpc(giveUps), [viaGrpc.text]);
    expect(r).toEqual({ code: UNAVAILABLE, received: [{ echo: viaGrpc.text, attempt: 1 }] });
    expect(attemptsOf(grpcServer, viaGrpc.id)).toHaveLength(1);
    for (const protocol of ['grpc', 'connect'] as const) {
      const call = head(script);
      const received: unknown[] = [];
      const result = await connectResult(async () => {
        for await (const m of herdlessConnect(giveUps, protocol).bidi(requests([call.text]))) received.push(JSON.parse(m.value));
      });
      expect(result.code).toBe(Code.Unavailable);
      expect(received).toEqual([{ echo: call.text, attempt: 1 }]);
      expect(attemptsOf(protocol === 'grpc' ? grpcServer : connectServer, call.id)).toHaveLength(1);
    }
    expect(giveUps.map((g) => g.reason)).toEqual(['committed', 'committed', 'committed']);
  });

  it.each(['grpc', 'connect'] as const)('herdless/connect over %s: a server stream failing before any message is retried (as grpc-js does); after one, it is not', async (protocol) => {
    const server = protocol === 'grpc' ? grpcServer : connectServer;
    const c = herdlessConnect([], protocol);
    const early = head([{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }]);
    expect(await collect(c.serverStream({ value: early.text }))).toEqual([
      { n: 1, attempt: 3 },
      { n: 2, attempt: 3 },
    ]);
    expect(attemptsOf(server, early.id)).toHaveLength(3);
    const late = head([{ messageThen: UNAVAILABLE }, { ok: true }]);
    const received: unknown[] = [];
    const result = await connectResult(async () => {
      for await (const m of c.serverStream({ value: late.text })) received.push(JSON.parse(m.value));
    });
    expect(result.code).toBe(Code.Unavailable);
    expect(received).toEqual([{ n: 1, attempt: 1 }]);
    expect(attemptsOf(server, late.id)).toHaveLength(1);
  });
});

describe('herdless/connect: the end of a committed stream', () => {
  it.each(['grpc', 'connect'] as const)('over %s, the caller stopping early is reported as aborted, a finished stream as nothing', async (protocol) => {
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = herdlessConnect(giveUps, protocol);
    const call = head([{ code: UNAVAILABLE }, { ok: true }]);
    const received: unknown[] = [];
    for await (const m of c.serverStream({ value: call.text })) {
      received.push(JSON.parse(m.value));
      break;
    }
    expect(received).toEqual([{ n: 1, attempt: 2 }]);
    // Connect ends the call after the caller's break, then reads the interceptors' streams to their end.
    await vi.waitFor(() => expect(giveUps).toHaveLength(1));
    expect(giveUps.map((g) => [g.reason, g.attempts])).toEqual([['aborted', 2]]);
    const whole = head([{ ok: true }]);
    expect(await collect(c.serverStream({ value: whole.text }))).toHaveLength(2);
    expect(giveUps).toHaveLength(1);
  });
});

describe('maxRetryAttempts: the cap on a service config maxAttempts (grpc-java\'s name), off by default', () => {
  const seven = {
    methodConfig: [
      {
        name: [{ service: 'test.Streams' }],
        retryPolicy: { maxAttempts: 7, initialBackoff: '0.001s', maxBackoff: '0.002s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
      },
    ],
  };

  it('maxAttempts 7 gives 5 attempts by default and 7 with maxRetryAttempts 7, as grpc-js with grpc-node.retry_max_attempts_limit 7', async () => {
    const script: StreamOutcome[] = [{ code: UNAVAILABLE }];
    const calls = [head(script), head(script), head(script), head(script)];
    await Promise.all([
      grpcUnary(builtIn({}, seven), calls[0]!.text),
      grpcUnary(builtIn({ 'grpc-node.retry_max_attempts_limit': 7 }, seven), calls[1]!.text),
      grpcUnary(herdlessGrpc([], { serviceConfig: seven }), calls[2]!.text),
      grpcUnary(herdlessGrpc([], { serviceConfig: seven, maxRetryAttempts: 7 }), calls[3]!.text),
    ]);
    expect(calls.map((c) => attemptsOf(grpcServer, c.id).length)).toEqual([5, 7, 5, 7]);
  });

  it.each([
    [{ maxRetryAttempts: 0 }, 'maxRetryAttempts', 0],
    [{ maxRetryAttempts: 2.5 }, 'maxRetryAttempts', 2.5],
    [{ maxRetryAttempts: '7' }, 'maxRetryAttempts', '7'],
    [{ serviceConfig: undefined, maxAttempts: 3, maxRetryAttempts: 7 }, 'maxRetryAttempts', 7],
    [{ perRpcBufferLimit: -1 }, 'perRpcBufferLimit', -1],
    [{ perRpcBufferLimit: 1.5 }, 'perRpcBufferLimit', 1.5],
    [{ retryBufferSize: Infinity }, 'retryBufferSize', Infinity],
    [{ retryBufferSize: '16MB' }, 'retryBufferSize', '16MB'],
  ])('%j → InvalidOptionError naming %s (both interceptors)', (options, field, value) => {
    const base = { serviceConfig: streamsServiceConfig(), target: 'x' };
    for (const make of [() => grpcRetryInterceptor({ ...base, ...options } as never), () => connectRetryInterceptor({ serviceConfig: base.serviceConfig, ...options } as never)]) {
      const error = invalidOption(make);
      expect(error.field).toBe(field);
      expect(error.value).toEqual(value);
    }
  });
});
