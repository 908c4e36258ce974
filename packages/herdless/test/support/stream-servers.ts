/**
 * Two real servers of one service, `test.Streams`, for the retry-buffer and stream tests: a grpc-js
 * server and a Connect server (connect-node, HTTP/2 cleartext), each on 127.0.0.1 and an ephemeral
 * port. Every message is a `google.protobuf.StringValue` holding JSON, so grpc-js clients (built-in
 * retries or herdless's interceptor) and Connect clients send the very same bytes. The first request
 * message of a call names it (`id`) and its script; each attempt of an `id` gets the script's next
 * outcome, and the server records every attempt with the request messages it read.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, createFileRegistry, fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, StringValueSchema, file_google_protobuf_wrappers } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';

/** What the server does with one attempt (grpc-js status numbering, which Connect's `Code` shares). */
export type StreamOutcome =
  /** Read the whole request, then answer: OK with `{ ok, attempt, received }` (streams: one echo per message). */
  | { readonly ok: true }
  /** Read the whole request, then fail with this status (and a `grpc-retry-pushback-ms` trailer, if given). */
  | { readonly code: number; readonly pushback?: string }
  /** Fail with this status as soon as the first request message is read (before the rest). */
  | { readonly afterFirst: number }
  /** Read the whole request, send one response message, then fail with this status. */
  | { readonly messageThen: number }
  /** Unary on grpc-js: send response headers, then fail with this status. */
  | { readonly headersThen: number };

/** The JSON in a call's first request message. */
export interface StreamHead {
  readonly id: string;
  readonly script: readonly StreamOutcome[];
  /** Padding, to make a message of a given size. */
  readonly pad?: string;
}

export interface StreamAttempt {
  readonly id: string;
  readonly method: string;
  /** The `grpc-previous-rpc-attempts` header ('' when absent). */
  readonly previous: string;
  /** The request messages read, as their text without the padding, or `#bytes` for a padded one. */
  readonly received: string[];
}

export const STREAMS_SERVICE = 'test.Streams';

const file = create(FileDescriptorProtoSchema, {
  name: 'test/streams.proto',
  package: 'test',
  syntax: 'proto3',
  dependency: ['google/protobuf/wrappers.proto'],
  service: [
    {
      name: 'Streams',
      method: [
        { name: 'Unary', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue' },
        { name: 'ServerStream', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', serverStreaming: true },
        { name: 'ClientStream', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', clientStreaming: true },
        { name: 'Bidi', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue', clientStreaming: true, serverStreaming: true },
      ],
    },
  ],
});
const registry = createFileRegistry(file, (name) => (name === 'google/protobuf/wrappers.proto' ? file_google_protobuf_wrappers : undefined));

/** The `test.Streams` service descriptor, for Connect clients. */
export const StreamsService = registry.getService(STREAMS_SERVICE)!;

/** StringValue on the wire, as grpc-js method definitions need it. */
const codec = {
  serialize: (value: string): Buffer => Buffer.from(toBinary(StringValueSchema, create(StringValueSchema, { value }))),
  deserialize: (bytes: Buffer): string => fromBinary(StringValueSchema, bytes).value,
};

function definition(name: string, requestStream: boolean, responseStream: boolean): grpc.MethodDefinition<string, string> {
  return {
    path: `/${STREAMS_SERVICE}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: codec.serialize,
    requestDeserialize: codec.deserialize,
    responseSerialize: codec.serialize,
    responseDeserialize: codec.deserialize,
  };
}

export const streamsDefinition = {
  unary: definition('Unary', false, false),
  serverStream: definition('ServerStream', false, true),
  clientStream: definition('ClientStream', true, false),
  bidi: definition('Bidi', true, true),
} satisfies grpc.ServiceDefinition;

/** The grpc-js client class of `test.Streams` (messages are JSON strings). */
export const StreamsClient = grpc.makeGenericClientConstructor(streamsDefinition, 'Streams');
export type StreamsClientInstance = grpc.Client & {
  unary(request: string, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, value?: string) => void): grpc.ClientUnaryCall;
  clientStream(options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, value?: string) => void): grpc.ClientWritableStream<string>;
  bidi(options?: grpc.CallOptions): grpc.ClientDuplexStream<string, string>;
};

/** The text recorded for a request message: its JSON without the padding, or its size when padded. */
function recordOf(text: string): string {
  if (!text.startsWith('{')) return text;
  const head = JSON.parse(text) as Partial<StreamHead>;
  return head.pad === undefined ? text : `#${text.length}`;
}

/** The per-id attempt counter and the log, shared by both servers' handlers. */
class Script {
  readonly attempts: StreamAttempt[] = [];
  readonly #counts = new Map<string, number>();
  /** A new attempt, from its first request message: its record and outcome. */
  begin(first: string, method: string, previous: string): { record: StreamAttempt; outcome: StreamOutcome; n: number } {
    const head = JSON.parse(first) as StreamHead;
    const n = (this.#counts.get(head.id) ?? 0) + 1;
    this.#counts.set(head.id, n);
    const record: StreamAttempt = { id: head.id, method, previous, received: [recordOf(first)] };
    this.attempts.push(record);
    return { record, outcome: head.script[Math.min(n - 1, head.script.length - 1)]!, n };
  }
}

export interface StreamServer {
  readonly attempts: readonly StreamAttempt[];
  close(): Promise<void>;
}

export interface GrpcStreamServer extends StreamServer {
  readonly port: number;
}

function grpcFailure(code: number, pushback?: string): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (pushback !== undefined) metadata.set('grpc-retry-pushback-ms', pushback);
  return { code, details: `scripted ${grpc.status[code]}`, metadata };
}

/** The grpc-js server of `test.Streams`. */
export async function startGrpcStreamServer(): Promise<GrpcStreamServer> {
  const script = new Script();
  const previousOf = (metadata: grpc.Metadata): string => String(metadata.get('grpc-previous-rpc-attempts')[0] ?? '');
  const server = new grpc.Server();
  server.addService(streamsDefinition, {
    unary: (call: grpc.ServerUnaryCall<string, string>, callback: grpc.sendUnaryData<string>) => {
      const { outcome, n } = script.begin(call.request, 'unary', previousOf(call.metadata));
      if ('ok' in outcome) callback(null, JSON.stringify({ ok: true, attempt: n }));
      else if ('headersThen' in outcome) {
        call.sendMetadata(new grpc.Metadata());
        setImmediate(() => callback(grpcFailure(outcome.headersThen)));
      } else callback('code' in outcome ? grpcFailure(outcome.code, outcome.pushback) : grpcFailure(grpc.status.INTERNAL));
    },
    serverStream: (call: grpc.ServerWritableStream<string, string>) => {
      const { outcome, n } = script.begin(call.request, 'serverStream', previousOf(call.metadata));
      if ('ok' in outcome) {
        call.write(JSON.stringify({ n: 1, attempt: n }));
        call.write(JSON.stringify({ n: 2, attempt: n }));
        call.end();
      } else if ('messageThen' in outcome) {
        call.write(JSON.stringify({ n: 1, attempt: n }), () => call.emit('error', grpcFailure(outcome.messageThen)));
      } else {
        call.emit('error', grpcFailure('code' in outcome ? outcome.code : outcome.afterFirst));
      }
    },
    clientStream: (call: grpc.ServerReadableStream<string, string>, callback: grpc.sendUnaryData<string>) => {
      let begun: ReturnType<Script['begin']> | undefined;
      let ended = false;
      call.on('data', (message: string) => {
        if (ended) return;
        if (begun === undefined) {
          begun = script.begin(message, 'clientStream', previousOf(call.metadata));
          if ('afterFirst' in begun.outcome) {
            ended = true;
            callback(grpcFailure(begun.outcome.afterFirst));
          }
          return;
        }
        begun.record.received.push(recordOf(message));
      });
      call.on('end', () => {
        if (ended || begun === undefined) return;
        const { outcome, n, record } = begun;
        if ('ok' in outcome) callback(null, JSON.stringify({ ok: true, attempt: n, received: record.received.length }));
        else callback(grpcFailure('code' in outcome ? outcome.code : grpc.status.INTERNAL));
      });
    },
    bidi: (call: grpc.ServerDuplexStream<string, string>) => {
      let begun: ReturnType<Script['begin']> | undefined;
      let ended = false;
      call.on('data', (message: string) => {
        if (ended) return;
        if (begun === undefined) {
          begun = script.begin(message, 'bidi', previousOf(call.metadata));
          if ('afterFirst' in begun.outcome) {
            ended = true;
            call.emit('error', grpcFailure(begun.outcome.afterFirst));
          }
          return;
        }
        begun.record.received.push(recordOf(message));
      });
      call.on('end', () => {
        if (ended || begun === undefined) return;
        const { outcome, n, record } = begun;
        if ('ok' in outcome) {
          for (const m of record.received) call.write(JSON.stringify({ echo: m, attempt: n }));
          call.end();
        } else if ('messageThen' in outcome) {
          call.write(JSON.stringify({ echo: record.received[0], attempt: n }), () => call.emit('error', grpcFailure(outcome.messageThen)));
        } else {
          call.emit('error', grpcFailure('code' in outcome ? outcome.code : grpc.status.INTERNAL));
        }
      });
    },
  } as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  return { port, attempts: script.attempts, close: async () => server.forceShutdown() };
}

export interface ConnectStreamServer extends StreamServer {
  readonly baseUrl: string;
}

type Context = { requestHeader: Headers };

/** The Connect server of `test.Streams` (Connect, gRPC and gRPC-web protocols at once). */
export async function startConnectStreamServer(): Promise<ConnectStreamServer> {
  const script = new Script();
  const fail = (code: number): never => {
    throw new ConnectError(`scripted ${Code[code]}`, code as Code);
  };
  /** Reads a request stream as the script says; the outcome of a request read whole. */
  async function read(messages: AsyncIterable<{ value: string }>, method: string, ctx: Context): Promise<ReturnType<Script['begin']>> {
    let begun: ReturnType<Script['begin']> | undefined;
    for await (const { value } of messages) {
      if (begun === undefined) {
        begun = script.begin(value, method, ctx.requestHeader.get('grpc-previous-rpc-attempts') ?? '');
        if ('afterFirst' in begun.outcome) fail(begun.outcome.afterFirst);
        continue;
      }
      begun.record.received.push(recordOf(value));
    }
    return begun!;
  }
  const routes = (router: ConnectRouter): void => {
    router.service(StreamsService, {
      unary(req: { value: string }, ctx: Context) {
        const { outcome, n } = script.begin(req.value, 'unary', ctx.requestHeader.get('grpc-previous-rpc-attempts') ?? '');
        if ('ok' in outcome) return { value: JSON.stringify({ ok: true, attempt: n }) };
        return fail('code' in outcome ? outcome.code : Code.Internal);
      },
      async *serverStream(req: { value: string }, ctx: Context) {
        const { outcome, n } = script.begin(req.value, 'serverStream', ctx.requestHeader.get('grpc-previous-rpc-attempts') ?? '');
        if ('ok' in outcome) {
          yield { value: JSON.stringify({ n: 1, attempt: n }) };
          yield { value: JSON.stringify({ n: 2, attempt: n }) };
          return;
        }
        if ('messageThen' in outcome) {
          yield { value: JSON.stringify({ n: 1, attempt: n }) };
          fail(outcome.messageThen);
        }
        fail('code' in outcome ? outcome.code : outcome.afterFirst);
      },
      async clientStream(messages: AsyncIterable<{ value: string }>, ctx: Context) {
        const { outcome, n, record } = await read(messages, 'clientStream', ctx);
        if ('ok' in outcome) return { value: JSON.stringify({ ok: true, attempt: n, received: record.received.length }) };
        return fail('code' in outcome ? outcome.code : Code.Internal);
      },
      async *bidi(messages: AsyncIterable<{ value: string }>, ctx: Context) {
        const { outcome, n, record } = await read(messages, 'bidi', ctx);
        if ('ok' in outcome) {
          for (const m of record.received) yield { value: JSON.stringify({ echo: m, attempt: n }) };
          return;
        }
        if ('messageThen' in outcome) {
          yield { value: JSON.stringify({ echo: record.received[0], attempt: n }) };
          fail(outcome.messageThen);
        }
        fail('code' in outcome ? outcome.code : Code.Internal);
      },
    } as never);
  };
  const server = http2.createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    attempts: script.attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/** gRFC A6's example retry policy for every method of `test.Streams`, with fast waits. */
export function streamsServiceConfig(): object {
  return {
    methodConfig: [
      {
        name: [{ service: STREAMS_SERVICE }],
        retryPolicy: { maxAttempts: 4, initialBackoff: '0.01s', maxBackoff: '0.05s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
      },
    ],
  };
}
