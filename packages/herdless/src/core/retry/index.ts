export {
  parseRetryPolicy,
  DEFAULT_BACKOFF,
  DEFAULT_THROTTLING_BACKOFF,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  type RetryPolicy,
  type RetryPolicyOptions,
} from './policy.js';
export { startRetry, decide, describeGiveUp, type RetryState, type RetryCommand } from './decide.js';
export {
  RetryError,
  RETRY_ERROR_FIRST_FAILURES,
  RETRY_ERROR_LAST_FAILURES,
  type RetryFailure,
  AttemptTimeoutError,
  isRetryError,
  isAttemptTimeoutError,
  type GiveUpReason,
} from './errors.js';
