/**
 * `herdless/core` — the functional core under `retry()` and the circuit breaker: pure, no timers, no
 * ambient time or randomness. For writing a driver of your own, for tests that pin a policy's
 * decisions, and for the defaults and limits the library uses.
 *
 * - the retry policy and its per-call step: `parseRetryPolicy`, `startRetry`, `decide`, `describeGiveUp`;
 * - classification: `classify` and its verdicts, the data tables (`RETRYABLE_ERROR_CODES`, …), the
 *   `DO_NOT_RETRY` mark;
 * - the breaker's state machine (`circuitBreakerMachine`);
 * - policies as data (`backoffFromSpec`, `budgetFromSpec`) and the seeded generator `PyRandom`;
 * - the defaults and limits (`DEFAULT_BACKOFF`, `DEFAULT_MAX_ATTEMPTS`, `MAX_DELAY_MS`, …).
 * @packageDocumentation
 */
export { MAX_DELAY_MS, backoffFromSpec, BACKOFF_KINDS } from './backoff/index.js';
export {
  parseRetryPolicy,
  DEFAULT_BACKOFF,
  DEFAULT_THROTTLING_BACKOFF,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  startRetry,
  decide,
  describeGiveUp,
  RETRY_ERROR_FIRST_FAILURES,
  RETRY_ERROR_LAST_FAILURES,
  type RetryPolicy,
  type RetryPolicyOptions,
  type RetryState,
  type RetryCommand,
} from './retry/index.js';
export {
  RETRYABLE_ERROR_CODES,
  NETWORK_ERROR_MESSAGES,
  NETWORK_ERROR_MESSAGE_PREFIXES,
  RETRYABLE_HTTP_STATUSES,
  RETRYABLE_GRPC_CODES,
  DO_NOT_RETRY,
  classify,
  retryAfter,
  RETRYABLE,
  RETRYABLE_TIMEOUT,
  RETRYABLE_THROTTLED,
  FATAL,
  DO_NOT_RETRY_VERDICT,
  CIRCUIT_OPEN_VERDICT,
  type Verdict,
} from './classify/index.js';
export {
  CIRCUIT_OPEN,
  DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS,
  CircuitBreakerMachine,
  circuitBreakerMachine,
  type BreakerOutcome,
  type BreakerPermit,
  type BreakerRejection,
} from './breaker/index.js';
export { budgetFromSpec, BUDGET_KINDS } from './budget/index.js';
export { PyRandom } from './python-random.js';
