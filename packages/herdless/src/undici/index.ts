/**
 * `herdless/undici`: herdless's HTTP retries as an undici interceptor (`undici` is an optional peer
 * dependency).
 * @packageDocumentation
 */
export { retryInterceptor } from './interceptor.js';
export type { UndiciResponseHead, UndiciRetryOptions, UndiciRequestRetryOptions } from './options.js';
export type { BeforeAttemptHook, HttpAttemptInfo, HttpAttemptChange } from '../http/options.js';
export { hedgingInterceptor } from './hedging.js';
