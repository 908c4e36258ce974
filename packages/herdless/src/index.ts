/**
 * herdless — retries without the thundering herd.
 *
 * The executor (`retry`, `createRetry`), backoffs with jitter, retry budgets, the circuit breaker,
 * failure classification and server hints, gRPC service-config parsing, and the retrying `fetch`
 * (also `herdless/http`). The functional core the simulator drives (the retry step function, the
 * breaker's state machine, policy specs, the seeded generator) is in `herdless/sim`.
 * @packageDocumentation
 */
export {
  MAX_DELAY_MS,
  constantBackoff,
  exponentialBackoff,
  fullJitterBackoff,
  equalJitterBackoff,
  proportionalJitterBackoff,
  decorrelatedJitterBackoff,
  decorrelatedJitterV2Backoff,
  type Backoff,
  type BackoffSpec,
  type ConstantBackoffOptions,
  type ExponentialBackoffOptions,
  type ProportionalJitterBackoffOptions,
  type DecorrelatedJitterBackoffOptions,
  type DecorrelatedJitterV2BackoffOptions,
} from './core/backoff/index.js';
export type { Rng, IntRng } from './core/rng.js';
export {
  HerdlessError,
  InvalidOptionError,
  isHerdlessError,
  isInvalidOptionError,
  type HerdlessErrorCode,
} from './core/errors.js';
export { systemRandom } from './runtime/system-random.js';
export {
  CIRCUIT_OPEN,
  CircuitOpenError,
  isCircuitOpenError,
  consecutiveFailures,
  failureRatio,
  type BreakerCounts,
  type CountingStrategy,
  type FailureCounter,
  type ConsecutiveFailuresCounts,
  type ConsecutiveFailuresOptions,
  type FailureRatioCounts,
  type FailureRatioOptions,
  type BreakerCloseEvent,
  type BreakerEvent,
  type BreakerEventOf,
  type BreakerEventType,
  type BreakerHalfOpenEvent,
  type BreakerOpenEvent,
  type BreakerState,
  type Unsubscribe,
  type BreakerPolicyOptions,
  type BreakerSnapshot,
  DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS,
} from './core/breaker/index.js';
export {
  CircuitBreaker,
  circuitBreaker,
  type BreakerCallContext,
  type BreakerExecuteOptions,
  type CircuitBreakerOptions,
} from './runtime/breaker.js';
export { systemClock } from './runtime/system-clock.js';
export type { Clock } from './core/time.js';
export {
  retryThrottlingBudget,
  retryRatioBudget,
  finagleRetryBudget,
  awsRetryQuota,
  keyedBudgets,
  type RetryBudget,
  type BudgetSpec,
  type RetryThrottlingBudget,
  type RetryThrottlingBudgetOptions,
  type RetryRatioBudget,
  type RetryRatioBudgetOptions,
  type RetryCountingPoint,
  type FinagleRetryBudget,
  type FinagleRetryBudgetOptions,
  type AwsRetryQuota,
  type AwsRetryQuotaOptions,
  type KeyedBudgets,
  type KeyedBudgetsOptions,
} from './core/budget/index.js';
export * from './grpc/index.js';

// The executor for real calls.
export {
  retry,
  createRetry,
  type Retrier,
  type RetrierOptions,
  type RetryOptions,
  type RetryCallOptions,
  type RetryContext,
  type RetryOperation,
} from './runtime/retry.js';
export type { RetryEvent, GiveUpEvent, HookName } from './runtime/hooks.js';

// Hedging: tail latency cut under a retry budget.
export {
  hedge,
  createHedger,
  type Hedger,
  type HedgerOptions,
  type HedgeOptions,
  type HedgeContext,
  type HedgeOperation,
  type HedgeEvent,
} from './runtime/hedge.js';
export {
  latencyPercentile,
  type LatencyPercentile,
  type LatencyPercentileOptions,
  type LatencyPercentileSpec,
  type HedgePolicy,
  type HedgePolicyOptions,
} from './core/hedge/index.js';
export type {
  TelemetryEvent,
  TelemetryObserver,
  TelemetryCall,
  TelemetryLayer,
  AttemptOutcome,
  DelaySource,
  AttemptStartEvent,
  AttemptEndEvent,
  RetryScheduledEvent,
  GiveUpTelemetryEvent,
  BudgetRefusalEvent,
  HedgeScheduledEvent,
  BreakerStateEvent,
  BreakerRejectionEvent,
  ShedEvent,
} from './runtime/telemetry.js';
export { systemScheduler, type Scheduler } from './runtime/scheduler.js';
export { ManualClock } from './runtime/manual-clock.js';
export {
  parseRetryPolicy,
  DEFAULT_BACKOFF,
  DEFAULT_THROTTLING_BACKOFF,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  RetryError,
  RETRY_ERROR_FIRST_FAILURES,
  RETRY_ERROR_LAST_FAILURES,
  type RetryFailure,
  AttemptTimeoutError,
  isRetryError,
  isAttemptTimeoutError,
  type RetryPolicy,
  type RetryPolicyOptions,
  type GiveUpReason,
} from './core/retry/index.js';
export {
  RETRYABLE_ERROR_CODES,
  RETRYABLE_HTTP_STATUSES,
  RETRYABLE_GRPC_CODES,
  DO_NOT_RETRY,
  markDoNotRetry,
  isDoNotRetry,
  isGivenUp,
  serverHint,
  classify,
  isTransientError,
  retryAfter,
  type ServerHint,
  type RetryableInfo,
  type RetryableOverride,
  type Verdict,
} from './core/classify/index.js';

// The retrying fetch; also the `herdless/http` subpath.
export * from './http/index.js';
