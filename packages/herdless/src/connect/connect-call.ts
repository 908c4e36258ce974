import { toBinary, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { StreamRequest, UnaryRequest } from '@connectrpc/connect';
import type { Scheduler } from '../runtime/scheduler.js';
import { GrpcCallRetry } from '../grpc/call-retry.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER } from '../grpc/pushback.js';
import type { CallRetryBuffer } from '../grpc/retry-buffer.js';

const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

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

/** Waits `ms` on the clock; rejects with the signal's reason (as a ConnectError) if it aborts first. */
function wait(clock: Scheduler, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(ConnectError.from(signal.reason, Code.Canceled));
    };
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The size a request message is held at: its protobuf binary encoding (gRPC's wire form). */
export function sizeOf(schema: DescMessage, message: unknown): number {
  try {
    return toBinary(schema, message as never).byteLength;
  } catch {
    // The transport's own serialization fails the same way and fails the call.
    return 0;
  }
}

export const HEADERS_COMMIT = 'the response had begun (headers arrived): gRFC A6 does not retry a committed call';
export const MESSAGE_COMMIT = 'the response had begun (a message arrived): gRFC A6 does not retry a committed call';

export function overflowReason(planner: GrpcRetryPlanner): string {
  const { perRpcBufferLimit, retryBufferSize } = planner.buffers;
  return `the request outgrew the retry buffer (perRpcBufferLimit ${perRpcBufferLimit}, retryBufferSize ${retryBufferSize} bytes): gRFC A6 commits the call`;
}

/**
 * @internal One call's attempts: the headers of each, and what a failed attempt leads to. Shared by
 * the unary and the streaming path.
 */
export class ConnectCall {
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
    this.#startedAt = planner.clock.now();
    this.retry = new GrpcCallRetry(planner, plan, path, this.#timeoutMs ?? Infinity);
    this.buffer = planner.buffers.call();
  }

  /** The headers of the attempt about to start (the first attempt keeps the caller's). */
  header(): Headers {
    const attempt = this.retry.attempt;
    this.retry.started();
    if (attempt === 1) return this.req.header;
    const left = this.#timeoutMs === undefined ? undefined : this.#timeoutMs - (this.planner.clock.now() - this.#startedAt);
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
    if (command.delayMs > 0) await wait(this.planner.clock, command.delayMs, this.req.signal);
    // A stream's request outgrew the buffer during the wait: this failure is the call's last.
    if (this.committed !== undefined) {
      this.retry.gaveUp(failure.code, 'committed', this.committed);
      throw error;
    }
  }
}

