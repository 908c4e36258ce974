export { MAX_DELAY_MS, type Backoff, type BackoffSpec } from './backoff.js';
export { constantBackoff, type ConstantBackoffOptions } from './constant.js';
export {
  exponentialBackoff,
  fullJitterBackoff,
  equalJitterBackoff,
  proportionalJitterBackoff,
  type ExponentialBackoffOptions,
  type ProportionalJitterBackoffOptions,
} from './exponential.js';
export { decorrelatedJitterBackoff, type DecorrelatedJitterBackoffOptions } from './decorrelated.js';
export { decorrelatedJitterV2Backoff, type DecorrelatedJitterV2BackoffOptions } from './decorrelated-v2.js';
export { backoffFromSpec, BACKOFF_KINDS } from './spec.js';
