import { InterceptingCall } from '@grpc/grpc-js';
import type { Interceptor, InterceptorOptions, NextCall } from '@grpc/grpc-js';
import { InvalidOptionError } from '../core/errors.js';
import { grpcRetryPlanner, type GrpcRetryInterceptorOptions } from '../grpc/interceptor-options.js';
import { HedgingCall } from './hedging-call.js';
import { RetryingCall } from './retrying-call.js';
import { grpcServerName } from '../grpc/throttles.js';

const OWNER = 'grpcRetryInterceptor';

/** Options of {@link grpcRetryInterceptor}: the shared gRPC interceptor options, plus `target`. */
export interface GrpcJsRetryInterceptorOptions extends GrpcRetryInterceptorOptions {
  /**
   * The channel's target (e.g. `'dns:///api.example.com:443'` or `'127.0.0.1:50051'`), the server
   * name whose `retryThrottling` bucket the calls share (gRFC A6: one per server name, across
   * channels). Required when `serviceConfig` has `retryThrottling`: a grpc-js interceptor cannot
   * see its channel's target.
   */
  target?: string | undefined;
}

/**
 * A grpc-js client interceptor that retries calls as gRFC A6 ("gRPC Retry Design") says, with
 * herdless's policies: the retryable status codes, `maxAttempts` (the first try included; a
 * service config's is capped at `maxRetryAttempts`, default 5), the backoff (gRPC's ±20% jitter for a service config), one
 * `retryThrottling` bucket per server name shared by every channel to it, the call's deadline
 * spanning all attempts (a wait that would cross it is not started: the last status is returned at
 * once), `grpc-previous-rpc-attempts` on each retry, and the server's pushback
 * (`grpc-retry-pushback-ms`: a non-negative integer replaces the backoff for that retry, which
 * then restarts from `initialBackoff`; a negative or malformed value means "do not retry").
 *
 * Every kind of call is retried: what the application sends (a unary request, or a client or bidi
 * stream's messages and half-close) is kept in a retry buffer and replayed, in order, by each
 * retry. A6's commit rule holds: once response headers or a message have arrived, or the request
 * has outgrown the buffer (`perRpcBufferLimit`, default 1 MiB; `retryBufferSize`, default 16 MiB
 * across the interceptor's calls — grpc-js's defaults, counted in serialized bytes), the call is
 * committed: the attempt in flight goes on, and a later failure is returned, not retried. The
 * caller sees the last attempt's status, as without the interceptor.
 *
 * A method whose service config entry has a `hedgingPolicy` instead is hedged, every kind of call
 * (A6, "Hedging Policy"; `hedge()` runs the attempts): the next attempt `hedgingDelay` after the
 * last, or at once after a status in `nonFatalStatusCodes` (after the pushback, if the server sent
 * one), up to `maxAttempts`; every hedge admitted by the `retryThrottling` bucket; the request — a
 * stream's messages as they are written — held in the retry buffer and replayed by each hedge (a
 * request that outgrows it commits the call to the attempt that has sent the most); the first
 * attempt to receive response headers (or an OK status) commits the call and the others are
 * cancelled. Hedged calls report each hedge to `onHedge` and their end to `onGiveUp` (with `hedged: true`),
 * never to `onRetry`; `telemetry` sees them as the layer `'hedge'`. Turn grpc-js's own retries off
 * (`'grpc.enable_retries': 0`) so that calls are not retried twice.
 *
 * @param options see {@link GrpcJsRetryInterceptorOptions}.
 * @throws InvalidOptionError (at once) naming the field and the value: an unknown option; a
 *   service config grpc-js would reject (the field is its JSON path, e.g.
 *   `serviceConfig.methodConfig[0].retryPolicy.maxAttempts`); `serviceConfig` with policy options;
 *   a buffer limit that is not an integer ≥ 0; a `retryThrottling` without `target`.
 * @example
 * ```ts
 * import { credentials } from '@grpc/grpc-js';
 * import { grpcRetryInterceptor } from 'herdless/grpc-js';
 *
 * const target = 'dns:///greeter.internal:50051';
 * const client = new GreeterClient(target, credentials.createInsecure(), {
 *   'grpc.enable_retries': 0,
 *   interceptors: [grpcRetryInterceptor({ target, serviceConfig })],
 * });
 * ```
 */
export function grpcRetryInterceptor(options: GrpcJsRetryInterceptorOptions): Interceptor {
  const planner = grpcRetryPlanner(OWNER, options, ['target']);
  const target = options.target;
  if (target !== undefined && (typeof target !== 'string' || target === '')) {
    throw new InvalidOptionError(OWNER, 'target', target, 'must be a non-empty string (the channel target)');
  }
  if (planner.throttled && target === undefined) {
    throw new InvalidOptionError(OWNER, 'target', target, 'is required with retryThrottling (the throttle is kept per server name)');
  }
  if (planner.breaker?.keyed === true && target === undefined) {
    throw new InvalidOptionError(OWNER, 'target', target, 'is required with keyed breakers (they are kept per server name)');
  }
  // One interceptor serves one channel: its breaker is the server name's (looked up per call, so that
  // keyed breakers see it used and never drop it as idle while calls flow).
  const serverName = target === undefined ? '' : grpcServerName(target);
  return (callOptions: InterceptorOptions, nextCall: NextCall) => {
    const plan = planner.planFor(callOptions.method_definition.path, target);
    const breaker = planner.breaker?.get(serverName);
    if (plan.hedging !== undefined) {
      // gRFC A6 hedging, for every kind of call: the request is replayed by each hedge until the call commits.
      return new InterceptingCall(new HedgingCall(planner, plan, callOptions, nextCall, breaker));
    }
    if (plan.policy.maxAttempts <= 1 && plan.policy.budget === undefined && planner.throttle === undefined && breaker === undefined) return new InterceptingCall(nextCall(callOptions));
    return new InterceptingCall(new RetryingCall(planner, plan, callOptions, nextCall, breaker));
  };
}
