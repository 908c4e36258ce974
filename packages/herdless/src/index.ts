/**
 * herdless — retries without the thundering herd.
 *
 * Backoff strategies with jitter, and the randomness they draw from. Everything here is usable in
 * real calls and in the simulator (`herdless/sim`) alike.
 * @packageDocumentation
 */
export * from './core/backoff/index.js';
export type { Rng, IntRng } from './core/rng.js';
export { PyRandom } from './core/python-random.js';
export {
  HerdlessError,
  InvalidOptionError,
  isHerdlessError,
  isInvalidOptionError,
  type HerdlessErrorCode,
} from './core/errors.js';
export { systemRandom } from './runtime/system-random.js';
export * from './core/breaker/index.js';
export {
  CircuitBreaker,
  circuitBreaker,
  type BreakerCallContext,
  type BreakerExecuteOptions,
  type CircuitBreakerOptions,
} from './runtime/breaker.js';
export { systemClock } from './runtime/system-clock.js';
export type { Clock } from './core/time.js';
export * from './core/budget/index.js';
export * from './grpc/index.js';

// retry(): the executor for real calls (issue 3).
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
  BreakerStateEvent,
  BreakerRejectionEvent,
  ShedEvent,
} from './runtime/telemetry.js';
export { systemScheduler, type Scheduler } from './runtime/scheduler.js';
export { ManualClock } from './runtime/manual-clock.js';
export * from './core/retry/index.js';
export * from './core/classify/index.js';

// The retrying fetch (issue 4); also the `herdless/http` subpath.
export * from './http/index.js';
