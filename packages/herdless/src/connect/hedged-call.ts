import { Code, ConnectError } from '@connectrpc/connect';
import type { UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { isRetryError } from '../core/retry/errors.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GrpcHedgeReporter } from '../grpc/hedge-report.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
import type { AttemptContext } from '../runtime/telemetry.js';
import { readTimeoutMs, retryHeaders } from './connect-call.js';

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
  try {
    return await hedge(async ({ attempt, signal }, traced?: AttemptContext) => {
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
