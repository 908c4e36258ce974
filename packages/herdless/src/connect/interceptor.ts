import { toBinary, type DescMessage, type Message } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Interceptor, StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import type { Scheduler } from '../runtime/scheduler.js';
import { GrpcCallRetry } from '../grpc/call-retry.js';
import { grpcRetryPlanner, type GrpcMethodPlan, type GrpcRetryInterceptorOptions, type GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import type { CallRetryBuffer } from '../grpc/retry-buffer.js';
import { ReplaySource } from './replay.js';
import { GRPC_PUSHBACK_HEADER } from '../grpc/pushback.js';
import { grpcServerName } from '../grpc/throttles.js';

const OWNER = 'connectRetryInterceptor';
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** Options of {@link connectRetryInterceptor}: the shared gRPC interceptor options. */
export type ConnectRetryInterceptorOptions = GrpcRetryInterceptorOptions;

const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const GRPC_TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * The call's timeout as the transport wrote it into the request headers (Connect:
 * `connect-timeout-ms`; gRPC and gRPC-web: `grpc-timeout`), in ms; `undefined` without one.
 */
function readTimeoutMs(header: Headers): number | undefined {
  const connect = header.get('connect-timeout-ms');
  if (connect !== null && /^\d{1,10}$/.test(connect)) return Number(connect);
  const grpc = header.get('grpc-timeout');
  const m = grpc === null ? null : GRPC_TIMEOUT.exec(grpc);
  return m === null ? undefined : Number(m[1]) * GRPC_TIMEOUT_UNIT_MS[m[2]!]!;
}

/** A retry's headers: the attempt count, and the timeout that is left (the deadline spans every attempt). */
function retryHeaders(req: { readonly header: Headers }, attempt: number, leftMs: number | undefined): Headers {
  const header = new Headers(req.header);
  header.set(PREVIOUS_ATTEMPTS, String(attempt - 1));
  if (leftMs !== undefined) {
    const ms = String(Math.max(1, Math.ceil(leftMs)));
    if (header.has('connect-timeout-ms')) header.set('connect-timeout-ms', ms);
    if (header.has('grpc-timeout')) header.set('grpc-timeout', `${ms}m`);
  }
  return header;
}

/** Waits `ms` on the scheduler; rejects with the signal's reason (as a ConnectError) if it aborts first. */
function wait(scheduler: Scheduler, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      scheduler.clearTimeout(handle);
      reject(ConnectError.from(signal.reason, Code.Canceled));
    };
    const handle = scheduler.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The size a request message is held at: its protobuf binary encoding (gRPC's wire form). */
function sizeOf(schema: DescMessage, message: unknown): number {
  try {
    return toBinary(schema, message as never).byteLength;
  } catch {
    // The transport's own serialization fails the same way and fails the call.
    return 0;
  }
}

const HEADERS_COMMIT = 'the response had begun (headers arrived): gRFC A6 does not retry a committed call';
const MESSAGE_COMMIT = 'the response had begun (a message arrived): gRFC A6 does not retry a committed call';

function overflowReason(planner: GrpcRetryPlanner): string {
  const { perRpcBufferLimit, retryBufferSize } = planner.buffers;
  return `the request outgrew the retry buffer (perRpcBufferLimit ${perRpcBufferLimit}, retryBufferSize ${retryBufferSize} bytes): gRFC A6 commits the call`;
}

/**
 * One call's attempts: the headers of each, and what a failed attempt leads to. Shared by the
 * unary and the streaming path.
 */
class ConnectCall {
  readonly retry: GrpcCallRetry;
  readonly buffer: CallRetryBuffer;
  /** Why no further attempt may start (one of A6's commit events), once one happened. */
  committed: string | undefined;
  readonly #timeoutMs: number | undefined;
  readonly #startedAt: number;

  constructor(
    private readonly planner: GrpcRetryPlanner,
    plan: GrpcMethodPlan,
    path: string,
    private readonly req: UnaryRequest | StreamRequest,
  ) {
    this.#timeoutMs = readTimeoutMs(req.header);
    this.#startedAt = planner.scheduler.now();
    this.retry = new GrpcCallRetry(planner, plan, path, this.#timeoutMs ?? Infinity);
    this.buffer = planner.buffers.call();
  }

  /** The headers of the attempt about to start (the first attempt keeps the caller's). */
  header(): Headers {
    const attempt = this.retry.attempt;
    this.retry.started();
    if (attempt === 1) return this.req.header;
    const left = this.#timeoutMs === undefined ? undefined : this.#timeoutMs - (this.planner.scheduler.now() - this.#startedAt);
    return retryHeaders(this.req, attempt, left);
  }

  /**
   * The attempt failed with `error`: resolves when the next attempt may start (after the wait), or
   * rejects with `error` (unchanged) when none follows.
   */
  async failed(error: unknown): Promise<void> {
    // The caller's abort or the deadline's: never retried.
    if (this.req.signal.aborted) throw error;
    const failure = ConnectError.from(error);
    if (this.committed !== undefined) {
      this.retry.gaveUp(failure.code, 'committed', this.committed);
      throw error;
    }
    const command = this.retry.failed(failure.code, failure.metadata.get(GRPC_PUSHBACK_HEADER) ?? undefined);
    if (command.kind === 'give-up') throw error;
    if (command.delayMs > 0) await wait(this.planner.scheduler, command.delayMs, this.req.signal);
    // A stream's request outgrew the buffer during the wait: this failure is the call's last.
    if (this.committed !== undefined) {
      this.retry.gaveUp(failure.code, 'committed', this.committed);
      throw error;
    }
  }
}

async function unaryCall(call: ConnectCall, req: UnaryRequest, next: (req: UnaryRequest) => Promise<UnaryResponse>, planner: GrpcRetryPlanner): Promise<UnaryResponse> {
  if (!call.buffer.hold(sizeOf(req.method.input, req.message))) call.committed = overflowReason(planner);
  try {
    for (;;) {
      const header = call.header();
      try {
        const res = await next(header === req.header ? req : { ...req, header });
        call.retry.succeeded();
        return res;
      } catch (error) {
        await call.failed(error);
      }
    }
  } finally {
    call.buffer.releaseAll();
  }
}

/** Whether a committed stream's outcome has been reported (once: by its end, or by the call's end). */
interface Settlement {
  settled: boolean;
}

/**
 * The response stream handed to the caller once the call is committed: the first message (already
 * read, when the commit was its arrival), then the rest; the end reports the call's outcome.
 */
async function* committedStream<O>(call: ConnectCall, first: IteratorResult<O> | undefined, rest: AsyncIterator<O>, done: Settlement): AsyncGenerator<O> {
  let result = first;
  try {
    result ??= await rest.next();
    while (result.done !== true) {
      yield result.value;
      result = await rest.next();
    }
  } catch (error) {
    if (!done.settled) call.retry.gaveUp(ConnectError.from(error).code, 'committed', call.committed ?? MESSAGE_COMMIT);
    done.settled = true;
    throw error;
  }
  if (!done.settled) call.retry.succeeded();
  done.settled = true;
}

async function streamCall(call: ConnectCall, req: StreamRequest, next: (req: StreamRequest) => Promise<StreamResponse>, planner: GrpcRetryPlanner): Promise<StreamResponse> {
  const schema = req.method.input;
  const replay = new ReplaySource<Message>(req.message, call.buffer, (m) => sizeOf(schema, m), () => {
    call.committed ??= overflowReason(planner);
  });
  const done: Settlement = { settled: false };
  let handedOver = false;
  // Connect aborts the call's signal when the call ends, however it ends — also when the caller
  // stops reading and the response stream is never read to its end: the buffer is given back then.
  const onEnd = (): void => {
    replay.close();
    if (handedOver && !done.settled) call.retry.gaveUp(Code.Canceled, 'aborted', 'the call ended before its response was read to the end');
    done.settled = true;
  };
  if (req.signal.aborted) onEnd();
  else req.signal.addEventListener('abort', onEnd, { once: true });
  // gRPC and gRPC-web send a failure before the response has begun as trailers-only: the transport
  // then rejects, and response headers are A6's commit. The Connect protocol always sends headers
  // first (the status comes at the end of the body), so there the commit is the first message.
  const headersCommit = /^application\/grpc/i.test(req.header.get('content-type') ?? '');
  try {
    for (;;) {
      const header = call.header();
      let res: StreamResponse;
      let first: IteratorResult<Message> | undefined;
      let rest: AsyncIterator<Message>;
      try {
        res = await next({ ...req, header, message: replay.attempt() });
        rest = res.message[Symbol.asyncIterator]();
        if (!headersCommit) first = await rest.next();
      } catch (error) {
        await call.failed(error);
        continue;
      }
      call.committed ??= headersCommit ? HEADERS_COMMIT : MESSAGE_COMMIT;
      replay.commit();
      handedOver = true;
      return { ...res, message: committedStream(call, first, rest, done) };
    }
  } catch (error) {
    replay.close();
    throw error;
  }
}

/**
 * A Connect (`@connectrpc/connect` v2) interceptor that retries calls as gRFC A6 says, with the
 * same rules as `grpcRetryInterceptor` from `herdless/grpc`: the retryable status codes
 * (`ConnectError.code`, gRPC's numbering), `maxAttempts` (first try included; a service config's
 * capped at `maxRetryAttempts`, default 5), the backoff (gRPC's ±20% for a service config), one
 * `retryThrottling` bucket per server name (the host of the request URL), the call's timeout
 * spanning all attempts (each retry sends the time that is left; a wait that would cross it is not
 * started), `grpc-previous-rpc-attempts` on retries, and the server's pushback
 * (`grpc-retry-pushback-ms` in the error's metadata: a non-negative integer replaces the backoff
 * and restarts it; a negative or malformed one means "do not retry"). The caller gets the last
 * attempt's error, unchanged.
 *
 * Every kind of call is retried. The request is held for replay until the call commits: a unary
 * request whole, a client or bidi stream's messages as the application produces them (each attempt
 * resends them all, in order). A request that outgrows the retry buffer (`perRpcBufferLimit`,
 * default 1 MiB; `retryBufferSize`, default 16 MiB across the interceptor's calls; sizes in
 * protobuf binary bytes) commits the call: the attempt in flight goes on, no retry follows. A
 * stream also commits when its response begins: on the gRPC and gRPC-web protocols when response
 * headers arrive (a failure before them is trailers-only), on the Connect protocol — which always
 * sends headers first — when the first response message arrives or the response ends. Connect's
 * unary API hands over a response or an error whole, so a unary failure is retried whether or not
 * the server had sent headers first: the caller never sees a failed attempt.
 *
 * It works with every Connect transport — Connect, gRPC and gRPC-web, in browsers
 * (`@connectrpc/connect-web`) and Node (`@connectrpc/connect-node`): it imports only
 * `@connectrpc/connect` and `@bufbuild/protobuf`.
 *
 * @throws InvalidOptionError (at once) naming the field and the value: an unknown option, a service
 *   config grpc-js would reject (the field is its JSON path under `serviceConfig.`), `serviceConfig`
 *   together with policy options, a buffer limit that is not an integer ≥ 0.
 * @example
 * ```ts
 * import { createClient } from '@connectrpc/connect';
 * import { createConnectTransport } from '@connectrpc/connect-web';
 * import { connectRetryInterceptor } from 'herdless/connect';
 *
 * const transport = createConnectTransport({
 *   baseUrl: 'https://api.example.com',
 *   interceptors: [connectRetryInterceptor({ serviceConfig })],
 * });
 * const client = createClient(ElizaService, transport);
 * ```
 */
export function connectRetryInterceptor(options: ConnectRetryInterceptorOptions): Interceptor {
  const planner = grpcRetryPlanner(OWNER, options, [], 'connect');
  return (next) => async (req) => {
    const path = `/${req.service.typeName}/${req.method.name}`;
    const plan = planner.planFor(path, grpcServerName(req.url));
    if (plan.policy.maxAttempts <= 1 && plan.policy.budget === undefined) return next(req);
    const call = new ConnectCall(planner, plan, path, req);
    return req.stream
      ? streamCall(call, req, next as (req: StreamRequest) => Promise<StreamResponse>, planner)
      : unaryCall(call, req, next as (req: UnaryRequest) => Promise<UnaryResponse>, planner);
  };
}
