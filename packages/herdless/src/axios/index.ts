/**
 * `herdless/axios`: herdless's HTTP retries as an axios adapter (`axios` is an optional peer
 * dependency).
 * @packageDocumentation
 */
export { retryAdapter } from './adapter.js';
export type { AxiosRetryOptions } from './options.js';
export { hedgingAdapter, type AxiosHedgingOptions } from './hedging.js';
