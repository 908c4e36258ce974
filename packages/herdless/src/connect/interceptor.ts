import type { Interceptor, StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from '@connectrpc/connect';
import { grpcRetryPlanner, type GrpcRetryInterceptorOptions, type GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { grpcServerName } from '../grpc/throttles.js';
import { ConnectCall, overflowReason, sizeOf } from './connect-call.js';
import { hedgedStream, hedgedUnaryCall } from './hedged-call.js';
import { streamCall } from './stream-call.js';

const OWNER = 'connectRetryInterceptor';

/** Options of {@link connectRetryInterceptor}: the shared gRPC interceptor options. */
export type ConnectRetryInterceptorOptions = GrpcRetryInterceptorOptions;

/** A unary call: its request held for replay (or the call committed at once if it does not fit), then its attempts. */
async function unaryCall(call: ConnectCall, req: UnaryRequest, next: (req: UnaryRequest) => Promise<UnaryResponse>, planner: GrpcRetryPlanner): Promise<UnaryResponse> {
  if (!call.buffer.hold(sizeOf(req.method.input, req.message))) call.committed = overflowReason(planner);
  try {
    for (;;) {
      const header = call.header();
      try {
        const res = await call.send(() => next(header === req.header ? req : { ...req, header }));
        call.answered(res);
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
 * A method whose service config entry has a `hedgingPolicy` instead is hedged, every kind of call
 * (A6, "Hedging Policy"): the next attempt `hedgingDelay` after the last, at once after a status in
 * `nonFatalStatusCodes` (after the pushback, if any), up to `maxAttempts`, under the
 * `retryThrottling` bucket, the request held in the retry buffer and replayed by each hedge; the
 * first successful unary response, or the first stream whose response begins (headers on gRPC and
 * gRPC-web, a message on the Connect protocol), wins and the others are aborted. Hedged calls report to `onHedge` and `onGiveUp`
 * (with `hedged: true`), never to `onRetry`, and to `telemetry` as the layer `'hedge'`.
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
    const serverName = grpcServerName(req.url);
    const plan = planner.planFor(path, serverName);
    const breaker = planner.breaker?.get(serverName);
    if (plan.hedging !== undefined) {
      // gRFC A6 hedging, for every kind of call: the request is replayed by each hedge until the call commits.
      return req.stream
        ? hedgedStream(req, next as (req: StreamRequest) => Promise<StreamResponse>, plan, planner, breaker)
        : hedgedUnaryCall(req, next as (req: UnaryRequest) => Promise<UnaryResponse>, plan, planner, breaker);
    }
    if (plan.policy.maxAttempts <= 1 && plan.policy.budget === undefined && planner.throttle === undefined && breaker === undefined) return next(req);
    const call = new ConnectCall(planner, plan, path, req, breaker);
    return req.stream
      ? streamCall(call, req, next as (req: StreamRequest) => Promise<StreamResponse>, planner)
      : unaryCall(call, req, next as (req: UnaryRequest) => Promise<UnaryResponse>, planner);
  };
}
