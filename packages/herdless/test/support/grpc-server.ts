/**
 * A real grpc-js server for the interceptor tests, on 127.0.0.1 and an ephemeral port. Its service
 * carries JSON (no protobuf codegen): each request names a script, and each attempt of that
 * request (counted by the request's `id`) gets the script's next outcome. Every arrival is recorded
 * with its `grpc-previous-rpc-attempts` header and its arrival time.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'vitest';

/** What the server does with one attempt. */
export type Outcome =
  /** Answer OK (unary: `{ ok: true }`; streaming: two messages, then OK). */
  | { readonly ok: true }
  /** Fail at once with this status, and optionally a `grpc-retry-pushback-ms` trailer. */
  | { readonly code: number; readonly pushback?: string }
  /** Streaming: send response headers, then fail with this status. */
  | { readonly headersThen: number }
  /** Streaming: send one message, then fail with this status. */
  | { readonly messageThen: number };

/** gRFC A6's example retry policy for every method of `test.Flaky`, with `retryThrottling` if given. */
export function a6ServiceConfig(throttling?: { maxTokens: number; tokenRatio: number }): object {
  return {
    methodConfig: [
      {
        name: [{ service: 'test.Flaky' }],
        retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
      },
    ],
    ...(throttling === undefined ? {} : { retryThrottling: throttling }),
  };
}

/**
 * A retry policy for the deadline tests, shaped so that a busy machine cannot change the outcome:
 * waits of 10 ms, then 1000 ms, then 60 s (held at maxBackoff). Under a 6000 ms deadline the first
 * two fit as long as the three round trips take under 4990 ms together, and the third never fits
 * (1010 + 60 000 > 6000), whatever the round trips took. With random 0.5 the ±20 % jitter is 0.
 */
export function deadlineServiceConfig(): object {
  return {
    methodConfig: [
      {
        name: [{ service: 'test.Flaky' }],
        retryPolicy: { maxAttempts: 5, initialBackoff: '0.01s', maxBackoff: '60s', backoffMultiplier: 100, retryableStatusCodes: ['UNAVAILABLE'] },
      },
    ],
  };
}

/** The deadline (ms) that {@link deadlineServiceConfig}'s waits are shaped for. */
export const DEADLINE_MS = 6000;

export interface Request {
  readonly id: string;
  readonly script: readonly Outcome[];
}

export interface Arrival {
  readonly id: string;
  readonly method: string;
  /** The `grpc-previous-rpc-attempts` header ('' when absent). */
  readonly previous: string;
  /** performance.now() at arrival. */
  readonly at: number;
  /** The time the call had left as the server read it (Connect server only), in ms. */
  readonly timeoutMs?: number | undefined;
}

const json = {
  serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')),
};

function method(path: string, responseStream: boolean): grpc.MethodDefinition<Request, unknown> {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize as (b: Buffer) => Request,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  };
}

export const flakyService = {
  unary: method('/test.Flaky/Unary', false),
  stream: method('/test.Flaky/Stream', true),
  other: method('/test.Other/Call', false),
} satisfies grpc.ServiceDefinition;

/** The generic client class for {@link flakyService}. */
export const FlakyClient = grpc.makeGenericClientConstructor(flakyService, 'Flaky');
export type FlakyClientInstance = InstanceType<typeof FlakyClient> & {
  unary(request: Request, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, value?: unknown) => void): grpc.ClientUnaryCall;
  stream(request: Request, options?: grpc.CallOptions): grpc.ClientReadableStream<unknown>;
  other(request: Request, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, value?: unknown) => void): grpc.ClientUnaryCall;
};

export interface FlakyServer {
  readonly port: number;
  readonly arrivals: Arrival[];
  close(): Promise<void>;
}

function failure(code: number, pushback?: string): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (pushback !== undefined) metadata.set('grpc-retry-pushback-ms', pushback);
  return { code, details: `scripted ${grpc.status[code]}`, metadata };
}

export async function startFlakyServer(): Promise<FlakyServer> {
  const arrivals: Arrival[] = [];
  const counts = new Map<string, number>();
  const next = (call: { request: Request; metadata: grpc.Metadata }, name: string): Outcome => {
    const { id, script } = call.request;
    const n = counts.get(id) ?? 0;
    counts.set(id, n + 1);
    arrivals.push({ id, method: name, previous: String(call.metadata.get('grpc-previous-rpc-attempts')[0] ?? ''), at: performance.now() });
    return script[Math.min(n, script.length - 1)]!;
  };
  const server = new grpc.Server();
  const unary = (name: string): grpc.handleUnaryCall<Request, unknown> => (call, callback) => {
    const outcome = next(call, name);
    if ('ok' in outcome) callback(null, { ok: true, attempt: counts.get(call.request.id) });
    else if ('code' in outcome) callback(failure(outcome.code, outcome.pushback));
    else callback(failure(grpc.status.INTERNAL));
  };
  server.addService(flakyService, {
    unary: unary('unary'),
    other: unary('other'),
    stream: (call: grpc.ServerWritableStream<Request, unknown>) => {
      const outcome = next(call, 'stream');
      if ('ok' in outcome) {
        call.write({ n: 1 });
        call.write({ n: 2 });
        call.end();
      } else if ('code' in outcome) {
        call.emit('error', failure(outcome.code, outcome.pushback));
      } else if ('headersThen' in outcome) {
        call.sendMetadata(new grpc.Metadata());
        setImmediate(() => call.emit('error', failure(outcome.headersThen)));
      } else {
        call.write({ n: 1 }, () => call.emit('error', failure(outcome.messageThen)));
      }
    },
  } as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  return {
    port,
    arrivals,
    close: async () => server.forceShutdown(),
  };
}

/**
 * Checks the "Done when" waits of A6's example policy: the retries' chosen waits in [80, 120] and
 * [160, 240] ms, and the server saw at least those gaps between the attempts' arrivals (timers never
 * fire early; a millisecond of rounding allowed).
 */
export function expectA6Waits(delaysMs: readonly number[], arrivals: readonly Arrival[]): void {
  expect(delaysMs).toHaveLength(2);
  const [first, second] = delaysMs as [number, number];
  expect(first).toBeGreaterThanOrEqual(80);
  expect(first).toBeLessThanOrEqual(120);
  expect(second).toBeGreaterThanOrEqual(160);
  expect(second).toBeLessThanOrEqual(240);
  expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(first - 1);
  expect(arrivals[2]!.at - arrivals[1]!.at).toBeGreaterThanOrEqual(second - 1);
}
