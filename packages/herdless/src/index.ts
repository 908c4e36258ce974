/**
 * herdless — retries without the thundering herd.
 *
 * What a caller uses: the executor (`retry`, `createRetry`), backoffs with jitter, retry budgets,
 * the circuit breaker, the errors it throws and their guards, the "do not retry" mark, and a manual
 * clock for tests. Everything else lives on a subpath that says what it is: `herdless/http` (the
 * retrying `fetch`, `Retry-After`), `herdless/grpc` (service config, pushback, the grpc-js
 * interceptor), `herdless/core` (the pure decision step, classification, defaults and limits),
 * `herdless/sim` (the simulator). The list of names below is the stable surface (docs/versioning.md).
 * @packageDocumentation
 */

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
export type { RetryPolicy, RetryPolicyOptions } from './core/retry/policy.js';

// Hedging: a second attempt for a slow call, every one admitted by a retry budget (docs/hedging.md).
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

// Backoffs.
export {
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

// Retry budgets.
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
  adaptiveThrottling,
  type AttemptThrottle,
  type AdaptiveThrottling,
  type AdaptiveThrottlingOptions,
  type ThrottleSpec,
} from './core/budget/index.js';

// The circuit breaker.
export {
  CircuitBreaker,
  circuitBreaker,
  type BreakerCallContext,
  type BreakerExecuteOptions,
  type BreakerIsolation,
  type BreakerSettlement,
  type CircuitBreakerOptions,
} from './runtime/breaker.js';
export { keyedBreakers, type KeyedBreakers, type KeyedBreakersOptions } from './runtime/keyed-breakers.js';
export {
  CircuitOpenError,
  isCircuitOpenError,
  consecutiveFailures,
  failureRatio,
  type BreakerCounts,
  type BreakerCountsValue,
  type CountingStrategy,
  type FailureCounter,
  type ConsecutiveFailuresCounts,
  type ConsecutiveFailuresOptions,
  type FailureRatioCounts,
  type FailureRatioOptions,
  type RecentCalls,
  type BreakerCloseEvent,
  type BreakerEvent,
  type BreakerEventOf,
  type BreakerEventType,
  type BreakerHalfOpenEvent,
  type BreakerIsolateEvent,
  type BreakerOpenEvent,
  type BreakerResetEvent,
  type BreakerState,
  type Unsubscribe,
  type BreakerPolicyOptions,
  type HalfOpenSampling,
  type BreakerSnapshot,
} from './core/breaker/index.js';

// Errors and their guards (the guards hold across duplicate installs of herdless).
export {
  HerdlessError,
  InvalidOptionError,
  isHerdlessError,
  isInvalidOptionError,
  type HerdlessErrorCode,
} from './core/errors.js';
export {
  RetryError,
  HedgeError,
  AttemptTimeoutError,
  isRetryError,
  isHedgeError,
  isAttemptTimeoutError,
  type RetryFailure,
  type GiveUpReason,
  type RetryErrorReason,
} from './core/retry/errors.js';

// Classification: what is transient, and the "do not retry" mark that keeps layers from multiplying.
export { markDoNotRetry, isDoNotRetry, isGivenUp, serverHint, type ServerHint } from './core/classify/hints.js';
export { isTransientError, type RetryableInfo, type RetryableOverride } from './core/classify/classify.js';
export type { Verdict } from './core/classify/verdict.js';

// Time and randomness: the defaults, and a clock for tests.
export type { Clock } from './core/time.js';
export type { Rng, IntRng } from './core/rng.js';
export { systemClock } from './runtime/system-clock.js';
export { systemScheduler, type Scheduler } from './runtime/scheduler.js';
export { systemRandom } from './runtime/system-random.js';
export { ManualClock } from './runtime/manual-clock.js';

// Telemetry: the events every layer reports (herdless/otel turns them into OpenTelemetry metrics).
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
  HedgeScheduledEvent,
  BudgetRefusalEvent,
  ThrottleRejectionEvent,
  BreakerStateEvent,
  BreakerRejectionEvent,
  ShedEvent,
  AttemptContext,
} from './runtime/telemetry.js';
