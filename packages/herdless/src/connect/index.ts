/**
 * herdless/connect — gRFC A6 retries for Connect clients (`@connectrpc/connect` v2, browsers and
 * Node): {@link connectRetryInterceptor}. Imports nothing Node-only.
 * @packageDocumentation
 */
export { connectRetryInterceptor, type ConnectRetryInterceptorOptions } from './interceptor.js';
export type { GrpcRetryInterceptorOptions } from '../grpc/interceptor-options.js';
export type { GrpcRetryEvent, GrpcGiveUpEvent, GrpcHedgeEvent } from '../grpc/interceptor-options.js';
