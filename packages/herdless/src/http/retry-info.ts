import { markDoNotRetry } from '../core/classify/hints.js';
import type { GiveUpReason, RetryError } from '../core/retry/errors.js';

/**
 * How a response returned by `withRetry()` / `fetchWithRetry()` came about; read it with
 * {@link retryInfo}.
 *
 * @example
 * ```ts
 * const { attempts, reason } = retryInfo(response) ?? {};
 * ```
 */
export interface HttpRetryInfo {
  /** Attempts sent for this call, the first included (1 when it was not retried). */
  readonly attempts: number;
  /**
   * `undefined` when the response was accepted as the call's result (a status that is not retried,
   * such as 200 or 404). Otherwise why retrying stopped and this retryable-status response was
   * returned: `'exhausted'`, `'hint-too-long'` (its `Retry-After` exceeds `maxRetryAfterMs` or the
   * time left), `'do-not-retry'` (`X-Herdless-Retry: no`), `'budget'`, `'deadline'`, or `'fatal'`
   * (the request may not be retried — a `POST` without an idempotency key, a stream body — or the
   * `retryable` override said no). A response with a `reason` is also marked "given up"
   * (`isGivenUp(response)` is true): no herdless layer around this call retries it again.
   */
  readonly reason: GiveUpReason | undefined;
  /**
   * With a `reason`: a `RetryError` that says it in words (`message`), with `reason`, `attempts`,
   * and this response's {@link HttpStatusError} as `cause`. It is not thrown; it explains.
   */
  readonly error: RetryError | undefined;
}

const infos = /* @__PURE__ */ new WeakMap<object, HttpRetryInfo>();

/**
 * What `withRetry()` (or the axios adapter, given an `AxiosResponse`) knows about a response it returned: attempts made, and why it stopped
 * retrying when it returns a response with a retryable status (a 503 after exhausting its
 * attempts, a 429 whose `Retry-After` was too long…). `undefined` for a response that did not come
 * from `withRetry()`. The record is held weakly: it lives as long as the response.
 *
 * @example
 * ```ts
 * const res = await fetchWithRetry(url, undefined, { maxRetryAfterMs: 10_000 });
 * if (!res.ok) console.warn(res.status, retryInfo(res)?.reason); // e.g. 429 'hint-too-long'
 * ```
 */
export function retryInfo(response: Response | object): HttpRetryInfo | undefined {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: WeakMap.get of a primitive or null is undefined as well (it does not throw)
  return typeof response === 'object' && response !== null ? infos.get(response) : undefined;
}

/**
 * @internal Records how `response` came about. A response returned after giving up also gets the
 * "do not retry" mark, which `isGivenUp()` (and so every enclosing herdless layer) recognises.
 */
export function recordRetryInfo(response: object, info: HttpRetryInfo): void {
  infos.set(response, Object.freeze(info));
  if (info.reason !== undefined) markDoNotRetry(response);
}

export { isGivenUp } from '../core/classify/hints.js';
