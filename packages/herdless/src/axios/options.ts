import type { AxiosAdapter, AxiosResponse } from 'axios';
import type { HttpRetryOptions } from '../http/options.js';

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
