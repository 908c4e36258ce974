import { Code, ConnectError } from '@connectrpc/connect';
import type { StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { isRetryError } from '../core/retry/errors.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GrpcHedgeReporter, isThrottledUnsent, THROTTLED_DETAILS } from '../grpc/hedge-report.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
import type { AttemptContext } from '../runtime/telemetry.js';
import { isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { readTimeoutMs, retryHeaders, sizeOf } from './connect-call.js';
import { HedgeReplay } from './hedge-replay.js';

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
export async function hedgedUnaryCall(
  req: UnaryRequest,
  next: (req: UnaryRequest) => Promise<UnaryResponse>,
  plan: GrpcMethodPlan,
  planner: GrpcRetryPlanner,
  breaker: CircuitBreaker | undefined,
): Promise<UnaryResponse> {
  const timeoutMs = readTimeoutMs(req.header);
  const startedAt = planner.clock.now();
  const report = new GrpcHedgeReporter(planner, plan, `/${req.service.typeName}/${req.method.name}`, codeOf, req.url, breaker);
  report.hold(sizeOf(req.method.input, req.message));
  try {
    const res = await hedge(async ({ attempt, signal }, traced?: AttemptContext) => {
      report.attempts = attempt;
      // Every attempt goes through the breaker: a refused one is not sent, and no hedge follows it.
      const ticket = report.acquire();
      if (isCircuitOpenError(ticket)) throw ticket;
      let header = attempt === 1 ? req.header : retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (planner.clock.now() - startedAt));
      if (traced !== undefined) {
        if (header === req.header) header = new Headers(header);
        const h = header;
        traced.inject((name, value) => h.set(name, value));
      }
      try {
        const attemptReq = { ...req, header, signal };
        const res = await (traced === undefined ? next(attemptReq) : traced.run(() => next(attemptReq)));
        ticket?.({ value: res });
        return res;
      } catch (error) {
        // A loser's abort, or the caller's, is not the server's fault: not counted.
        ticket?.(signal.aborted ? 'ignored' : { error: ConnectError.from(error) });
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
    throw gaveUpError(error);
  }
}

/**
 * What a hedged call that no attempt committed throws: the last attempt's error, unchanged; for an
 * open circuit or a throttled first try (nothing sent), UNAVAILABLE, as a retried call ends.
 */
function gaveUpError(error: unknown): unknown {
  if (!isRetryError(error)) return error;
  if (error.cause instanceof AttemptFailure) return error.cause.error;
  if (isCircuitOpenError(error.cause)) return new ConnectError(error.cause.message, Code.Unavailable, undefined, undefined, error.cause);
  if (isThrottledUnsent(error)) return new ConnectError(THROTTLED_DETAILS, Code.Unavailable);
  return error;
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

/** The attempt that won: its number, its response once it has begun (a forced commit may come before), and its signal's link. */
interface CommittedStream {
  readonly number: number;
  readonly ready: Promise<{ readonly res: StreamResponse; readonly first: IteratorResult<unknown> | undefined; readonly rest: AsyncIterator<unknown> }>;
  readonly link: { dispose(): void };
}

/** The committed attempt's messages, handed to the caller; a failure after the commit is the call's (reported as `'committed'`). */
async function* committedMessages(
  number: number,
  begun: { readonly first: IteratorResult<unknown> | undefined; readonly rest: AsyncIterator<unknown> },
  done: () => void,
  report: GrpcHedgeReporter,
  caller: AbortSignal,
): AsyncGenerator<unknown> {
  let result = begun.first;
  try {
    result ??= await begun.rest.next();
    while (result.done !== true) {
      yield result.value;
      result = await begun.rest.next();
    }
  } catch (error) {
    report.committedFailed(ConnectError.from(error).code, number, caller.aborted);
    throw error;
  } finally {
    done();
  }
}

/** Why the hedging stopped without a winner: the request outgrew the buffer between attempts. */
const OVERFLOW: unique symbol = Symbol('overflow');

/**
 * @internal A streaming call — server, client or bidi — hedged by its `hedgingPolicy` (gRFC A6:
 * hedging applies to every kind of call until it commits). The request messages are read once and
 * replayed to every attempt ({@link HedgeReplay}), held in the retry buffer. An attempt commits when
 * its response begins — on the gRPC and gRPC-web protocols at its response headers (a failure
 * before them is trailers-only), on the Connect protocol, which always sends headers first, at its
 * first message or its end — or when the request outgrows the buffer (A6: the call is committed to
 * the attempt in flight that has sent the most; with none in flight, the last failure ends the call).
 * Before that nothing of it has reached the caller, so the next hedge goes `hedgingDelay` after the
 * last (at once after a status in `nonFatalStatusCodes`); the committed attempt wins, the others are
 * aborted, and its messages go to the caller. A failure after the commit is the call's, not hedged
 * again (`onGiveUp`: `'committed'`).
 */
export async function hedgedStream(
  req: StreamRequest,
  next: (req: StreamRequest) => Promise<StreamResponse>,
  plan: GrpcMethodPlan,
  planner: GrpcRetryPlanner,
  breaker: CircuitBreaker | undefined,
): Promise<StreamResponse> {
  const schema = req.method.input;
  const report = new GrpcHedgeReporter(planner, plan, `/${req.service.typeName}/${req.method.name}`, codeOf, req.url, breaker);
  const timeoutMs = readTimeoutMs(req.header);
  const startedAt = planner.clock.now();
  const headersCommit = /^application\/grpc/i.test(req.header.get('content-type') ?? '');
  /** The attempts in flight, each with the function that commits the call to it. */
  const inFlight = new Map<number, () => void>();
  /** Ends the hedging: the caller's signal, or the request outgrowing the buffer between attempts. */
  const stopper = new AbortController();
  const stop = linked(stopper.signal, req.signal);
  let lastFailure: AttemptFailure | undefined;
  const replay = new HedgeReplay<unknown>(
    req.message,
    (message) => report.hold(sizeOf(schema, message)),
    () => {
      const chosen = replay.furthest(inFlight.keys());
      if (chosen !== undefined) {
        replay.commit(chosen);
        inFlight.get(chosen)!();
      } else {
        stopper.abort(OVERFLOW);
      }
    },
  );
  const end = (): void => {
    replay.close();
    report.release();
    stop.dispose();
  };
  let winner: CommittedStream;
  try {
    winner = await hedge(async ({ attempt, signal }, traced?: AttemptContext): Promise<CommittedStream> => {
      report.attempts = attempt;
      // Every attempt goes through the breaker: a refused one is not sent, and no hedge follows it.
      const ticket = report.acquire();
      if (isCircuitOpenError(ticket)) throw ticket;
      const header = attempt === 1 ? new Headers(req.header) : retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (planner.clock.now() - startedAt));
      traced?.inject((name, value) => header.set(name, value));
      const link = linked(signal, req.signal);
      let force!: () => void;
      const forced = new Promise<undefined>((resolve) => (force = () => resolve(undefined)));
      inFlight.set(attempt, force);
      const attemptReq = { ...req, header, signal: link.signal, message: replay.attempt(attempt) } as StreamRequest;
      const ready = (async () => {
        const res = await (traced === undefined ? next(attemptReq) : traced.run(() => next(attemptReq)));
        const rest = res.message[Symbol.asyncIterator]() as AsyncIterator<unknown>;
        const first = headersCommit ? undefined : await rest.next();
        return { res, first, rest };
      })();
      try {
        const begun = await Promise.race([ready, forced]);
        // The response has begun (as for a retried stream, that is the breaker's success); a commit
        // forced by the buffer is settled when it begins, or fails.
        if (begun !== undefined) ticket?.({ value: begun.res });
        else if (ticket !== undefined) ready.then((b) => ticket({ value: b.res }), (error: unknown) => ticket(link.signal.aborted ? 'ignored' : { error: ConnectError.from(error) }));
        return { number: attempt, ready: begun === undefined ? ready : Promise.resolve(begun), link };
      } catch (error) {
        ticket?.(link.signal.aborted ? 'ignored' : { error: ConnectError.from(error) });
        link.dispose();
        const failure = new AttemptFailure(error);
        report.lastCode = failure.grpcCode;
        lastFailure = failure;
        throw failure;
      } finally {
        inFlight.delete(attempt);
      }
    }, report.options(stop.signal));
  } catch (error) {
    end();
    if (req.signal.aborted) {
      const cancelled = ConnectError.from(req.signal.reason, Code.Canceled);
      report.gaveUp(error, cancelled.code);
      throw cancelled;
    }
    if (stopper.signal.aborted && lastFailure !== undefined) {
      // The request outgrew the buffer while no attempt was in flight: the last failure is the call's.
      report.overflowEnded(lastFailure.grpcCode);
      throw lastFailure.error;
    }
    report.gaveUp(error, undefined);
    throw gaveUpError(error);
  }
  replay.commit(winner.number);
  report.release();
  let begun: Awaited<CommittedStream['ready']>;
  try {
    // A commit forced by the buffer may come before the response has begun: its failure is the call's.
    begun = await winner.ready;
  } catch (error) {
    report.committedFailed(ConnectError.from(error).code, winner.number, req.signal.aborted);
    winner.link.dispose();
    end();
    throw error;
  }
  const done = (): void => {
    winner.link.dispose();
    end();
  };
  return { ...begun.res, message: committedMessages(winner.number, begun, done, report, req.signal) } as StreamResponse;
}
