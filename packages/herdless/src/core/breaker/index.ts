export { CIRCUIT_OPEN, CircuitOpenError, isCircuitOpenError } from './circuit-open-error.js';
export type { BreakerCounts, CountingStrategy, FailureCounter } from './counting.js';
export { consecutiveFailures, type ConsecutiveFailuresCounts, type ConsecutiveFailuresOptions } from './consecutive-failures.js';
export { failureRatio, type FailureRatioCounts, type FailureRatioOptions } from './failure-ratio.js';
export type {
  BreakerCloseEvent,
  BreakerEvent,
  BreakerEventOf,
  BreakerEventType,
  BreakerHalfOpenEvent,
  BreakerOpenEvent,
  BreakerState,
  Unsubscribe,
} from './events.js';
export { DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS, type BreakerPolicyOptions } from './options.js';
export {
  CircuitBreakerMachine,
  circuitBreakerMachine,
  type BreakerOutcome,
  type BreakerPermit,
  type BreakerRejection,
  type BreakerSnapshot,
} from './machine.js';
