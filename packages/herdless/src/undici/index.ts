/**
 * `herdless/undici`: herdless's HTTP retries as an undici interceptor (`undici` is an optional peer
 * dependency).
 * @packageDocumentation
 */
export { retryInterceptor } from './interceptor.js';
export type { UndiciResponseHead, UndiciRetryOptions } from './options.js';
export { hedgingInterceptor } from './hedging.js';
