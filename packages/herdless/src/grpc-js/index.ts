/**
 * herdless/grpc-js — gRFC A6 retries for grpc-js clients: {@link grpcRetryInterceptor}. The
 * service config parser, pushback and status helpers it builds on are `herdless/grpc`.
 * @packageDocumentation
 */
export { grpcRetryInterceptor, type GrpcJsRetryInterceptorOptions } from './interceptor.js';
export type { GrpcRetryInterceptorOptions } from '../grpc/interceptor-options.js';
export type { GrpcRetryEvent, GrpcGiveUpEvent, GrpcHedgeEvent } from '../grpc/interceptor-options.js';
