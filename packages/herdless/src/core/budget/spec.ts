import { InvalidOptionError } from '../errors.js';
import { awsRetryQuota } from './aws-retry-quota.js';
import type { RetryBudget } from './budget.js';
import { finagleRetryBudget } from './finagle.js';
import { retryRatioBudget } from './retry-ratio.js';
import { retryThrottlingBudget } from './retry-throttling.js';

/** The `kind` names a {@link BudgetSpec} may use. */
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
  const owner = 'budgetFromSpec';
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InvalidOptionError(owner, path, spec, 'must be an object with a "kind"');
  }
  const record = spec as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== 'string' || !(BUDGET_KINDS as readonly string[]).includes(kind)) {
    throw new InvalidOptionError(owner, `${path}.kind`, kind, `must be one of ${BUDGET_KINDS.map((k) => `"${k}"`).join(', ')}`);
  }
  const k = kind as (typeof BUDGET_KINDS)[number];
  for (const key of Object.keys(record)) {
    if (key !== 'kind' && !FIELDS[k].includes(key)) {
      throw new InvalidOptionError(owner, `${path}.${key}`, record[key], `is not an option of "${k}" (allowed: ${FIELDS[k].join(', ')})`);
    }
  }
  try {
    const { kind: _kind, ...rest } = record;
    const options = rest as never;
    switch (k) {
      case 'retry throttling':
        return retryThrottlingBudget(options);
      case 'retry ratio':
        return retryRatioBudget(options);
      case 'finagle':
        return finagleRetryBudget(options);
      case 'aws retry quota':
        return awsRetryQuota(options);
    }
  } catch (error) {
    // Re-issue with the spec's path, so a config file's error names the field where it stands.
    if (error instanceof InvalidOptionError) {
      throw new InvalidOptionError(owner, `${path}.${error.field}`, error.value, error.requirement);
    }
    throw error;
  }
}
