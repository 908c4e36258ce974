export { RETRYABLE_ERROR_CODES, NETWORK_ERROR_MESSAGES, NETWORK_ERROR_MESSAGE_PREFIXES, RETRYABLE_HTTP_STATUSES, RETRYABLE_GRPC_CODES } from './data.js';
export { DO_NOT_RETRY, markDoNotRetry, isDoNotRetry, isGivenUp, serverHint, type ServerHint } from './hints.js';
export { classify, isTransientError, type RetryableInfo, type RetryableOverride } from './classify.js';
export { RETRYABLE, RETRYABLE_TIMEOUT, RETRYABLE_THROTTLED, FATAL, DO_NOT_RETRY_VERDICT, CIRCUIT_OPEN_VERDICT, retryAfter, type Verdict } from './verdict.js';
