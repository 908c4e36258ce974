export {
  latencyPercentile,
  isLatencyPercentile,
  type LatencyPercentile,
  type LatencyPercentileOptions,
  type LatencyPercentileSpec,
} from './latency.js';
export {
  MAX_HEDGED_ATTEMPTS,
  parseHedgePolicy,
  hedgeDelay,
  hedgeAfterFailure,
  type HedgePolicy,
  type HedgePolicyOptions,
  type HedgeStep,
} from './policy.js';
