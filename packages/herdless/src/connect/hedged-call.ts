import { Code, ConnectError } from '@connectrpc/connect';
import type { UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { isRetryError } from '../core/retry/errors.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
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

/**
 * @internal A unary call hedged by its service config's `hedgingPolicy` (gRFC A6): `hedge()` sends
 * the request again `hedgingDelay` after the last attempt (at once after a status in
 * `nonFatalStatusCodes`, after the pushback if there is one), up to `maxAttempts`, each hedge with
 * `grpc-previous-rpc-attempts` and the time left of the call's timeout, admitted by the
 * `retryThrottling` bucket. Connect's unary API hands over a response whole, so the first successful
 * response wins and commits; the other attempts are aborted through their signal. When every
 * attempt fails, the caller gets the last attempt's error, unchanged.
 */
export async function hedgedUnaryCall(req: UnaryRequest, next: (req: UnaryRequest) => Promise<UnaryResponse>, plan: GrpcMethodPlan, planner: GrpcRetryPlanner): Promise<UnaryResponse> {
  const { policy, nonFatal } = plan.hedging!;
  const timeoutMs = readTimeoutMs(req.header);
  const startedAt = planner.clock.now();
  try {
    return await hedge(
      async ({ attempt, signal }) => {
        const header = attempt === 1 ? req.header : retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (planner.clock.now() - startedAt));
        try {
          return await next({ ...req, header, signal });
        } catch (error) {
          throw new AttemptFailure(error);
        }
      },
      {
        maxAttempts: policy.maxAttempts,
        delayMs: policy.hedgingDelayMs,
        budget: plan.policy.budget,
        retryable: (error) => error instanceof AttemptFailure && nonFatal.has(error.grpcCode),
        maxRetryAfterMs: plan.policy.maxRetryAfterMs,
        clock: planner.clock,
        telemetry: planner.telemetry,
        onHookError: planner.options.onHookError,
        signal: req.signal,
      },
    );
  } catch (error) {
    if (isRetryError(error) && error.cause instanceof AttemptFailure) throw error.cause.error;
    if (req.signal.aborted) throw ConnectError.from(req.signal.reason, Code.Canceled);
    throw error;
  }
}
