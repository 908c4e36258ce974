import { fromSpec } from '../spec.js';
import { awsRetryQuota } from './aws-retry-quota.js';
import type { RetryBudget } from './budget.js';
import { finagleRetryBudget } from './finagle.js';
import { retryRatioBudget } from './retry-ratio.js';
import { retryThrottlingBudget } from './retry-throttling.js';

/** The `kind` names a `BudgetSpec` may use. */
export const BUDGET_KINDS = ['retry throttling', 'retry ratio', 'finagle', 'aws retry quota'] as const;

const FIELDS: Record<(typeof BUDGET_KINDS)[number], readonly string[]> = {
  'retry throttling': ['maxTokens', 'tokenRatio'],
  'retry ratio': ['ratio', 'minRetriesPerWindow', 'windowMs', 'buckets', 'countAt'],
  finagle: ['ttlMs', 'minRetriesPerSec', 'percentCanRetry'],
  'aws retry quota': ['capacity', 'retryCost', 'timeoutCost', 'successIncrement'],
};

/**
 * Builds a new budget from data — a lab config file, the lab page's form, a JSON setting, or the
 * `toJSON()` of another budget. The spec is `{ kind, ...options }` with the options of the
 * matching factory (`retryThrottlingBudget`, `retryRatioBudget`, `finagleRetryBudget`,
 * `awsRetryQuota`); omitted fields take the factory's defaults. Unknown kinds and unknown fields
 * are rejected, so a typo never falls back silently to a default. Each call makes a fresh budget
 * (budgets hold state): call it once per client, or pass it to `keyedBudgets`.
 *
 * @param spec the parsed JSON value.
 * @param path where the spec sits, for error messages (e.g. `policy.budget`).
 * @throws InvalidOptionError naming the field (prefixed with `path`) and the value.
 * @example
 * ```ts
 * const budget = budgetFromSpec({ kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 });
 * ```
 */
export function budgetFromSpec(spec: unknown, path = 'budget'): RetryBudget {
  return fromSpec('budgetFromSpec', spec, path, FIELDS, (kind, options) => {
    switch (kind) {
      case 'retry throttling':
        return retryThrottlingBudget(options);
      case 'retry ratio':
        return retryRatioBudget(options);
      case 'finagle':
        return finagleRetryBudget(options);
      case 'aws retry quota':
        return awsRetryQuota(options);
    }
  });
}
