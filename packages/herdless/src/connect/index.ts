/**
 * herdless/connect — gRFC A6 retries for Connect clients (`@connectrpc/connect` v2, browsers and
 * Node): {@link connectRetryInterceptor}. Imports nothing Node-only.
 * @packageDocumentation
 */
export { connectRetryInterceptor, type ConnectRetryInterceptorOptions } from './interceptor.js';
export type { GrpcRetryInterceptorOptions, GrpcRetryEvent, GrpcGiveUpEvent } from '../grpc/call-retry.js';
