import { isGivenUp, markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError, InvalidOptionError, isHerdlessError } from '../core/errors.js';
import { DO_NOT_RETRY_HEADER } from './data.js';
import { retryAfterFromHeaders } from './retry-after.js';

/**
 * What {@link HttpStatusError} needs of a response: its status (and its status text, if any).
 * @example
 * ```ts
 * const head: StatusLike = { status: 503, statusText: 'Service Unavailable' };
 * ```
 */
export interface StatusLike {
  readonly status: number;
  readonly statusText?: string | undefined;
}

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
export class HttpStatusError<R extends StatusLike = Response> extends HerdlessError {
  /** The response's status, e.g. 503. */
  readonly status: number;
  /**
   * The response: a `Response` from the retrying fetch, the response head (`status`, `statusText`,
   * `headers`) from the undici interceptor, the `AxiosResponse` from the axios adapter. Read its
   * headers freely; its body belongs to the adapter: it is discarded before the next attempt, or
   * handed to the caller when the call gives up.
   */
  readonly response: R;
  /** The server's hint in ms (≥ 0, finite), when the response carried a valid one. */
  readonly retryAfterMs?: number;

  /**
   * @param response the response.
   * @param retryAfterMs the parsed hint in ms, if any.
   */
  constructor(response: R, retryAfterMs?: number) {
    super('ERR_HERDLESS_HTTP_STATUS', `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    this.name = 'HttpStatusError';
    this.status = response.status;
    this.response = response;
    // Stryker disable next-line ConditionalExpression: the field is declared, so it exists (undefined) either way
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * True for an {@link HttpStatusError} from any copy of herdless. `R` is the response type of the
 * adapter that made it (default: fetch's `Response`).
 * @example
 * ```ts
 * if (isHttpStatusError(event.error)) console.log(event.error.status);
 * ```
 */
export function isHttpStatusError<R extends StatusLike = Response>(error: unknown): error is HttpStatusError<R> {
  return isHerdlessError(error, 'ERR_HERDLESS_HTTP_STATUS');
}

/**
 * @internal True when the response's headers say `X-Herdless-Retry: no` (any case, spaces ignored).
 * The header is a list (RFC 9110 §5.3): sent twice, or by a proxy that adds its own, it arrives
 * combined as `no, no`. Any member `no` marks the response: a mark must not vanish because it was
 * repeated, and a conflicting `no, yes` errs on the side of fewer retries.
 */
export function hasDoNotRetryHeader(headers: { get(name: string): string | null }): boolean {
  const value = headers.get(DO_NOT_RETRY_HEADER);
  return value !== null && value.split(',').some((member) => member.trim().toLowerCase() === 'no');
}

/**
 * Returns `response` when it is ok (status 200–299); otherwise throws an {@link HttpStatusError}
 * for it, keeping everything an outer retry layer needs:
 * - `status`, and `response` itself (its body unread, yours to read);
 * - `retryAfterMs`, the server's hint from `retry-after-ms` / `Retry-After` (on any status)
 *   (seconds or an HTTP-date, RFC 9110 §10.2.3, measured from the response's `Date` header when valid, else `Date.now()`);
 * - the "do not retry" mark ({@link isGivenUp} is true) when the response was returned by
 *   `withRetry()` after giving up, or carries `X-Herdless-Retry: no`: an enclosing `retry()` then
 *   stops at once (reason `'do-not-retry'`) instead of multiplying the attempts already made.
 *
 * Use it in place of `throw Object.assign(new Error(...), { status })`, which loses the hint and
 * the mark.
 *
 * @param response a fetch `Response`.
 * @returns the same response, when `response.ok`.
 * @throws HttpStatusError for any other status; InvalidOptionError when `response` is not a Response.
 * @example
 * ```ts
 * const api = withRetry(fetch, { maxAttempts: 3 });
 * // The outer retry() also covers the JSON parsing; it never re-sends what api() already gave up on.
 * const user = await retry(async () => (throwIfNotOk(await api(`${base}/users/1`))).json(), { maxAttempts: 4 });
 * ```
 */
export function throwIfNotOk(response: Response): Response {
  if (typeof response !== 'object' || response === null || typeof response.status !== 'number' || typeof response.headers?.get !== 'function') {
    throw new InvalidOptionError('throwIfNotOk', 'response', response, 'must be a fetch Response');
  }
  if (response.ok) return response;
  // Any status may carry a hint (RFC 9110 §10.2.3); it matters only if the status is retried.
  const error = new HttpStatusError(response, retryAfterFromHeaders(response.headers, Date.now()));
  if (isGivenUp(response) || hasDoNotRetryHeader(response.headers)) markDoNotRetry(error);
  throw error;
}
