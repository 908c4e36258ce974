/**
 * herdless/grpc — gRFC A6 retries for grpc-js clients: {@link grpcRetryInterceptor}. The service
 * config parser and the status helpers are re-exported from the main entry.
 * @packageDocumentation
 */
export { grpcRetryInterceptor, type GrpcJsRetryInterceptorOptions } from './interceptor.js';
export type { GrpcRetryInterceptorOptions } from '../grpc/interceptor-options.js';
export type { GrpcRetryEvent, GrpcGiveUpEvent } from '../grpc/call-retry.js';
export * from '../grpc/index.js';
