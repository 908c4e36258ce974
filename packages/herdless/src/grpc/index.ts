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
