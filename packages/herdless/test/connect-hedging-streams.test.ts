/**
 * Server-streaming hedging through the Connect interceptor, on a real Connect server over each
 * protocol (gRFC A6: hedging applies until the call commits). The server's service is described by a
 * hand-written descriptor: `test.HedgedStreams/Stream` takes a StringValue whose JSON names the call
 * and each attempt's answer, and streams StringValues. Real time: the hedge delay is 200 ms; times are
 * checked from below (the hedge arrives at least 160 ms after the first request) and from above only
 * against 1 s (5× the delay). A failure "at once" is told from one "at the delay" by a 10 s delay.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, connectNodeAdapter, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { connectRetryInterceptor, type GrpcGiveUpEvent, type GrpcHedgeEvent } from 'herdless/connect';
import type { TelemetryEvent } from 'herdless';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedThrottle, type ScriptedThrottle } from './support/scripted-throttle.js';

const file = create(FileDescriptorProtoSchema, {
  name: 'test/hedged_streams.proto',
  package: 'test',
  syntax: 'proto3',
  dependency: ['google/protobuf/wrappers.proto'],
  service: [
    {
      name: 'HedgedStreams',
      method: [
        { name: 'Stream', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', serverStreaming: true },
        { name: 'Upload', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', clientStreaming: true },
        { name: 'Chat', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', clientStreaming: true, serverStreaming: true },
      ],
    },
  ],
});
const registry = createFileRegistry(file, (name) => (name === 'google/protobuf/wrappers.proto' ? file_google_protobuf_wrappers : undefined));
const HedgedStreams = registry.getService('test.HedgedStreams')!;

/** An attempt's answer: three messages; nothing until cancelled; one message, then nothing; or a status before any message. */
type Answer = 'ok' | 'hang' | 'message-then-hang' | 'unavailable-at-once-pushback' | number;
interface Arrival {
  id: string;
  previous: string;
  at: number;
  cancelled: boolean;
}

const DELAY_MS = 200;
const config = (delay: string) => ({
  methodConfig: [{ name: [{ service: 'test.HedgedStreams' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: delay, nonFatalStatusCodes: ['UNAVAILABLE'] } }],
});

let server: http2.Http2Server;
let baseUrl: string;
const arrivals: Arrival[] = [];
/** The messages each attempt of a request stream read, by `id#attempt`. */
const uploads = new Map<string, unknown[]>();
const sessions: Http2SessionManager[] = [];

beforeAll(async () => {
  const counts = new Map<string, number>();
  /** Reads a request stream whole (its first message names the call and its answers); the attempt's number and answer. */
  async function readAll(messages: AsyncIterable<{ value: string }>, context: HandlerContext): Promise<{ n: number; answer: Answer; received: unknown[]; arrival: Arrival }> {
    const received: unknown[] = [];
    let begun: { n: number; answer: Answer; arrival: Arrival } | undefined;
    for await (const { value } of messages) {
      const m = JSON.parse(value) as { id: string; answers: Answer[]; part: number };
      received.push(m.part);
      if (begun !== undefined) continue;
      const n = (counts.get(m.id) ?? 0) + 1;
      counts.set(m.id, n);
      const arrival: Arrival = { id: m.id, previous: context.requestHeader.get('grpc-previous-rpc-attempts') ?? '', at: performance.now(), cancelled: false };
      arrivals.push(arrival);
      uploads.set(`${m.id}#${n}`, received);
      begun = { n, answer: m.answers[Math.min(n, m.answers.length) - 1]!, arrival };
      // Fails on its first message, before the rest of the stream, asking for 2 s before the next attempt.
      if (begun.answer === 'unavailable-at-once-pushback') throw new ConnectError('at once', Code.Unavailable, { 'grpc-retry-pushback-ms': '2000' });
    }
    return { ...begun!, received };
  }
  const hangUntilCancelled = (context: HandlerContext, arrival: Arrival): Promise<void> =>
    new Promise<void>((resolve) => {
      if (context.signal.aborted) return resolve();
      context.signal.addEventListener('abort', () => {
        arrival.cancelled = true;
        resolve();
      });
    });
  const routes = (router: ConnectRouter): void => {
    router.service(HedgedStreams, {
      async upload(messages: AsyncIterable<{ value: string }>, context: HandlerContext) {
        const { n, answer, received, arrival } = await readAll(messages, context);
        if (typeof answer === 'number') throw new ConnectError(`scripted ${Code[answer]}`, answer as Code);
        if (answer !== 'ok') await hangUntilCancelled(context, arrival);
        return { value: JSON.stringify({ attempt: n, received: received.length }) };
      },
      async *chat(messages: AsyncIterable<{ value: string }>, context: HandlerContext) {
        const { n, answer, received, arrival } = await readAll(messages, context);
        if (typeof answer === 'number') throw new ConnectError(`scripted ${Code[answer]}`, answer as Code);
        if (answer === 'hang') return void (await hangUntilCancelled(context, arrival));
        for (const part of received) yield { value: JSON.stringify({ attempt: n, echo: part }) };
      },
      async *stream(req: { value: string }, context: HandlerContext) {
        const { id, answers } = JSON.parse(req.value) as { id: string; answers: Answer[] };
        const n = (counts.get(id) ?? 0) + 1;
        counts.set(id, n);
        const arrival: Arrival = { id, previous: context.requestHeader.get('grpc-previous-rpc-attempts') ?? '', at: performance.now(), cancelled: false };
        arrivals.push(arrival);
        const answer = answers[Math.min(n, answers.length) - 1]!;
        const hang = (): Promise<void> =>
          new Promise<void>((resolve) => {
            if (context.signal.aborted) return resolve();
            context.signal.addEventListener('abort', () => {
              arrival.cancelled = true;
              resolve();
            });
          });
        if (typeof answer === 'number') throw new ConnectError(`scripted ${Code[answer]}`, answer as Code);
        if (answer === 'hang') return void (await hang());
        if (answer === 'message-then-hang') {
          yield { value: JSON.stringify({ attempt: n, part: 1 }) };
          return void (await hang());
        }
        for (const part of [1, 2, 3]) yield { value: JSON.stringify({ attempt: n, part }) };
      },
    } as never);
  };
  server = http2.createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sessions) s.abort();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const PROTOCOLS = { connect: createConnectTransport, grpc: createGrpcTransport, 'grpc-web': createGrpcWebTransport } as const;
type CallOptions = { timeoutMs?: number; signal?: AbortSignal };
type StreamClient = {
  stream(req: { value: string }, options?: CallOptions): AsyncIterable<{ value: string }>;
  upload(req: AsyncIterable<{ value: string }>, options?: CallOptions): Promise<{ value: string }>;
  chat(req: AsyncIterable<{ value: string }>, options?: CallOptions): AsyncIterable<{ value: string }>;
};

function client(
  protocol: keyof typeof PROTOCOLS,
  delay = '0.2s',
  hooks: { hedges?: GrpcHedgeEvent[]; giveUps?: GrpcGiveUpEvent[]; events?: TelemetryEvent[]; throttle?: ScriptedThrottle } = {},
  perRpcBufferLimit?: number,
): StreamClient {
  const sessionManager = new Http2SessionManager(baseUrl);
  sessions.push(sessionManager);
  const interceptor = connectRetryInterceptor({
    serviceConfig: config(delay),
    onHedge: (e) => void hooks.hedges?.push(e),
    onGiveUp: (e) => void hooks.giveUps?.push(e),
    telemetry: { onEvent: (e) => void hooks.events?.push(e) },
    ...(perRpcBufferLimit === undefined ? {} : { perRpcBufferLimit }),
    ...(hooks.throttle === undefined ? {} : { throttle: hooks.throttle }),
  });
  const transport: Transport = PROTOCOLS[protocol]({ baseUrl, httpVersion: '2', sessionManager, interceptors: [interceptor] } as never);
  return createClient(HedgedStreams, transport) as unknown as StreamClient;
}

let ids = 0;
async function stream(c: StreamClient, answers: Answer[], cancelAfterMs?: number): Promise<{ messages: unknown[]; error: ConnectError | undefined; id: string; elapsed: number }> {
  const id = `s-${++ids}`;
  const messages: unknown[] = [];
  const controller = new AbortController();
  if (cancelAfterMs !== undefined) setTimeout(() => controller.abort(), cancelAfterMs);
  const started = performance.now();
  try {
    for await (const m of c.stream({ value: JSON.stringify({ id, answers }) }, { timeoutMs: 10_000, signal: controller.signal })) messages.push(JSON.parse(m.value));
    return { messages, error: undefined, id, elapsed: performance.now() - started };
  } catch (error) {
    return { messages, error: ConnectError.from(error), id, elapsed: performance.now() - started };
  }
}

const until = async (check: () => boolean, ms = 3000): Promise<void> => {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
};

describe.each(Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[])('connectRetryInterceptor hedges a server stream over the %s protocol', (protocol) => {
  it('the first stream sends nothing: the hedge goes at hedgingDelay and streams; the first is cancelled', async () => {
    const hedges: GrpcHedgeEvent[] = [];
    const c = client(protocol, '0.2s', { hedges });
    await stream(c, ['ok']); // connect the session first
    const { messages, error, id, elapsed } = await stream(c, ['hang', 'ok']);
    expect(error).toBeUndefined();
    expect(messages).toEqual([1, 2, 3].map((part) => ({ attempt: 2, part })));
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS - 1);
    const seen = arrivals.filter((a) => a.id === id);
    expect(seen.map((a) => a.previous)).toEqual(['', '1']);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(DELAY_MS - 40);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(5 * DELAY_MS);
    await until(() => seen[0]!.cancelled);
    expect(seen[0]!.cancelled).toBe(true);
    expect(hedges.map((e) => [e.method, e.attempt, e.trigger])).toEqual([['/test.HedgedStreams/Stream', 2, 'delay']]);
  });

  it('adaptive throttling refuses the first try: the stream is never sent and fails Unavailable; a refused hedge is not sent', async () => {
    const throttle = scriptedThrottle();
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = client(protocol, '0.2s', { giveUps, throttle });
    await stream(c, ['ok']); // connect the session first
    throttle.reset([false]);
    giveUps.length = 0;
    const refused = await stream(c, ['ok']);
    expect([refused.error?.code, refused.error?.rawMessage]).toEqual([Code.Unavailable, 'adaptive throttling rejected the call locally']);
    expect(arrivals.filter((a) => a.id === refused.id)).toHaveLength(0);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.hedged])).toEqual([['throttled', 0, true]]);
    // The hedge refused at hedgingDelay is not sent: the first attempt runs alone (until the caller cancels).
    throttle.reset([true, false]);
    const { error, id } = await stream(c, ['hang', 'ok'], DELAY_MS * 2 + 100);
    expect(error?.code).toBe(Code.Canceled);
    expect(arrivals.filter((a) => a.id === id)).toHaveLength(1);
    expect(throttle.asked).toEqual([false, true]);
  });

  it('the first stream sends a message: committed, never hedged; the caller cancels it (onGiveUp aborted)', async () => {
    const giveUps: GrpcGiveUpEvent[] = [];
    const c = client(protocol, '0.2s', { giveUps });
    const { messages, error, id } = await stream(c, ['message-then-hang', 'ok'], DELAY_MS * 2 + 100);
    expect(error?.code).toBe(Code.Canceled);
    expect(messages).toEqual([{ attempt: 1, part: 1 }]);
    expect(arrivals.filter((a) => a.id === id)).toHaveLength(1);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.hedged])).toEqual([['aborted', 1, true]]);
  });

  if (protocol === 'connect') {
    it('UNAVAILABLE before any message starts the next hedge at once (10 s delay); every attempt UNAVAILABLE: the last error', async () => {
      const giveUps: GrpcGiveUpEvent[] = [];
      const c = client(protocol, '10s', { giveUps });
      const quick = await stream(c, [Code.Unavailable, 'ok']);
      expect(quick.error).toBeUndefined();
      expect(quick.messages).toEqual([1, 2, 3].map((part) => ({ attempt: 2, part })));
      expect(quick.elapsed).toBeLessThan(10_000);
      const failed = await stream(c, [Code.Unavailable]);
      expect(failed.error?.code).toBe(Code.Unavailable);
      expect(failed.error?.rawMessage).toBe('scripted Unavailable');
      expect(arrivals.filter((a) => a.id === failed.id)).toHaveLength(2);
      expect(giveUps.map((e) => [e.reason, e.attempts, e.code])).toEqual([['exhausted', 2, Code.Unavailable]]);
    });
  } else {
    // connect-node answers a stream that fails before its first message with response headers, then
    // the status in trailers (not trailers-only): the headers commit the attempt (gRFC A6), so its
    // failure is the call's. A server that fails trailers-only (grpc-js) is hedged again.
    it('a failure after response headers, before any message: committed, not hedged; onGiveUp committed', async () => {
      const giveUps: GrpcGiveUpEvent[] = [];
      const c = client(protocol, '10s', { giveUps });
      const { error, messages, id } = await stream(c, [Code.Unavailable, 'ok']);
      expect(error?.code).toBe(Code.Unavailable);
      expect(messages).toEqual([]);
      expect(arrivals.filter((a) => a.id === id)).toHaveLength(1);
      expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['committed', 1, Code.Unavailable, true]]);
    });
  }
});

/** A request stream of `count` messages, the first naming the call and its answers. */
async function* parts(id: string, answers: Answer[], count: number): AsyncGenerator<{ value: string }> {
  for (let part = 0; part < count; part++) yield { value: JSON.stringify({ id, answers, part }) };
}

describe.each(Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[])('connectRetryInterceptor hedges client and bidi streams over the %s protocol', (protocol) => {
  it('an upload never answered: the hedge at hedgingDelay replays every message and answers; the first is cancelled', async () => {
    const c = client(protocol);
    const id = `u-${++ids}`;
    const started = performance.now();
    const res = await c.upload(parts(id, ['hang', 'ok'], 5), { timeoutMs: 10_000 });
    expect(JSON.parse(res.value)).toEqual({ attempt: 2, received: 5 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(uploads.get(`${id}#2`)).toEqual([0, 1, 2, 3, 4]);
    const seen = arrivals.filter((a) => a.id === id);
    expect(seen.map((a) => a.previous)).toEqual(['', '1']);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(5 * DELAY_MS);
    await until(() => seen[0]!.cancelled);
    expect(seen[0]!.cancelled).toBe(true);
  });

  it('bidi: the first never answers; the hedge replays the messages and its echoes are the call’s', async () => {
    const c = client(protocol);
    const id = `b-${++ids}`;
    const echoes: unknown[] = [];
    for await (const m of c.chat(parts(id, ['hang', 'ok'], 3), { timeoutMs: 10_000 })) echoes.push(JSON.parse(m.value));
    expect(echoes).toEqual([0, 1, 2].map((echo) => ({ attempt: 2, echo })));
    expect(arrivals.filter((a) => a.id === id).map((a) => a.previous)).toEqual(['', '1']);
  });

  it('an upload that outgrows perRpcBufferLimit commits to the attempt in flight: no hedge, every message sent, onGiveUp committed', async () => {
    const giveUps: GrpcGiveUpEvent[] = [];
    const hedges: GrpcHedgeEvent[] = [];
    // Each message is a StringValue of 45 bytes: the third does not fit in 120.
    const c = client(protocol, '10s', { giveUps, hedges }, 120);
    const id = `o-${++ids}`;
    const error = await c.upload(parts(id, [Code.Unavailable, 'ok'], 6), { timeoutMs: 10_000 }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.Unavailable);
    expect(arrivals.filter((a) => a.id === id)).toHaveLength(1);
    expect(uploads.get(`${id}#1`)).toHaveLength(6);
    expect(hedges).toEqual([]);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['committed', 1, Code.Unavailable, true]]);
  });

  // Over gRPC and gRPC-web, connect-node sends response headers before a stream's error, which
  // commits the attempt (see above): there is no wait between attempts to outgrow the buffer in.
  it.runIf(protocol === 'connect')('an upload that outgrows the buffer during the pushback wait: the last error ends the call at once (onGiveUp committed)', async () => {
    const giveUps: GrpcGiveUpEvent[] = [];
    const events: TelemetryEvent[] = [];
    const c = client(protocol, '10s', { giveUps, events }, 120);
    const id = `p-${++ids}`;
    const answers: Answer[] = ['unavailable-at-once-pushback', 'ok'];
    async function* request(): AsyncGenerator<{ value: string }> {
      yield { value: JSON.stringify({ id, answers, part: 0 }) };
      // Once the client has seen the first attempt fail, the next hedge waits 2 s; the messages
      // produced now outgrow the 120-byte buffer.
      await until(() => events.some((e) => e.type === 'attempt-end' && e.attempt === 1 && e.outcome === 'failure'), 5000);
      for (let part = 1; part < 6; part++) yield { value: JSON.stringify({ id, answers, part }) };
    }
    const error = await c.upload(request(), { timeoutMs: 10_000 }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toBe('at once');
    expect(arrivals.filter((a) => a.id === id)).toHaveLength(1);
    expect(giveUps.map((e) => [e.reason, e.attempts, e.code, e.hedged])).toEqual([['committed', 1, Code.Unavailable, true]]);
    expect(giveUps[0]!.message).toMatch(/^the request outgrew the retry buffer/);
  });
});
