import type { AxiosAdapter, AxiosResponse } from 'axios';
import type { HttpRequestRetryOptions, HttpRetryOptions } from '../http/options.js';

/**
 * Options of {@link retryAdapter}: those of `withRetry()` (`maxAttempts`, `backoff`, `budget`,
 * `retryMethods`, `retryStatuses`, `idempotencyKey`, `attemptTimeoutMs`, `deadlineMs`,
 * `telemetry`…), with the hooks' `response` being the `AxiosResponse`, plus the adapter it wraps.
 * @example
 * ```ts
 * const options: AxiosRetryOptions = { maxAttempts: 4, idempotencyKey: true };
 * ```
 */
export type AxiosRetryOptions = HttpRetryOptions<AxiosResponse> & {
  /**
   * The adapter that sends each attempt. Default: axios's own (`axios.getAdapter(axios.defaults.adapter)`:
   * `xhr`, `http` or `fetch`, whichever the platform has), resolved at the first request.
   */
  adapter?: AxiosAdapter | undefined;
};

/**
 * One request's options over the adapter's, given as `herdless` in the request config (as
 * axios-retry takes `'axios-retry'`): `maxAttempts`, `backoff`, `maxRetryAfterMs`, `deadlineMs`,
 * `attemptTimeoutMs`, `ignoreHints`, `idempotencyKey`, `beforeAttempt`. Checked per request; an
 * invalid value rejects that request with an `InvalidOptionError` naming the field.
 * @example
 * ```ts
 * await api.get('/report', { herdless: { maxAttempts: 1 } });
 * ```
 */
export type AxiosRequestRetryOptions = HttpRequestRetryOptions;

declare module 'axios' {
  interface AxiosRequestConfig {
    /** herdless's per-request options (see `AxiosRequestRetryOptions`), read by `retryAdapter`. */
    herdless?: HttpRequestRetryOptions | undefined;
  }
}
