export {
  RETRYABLE_HTTP_METHODS,
  DEFAULT_RETRY_STATUSES,
  RETRY_AFTER_STATUSES,
  IDEMPOTENCY_KEY_HEADER,
  RETRY_AFTER_MS_HEADER,
  DO_NOT_RETRY_HEADER,
  ATTEMPT_HEADER,
} from './data.js';
export { parseHttpDate } from './http-date.js';
export { parseRetryAfter, parseRetryAfterMs, retryAfterFromHeaders } from './retry-after.js';
export { newIdempotencyKey } from './idempotency-key.js';
export { HttpStatusError, isHttpStatusError, throwIfNotOk, type StatusLike } from './status-error.js';
export { retryInfo, isGivenUp, type HttpRetryInfo } from './retry-info.js';
export {
  type FetchFunction,
  type FetchInput,
  type FetchBody,
  type HttpRetryEvent,
  type HttpGiveUpEvent,
  type IdempotencyKeyOption,
  type HttpCallOptions,
  type HttpRequestRetryOptions,
  type HttpAttemptInfo,
  type HttpAttemptChange,
  type BeforeAttemptHook,
  type HttpRetryOptions,
  type FetchWithRetryOptions,
} from './options.js';
export { withRetry, fetchWithRetry, type RetryingFetch } from './fetch.js';
export { withHedging, type HttpHedgingOptions, type HedgingFetch } from './hedge.js';
