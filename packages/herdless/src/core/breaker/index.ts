export { CIRCUIT_OPEN, CircuitOpenError, isCircuitOpenError } from './circuit-open-error.js';
export type { BreakerCounts, BreakerCountsValue, CountingStrategy, FailureCounter } from './counting.js';
export { consecutiveFailures, type ConsecutiveFailuresCounts, type ConsecutiveFailuresOptions } from './consecutive-failures.js';
export { failureRatio, type FailureRatioCounts, type FailureRatioOptions, type RecentCalls } from './failure-ratio.js';
export type {
  BreakerCloseEvent,
  BreakerEvent,
  BreakerEventOf,
  BreakerEventType,
  BreakerHalfOpenEvent,
  BreakerIsolateEvent,
  BreakerOpenEvent,
  BreakerResetEvent,
  BreakerState,
  Unsubscribe,
} from './events.js';
export { DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS, type BreakerPolicyOptions, type HalfOpenSampling } from './options.js';
export { BREAKER_SNAPSHOT_SCHEMA, BREAKER_SNAPSHOT_VERSION, type BreakerSnapshot } from './snapshot.js';
export {
  CircuitBreakerMachine,
  circuitBreakerMachine,
  type BreakerOutcome,
  type BreakerPermit,
  type BreakerRejection,
  type MachineIsolation,
} from './machine.js';
