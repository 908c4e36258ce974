/**
 * herdless/grpc — gRPC's retry rules as data and parsers, for any gRPC client: the service config's
 * `retryPolicy` and `retryThrottling` (gRFC A6) as a herdless policy and budget, `grpc-retry-pushback-ms`,
 * status codes and names, per-server throttles, and the interceptor options shared by
 * `herdless/grpc-js` and `herdless/connect`. Nothing here loads a gRPC library.
 * @packageDocumentation
 */
export { GRPC_STATUS_CODES, grpcStatusName, grpcStatusOf, type GrpcStatusName } from './status.js';
export { grpcDurationMs } from './duration.js';
export {
  parseGrpcServiceConfig,
  GRPC_MAX_ATTEMPTS_CAP,
  type ParseGrpcServiceConfigOptions,
  type GrpcRetryConfig,
  type GrpcRetryPolicy,
  type GrpcRetryThrottling,
  type GrpcRetryOptions,
  type GrpcHedgingPolicy,
  type GrpcHedgeOptions,
} from './service-config.js';
export { parseGrpcPushback, GRPC_PUSHBACK_HEADER, type GrpcPushback } from './pushback.js';
export { grpcServerName, grpcThrottleFor, grpcThrottleOf } from './throttles.js';
export type { GrpcRetryInterceptorOptions } from './interceptor-options.js';
export type { GrpcRetryEvent, GrpcGiveUpEvent, GrpcHedgeEvent } from './interceptor-options.js';
