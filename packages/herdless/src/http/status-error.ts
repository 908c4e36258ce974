import { HerdlessError, isHerdlessError } from '../core/errors.js';

/**
 * A response with a retryable status, seen as the failure of an attempt. `withRetry()` never
 * rejects with it — a 503 is a response, and the call resolves with the last one — but it is what
 * `onRetry` and `onGiveUp` report as `error`, what the `retryable` override receives for a
 * response, and the `cause` of the `RetryError` that {@link retryInfo} returns. Code
 * `ERR_HERDLESS_HTTP_STATUS`.
 *
 * Its `retryAfterMs` is the server's hint read from `retry-after-ms` / `Retry-After`, in ms; absent
 * when there is no valid hint.
 *
 * @example
 * ```ts
 * withRetry(fetch, {
 *   retryable: (e, { transient }) => (isHttpStatusError(e) ? e.status !== 500 : transient),
 * });
 * ```
 */
export class HttpStatusError extends HerdlessError {
  /** The response's status, e.g. 503. */
  readonly status: number;
  /**
   * The response. Read its headers freely; its body belongs to the adapter: it is cancelled
   * before the next attempt, or handed to the caller when the call gives up.
   */
  readonly response: Response;
  /** The server's hint in ms (≥ 0, finite), when the response carried a valid one. */
  readonly retryAfterMs?: number;

  /**
   * @param response the response.
   * @param retryAfterMs the parsed hint in ms, if any.
   */
  constructor(response: Response, retryAfterMs?: number) {
    super('ERR_HERDLESS_HTTP_STATUS', `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    this.name = 'HttpStatusError';
    this.status = response.status;
    this.response = response;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * True for an {@link HttpStatusError} from any copy of herdless.
 * @example
 * ```ts
 * if (isHttpStatusError(event.error)) console.log(event.error.status);
 * ```
 */
export function isHttpStatusError(error: unknown): error is HttpStatusError {
  return isHerdlessError(error, 'ERR_HERDLESS_HTTP_STATUS');
}
