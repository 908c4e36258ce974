import { Code, ConnectError } from '@connectrpc/connect';
import type { Interceptor, UnaryRequest } from '@connectrpc/connect';
import type { Scheduler } from '../runtime/scheduler.js';
import { GrpcCallRetry } from '../grpc/call-retry.js';
import { grpcRetryPlanner, type GrpcRetryInterceptorOptions } from '../grpc/interceptor-options.js';
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
function retryHeaders(req: UnaryRequest, attempt: number, leftMs: number | undefined): Headers {
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

/**
 * A Connect (`@connectrpc/connect` v2) interceptor that retries unary calls as gRFC A6 says, with
 * the same rules as `grpcRetryInterceptor` from `herdless/grpc`: the retryable status codes
 * (`ConnectError.code`, gRPC's numbering), `maxAttempts` (first try included; a service config's
 * capped at 5), the backoff (gRPC's ±20% for a service config), one `retryThrottling` bucket per
 * server name (the host of the request URL), the call's timeout spanning all attempts (each retry
 * sends the time that is left; a wait that would cross it is not started), `grpc-previous-rpc-attempts`
 * on retries, and the server's pushback (`grpc-retry-pushback-ms` in the error's metadata: a
 * non-negative integer replaces the backoff and restarts it; a negative or malformed one means
 * "do not retry"). The caller gets the last attempt's error, unchanged. Streaming calls pass through.
 *
 * It works with every Connect transport — Connect, gRPC and gRPC-web, in browsers
 * (`@connectrpc/connect-web`) and Node (`@connectrpc/connect-node`): it imports nothing else.
 * Connect's unary API delivers a response or an error whole, so A6's commit rule (no retry once
 * headers arrived) has nothing to act on for unary calls.
 *
 * @throws InvalidOptionError (at once) naming the field and the value: an unknown option, a service
 *   config grpc-js would reject (the field is its JSON path under `serviceConfig.`), `serviceConfig`
 *   together with policy options.
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
  const { clock } = planner;
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const path = `/${req.service.typeName}/${req.method.name}`;
    const plan = planner.planFor(path, grpcServerName(req.url));
    if (plan.policy.maxAttempts <= 1 && plan.policy.budget === undefined && planner.throttle === undefined) return next(req);
    const timeoutMs = readTimeoutMs(req.header);
    const startedAt = clock.now();
    const call = new GrpcCallRetry(planner, plan, path, timeoutMs ?? Infinity);
    let lastError: unknown;
    for (;;) {
      const attempt = call.attempt;
      if (!call.admit(lastError === undefined ? Code.Unavailable : ConnectError.from(lastError).code)) {
        throw lastError ?? new ConnectError('adaptive throttling rejected the call locally', Code.Unavailable);
      }
      const attemptReq: UnaryRequest =
        attempt === 1 ? req : { ...req, header: retryHeaders(req, attempt, timeoutMs === undefined ? undefined : timeoutMs - (clock.now() - startedAt)) };
      call.started();
      try {
        const res = await next(attemptReq);
        call.succeeded();
        return res;
      } catch (error) {
        // The caller's abort or the deadline's: never retried.
        if (req.signal.aborted) throw error;
        const failure = ConnectError.from(error);
        const command = call.failed(failure.code, failure.metadata.get(GRPC_PUSHBACK_HEADER) ?? undefined);
        if (command.kind === 'give-up') throw error;
        lastError = error;
        if (command.delayMs > 0) await wait(clock, command.delayMs, req.signal);
      }
    }
  };
}
