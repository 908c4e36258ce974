import { Code, ConnectError } from '@connectrpc/connect';
import type { StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { isRetryError } from '../core/retry/errors.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GrpcHedgeReporter } from '../grpc/hedge-report.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
import type { AttemptContext } from '../runtime/telemetry.js';
import { readTimeoutMs, retryHeaders, sizeOf } from './connect-call.js';

/** A hedged attempt's failure: the error as the transport gave it, its code, and the server's pushback. */
class AttemptFailure extends HerdlessError {
  readonly grpcCode: number;
  readonly retryAfterMs?: number;
  constructor(readonly error: unknown) {
    const failure = ConnectError.from(error);
    super('ERR_HERDLESS_GRPC_STATUS', failure.message, { cause: error });
    this.grpcCode = failure.code;
    // gRFC A6: a pushback delays the next hedge; a negative or malformed one stops hedging.
    const pushback = parseGrpcPushback(failure.metadata.get(GRPC_PUSHBACK_HEADER) ?? undefined);
    if (pushback === 'do-not-retry') markDoNotRetry(this);
    else if (pushback !== undefined) this.retryAfterMs = pushback;
  }
}

/** A failed attempt's status code (a successful response's is OK, 0), or `undefined` for anything else. */
function codeOf(outcome: unknown): number | undefined {
  if (outcome instanceof AttemptFailure) return outcome.grpcCode;
  return typeof outcome === 'object' && outcome !== null && (outcome as { stream?: unknown }).stream === false ? 0 : undefined;
}

/**
 * @internal A unary call hedged by its service config's `hedgingPolicy` (gRFC A6): `hedge()` sends
 * the request again `hedgingDelay` after the last attempt (at once after a status in
 * `nonFatalStatusCodes`, after the pushback if there is one), up to `maxAttempts`, each hedge with
 * `grpc-previous-rpc-attempts` and the time left of the call's timeout, admitted by the
 * `retryThrottling` bucket. Connect's unary API hands over a response whole, so the first successful
 * response wins and commits; the other attempts are aborted through their signal. When every
 * attempt fails, the caller gets the last attempt's error, unchanged. The interceptor's `onHedge`
 * and `onGiveUp` hear of the hedges and of the give-up; its telemetry of every attempt.
 */
export async function hedgedUnaryCall(req: UnaryRequest, next: (req: UnaryRequest) => Promise<UnaryResponse>, plan: GrpcMethodPlan, planner: GrpcRetryPlanner): Promise<UnaryResponse> {
  const timeoutMs = readTimeoutMs(req.header);
  const startedAt = planner.clock.now();
  const report = new GrpcHedgeReporter(planner, plan, `/${req.service.typeName}/${req.method.name}`, codeOf, req.url);
  report.hold(sizeOf(req.method.input, req.message));
  try {
    const res = await hedge(async ({ attempt, signal }, traced?: AttemptContext) => {
      report.attempts = attempt;
      let header = attempt === 1 ? req.header : retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (planner.clock.now() - startedAt));
      if (traced !== undefined) {
        if (header === req.header) header = new Headers(header);
        const h = header;
        traced.inject((name, value) => h.set(name, value));
      }
      try {
        const attemptReq = { ...req, header, signal };
        return await (traced === undefined ? next(attemptReq) : traced.run(() => next(attemptReq)));
      } catch (error) {
        const failure = new AttemptFailure(error);
        report.lastCode = failure.grpcCode;
        throw failure;
      }
    }, report.options(req.signal));
    report.release();
    return res;
  } catch (error) {
    if (req.signal.aborted) {
      const cancelled = ConnectError.from(req.signal.reason, Code.Canceled);
      report.gaveUp(error, cancelled.code);
      throw cancelled;
    }
    report.gaveUp(error, undefined);
    if (isRetryError(error) && error.cause instanceof AttemptFailure) throw error.cause.error;
    throw error;
  }
}

/** An attempt's signal, also aborted by the caller's: the winner's stream is read after `hedge()` has let go of it. */
function linked(attempt: AbortSignal, caller: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onAttempt = (): void => controller.abort(attempt.reason);
  const onCaller = (): void => controller.abort(caller.reason);
  if (attempt.aborted) onAttempt();
  else if (caller.aborted) onCaller();
  else {
    attempt.addEventListener('abort', onAttempt, { once: true });
    caller.addEventListener('abort', onCaller, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => {
      attempt.removeEventListener('abort', onAttempt);
      caller.removeEventListener('abort', onCaller);
    },
  };
}

/** Every attempt's request stream: the one message the caller sent, again. */
async function* again<T>(messages: readonly T[]): AsyncGenerator<T> {
  yield* messages;
}

/** The attempt that committed: its response, the first message (already read, when that was the commit), the rest. */
interface CommittedStream {
  readonly number: number;
  readonly res: StreamResponse;
  readonly first: IteratorResult<unknown> | undefined;
  readonly rest: AsyncIterator<unknown>;
  readonly link: { dispose(): void };
}

/** The committed attempt's messages, handed to the caller; a failure after the commit is the call's (reported as `'committed'`). */
async function* committedMessages(winner: CommittedStream, report: GrpcHedgeReporter, caller: AbortSignal): AsyncGenerator<unknown> {
  let result = winner.first;
  try {
    result ??= await winner.rest.next();
    while (result.done !== true) {
      yield result.value;
      result = await winner.rest.next();
    }
  } catch (error) {
    report.committedFailed(ConnectError.from(error).code, winner.number, caller.aborted);
    throw error;
  } finally {
    winner.link.dispose();
  }
}

/**
 * @internal A server-streaming call hedged by its `hedgingPolicy` (gRFC A6: hedging applies to every
 * kind of call until it commits). The one request message is read once and sent by every attempt;
 * an attempt commits when its response begins — on the gRPC and gRPC-web protocols at its response
 * headers (a failure before them is trailers-only), on the Connect protocol, which always sends
 * headers first, at its first message or its end. Before that nothing of it has reached the caller,
 * so the next hedge goes `hedgingDelay` after the last (at once after a status in
 * `nonFatalStatusCodes`); the first to commit wins, the others are aborted, and its messages go to
 * the caller. A failure after the commit is the call's, not hedged again (`onGiveUp`: `'committed'`).
 */
export async function hedgedServerStream(req: StreamRequest, next: (req: StreamRequest) => Promise<StreamResponse>, plan: GrpcMethodPlan, planner: GrpcRetryPlanner): Promise<StreamResponse> {
  const messages: unknown[] = [];
  for await (const message of req.message) messages.push(message);
  const report = new GrpcHedgeReporter(planner, plan, `/${req.service.typeName}/${req.method.name}`, codeOf, req.url);
  report.hold(messages.reduce<number>((bytes, message) => bytes + sizeOf(req.method.input, message), 0));
  const timeoutMs = readTimeoutMs(req.header);
  const startedAt = planner.clock.now();
  const headersCommit = /^application\/grpc/i.test(req.header.get('content-type') ?? '');
  let winner: CommittedStream;
  try {
    winner = await hedge(async ({ attempt, signal }, traced?: AttemptContext): Promise<CommittedStream> => {
      report.attempts = attempt;
      const header = attempt === 1 ? new Headers(req.header) : retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (planner.clock.now() - startedAt));
      traced?.inject((name, value) => header.set(name, value));
      const link = linked(signal, req.signal);
      try {
        const attemptReq = { ...req, header, signal: link.signal, message: again(messages) } as StreamRequest;
        const res = await (traced === undefined ? next(attemptReq) : traced.run(() => next(attemptReq)));
        const rest = res.message[Symbol.asyncIterator]() as AsyncIterator<unknown>;
        const first = headersCommit ? undefined : await rest.next();
        return { number: attempt, res, first, rest, link };
      } catch (error) {
        link.dispose();
        const failure = new AttemptFailure(error);
        report.lastCode = failure.grpcCode;
        throw failure;
      }
    }, report.options(req.signal));
    report.release();
  } catch (error) {
    if (req.signal.aborted) {
      const cancelled = ConnectError.from(req.signal.reason, Code.Canceled);
      report.gaveUp(error, cancelled.code);
      throw cancelled;
    }
    report.gaveUp(error, undefined);
    if (isRetryError(error) && error.cause instanceof AttemptFailure) throw error.cause.error;
    throw error;
  }
  return { ...winner.res, message: committedMessages(winner, report, req.signal) } as StreamResponse;
}
