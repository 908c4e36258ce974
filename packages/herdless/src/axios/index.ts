/**
 * `herdless/axios`: herdless's HTTP retries as an axios adapter (`axios` is an optional peer
 * dependency).
 * @packageDocumentation
 */
export { retryAdapter } from './adapter.js';
export type { AxiosRetryOptions, AxiosRequestRetryOptions } from './options.js';
export type { BeforeAttemptHook, HttpAttemptInfo, HttpAttemptChange } from '../http/options.js';
export { hedgingAdapter, type AxiosHedgingOptions } from './hedging.js';
