export type { RetryBudget, BudgetSpec } from './budget.js';
export { retryThrottlingBudget, type RetryThrottlingBudget, type RetryThrottlingBudgetOptions } from './retry-throttling.js';
export {
  retryRatioBudget,
  ARTICLE_RETRY_RATIO,
  type RetryRatioBudget,
  type RetryRatioBudgetOptions,
  type RetryCountingPoint,
} from './retry-ratio.js';
export { finagleRetryBudget, type FinagleRetryBudget, type FinagleRetryBudgetOptions } from './finagle.js';
export { awsRetryQuota, type AwsRetryQuota, type AwsRetryQuotaOptions } from './aws-retry-quota.js';
export { keyedBudgets, type KeyedBudgets, type KeyedBudgetsOptions } from './keyed.js';
export { budgetFromSpec, BUDGET_KINDS } from './spec.js';
export {
  adaptiveThrottling,
  throttleFromSpec,
  isAcceptedVerdict,
  type AttemptThrottle,
  type AdaptiveThrottling,
  type AdaptiveThrottlingOptions,
  type ThrottleSpec,
} from './adaptive-throttling.js';
