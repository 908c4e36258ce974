import { numberOption, objectOption } from '../validate.js';
import type { BudgetSpec, RetryBudget } from './budget.js';

/** Options of {@link awsRetryQuota}: the AWS SDKs' "standard" retry mode quota. */
export interface AwsRetryQuotaOptions {
  /** The quota's size, and where it starts. Default 500. Range ≥ 0, finite. */
  capacity?: number | undefined;
  /** Taken by a retry after an ordinary failure. Default 5. Range ≥ 0, finite. */
  retryCost?: number | undefined;
  /** Taken by a retry after a timeout (`onFailure(now, true)`). Default 10. Range ≥ 0, finite. */
  timeoutCost?: number | undefined;
  /** Added by a success on the first try. Default 1. Range ≥ 0, finite. */
  successIncrement?: number | undefined;
}

/** The AWS SDK retry quota, with the capacity left readable. */
export interface AwsRetryQuota extends RetryBudget {
  readonly name: 'aws retry quota';
  /** The normalised options: see {@link AwsRetryQuotaOptions}. */
  readonly capacity: number;
  /** Cost of a retry after an ordinary failure. */
  readonly retryCost: number;
  /** Cost of a retry after a timeout. */
  readonly timeoutCost: number;
  /** Added by a first-try success. */
  readonly successIncrement: number;
  /** The capacity left now, in [0, capacity]. */
  readonly available: number;
  /** The options, normalised, as data (`kind: 'aws retry quota'`). */
  toJSON(): BudgetSpec;
}

class AwsQuota implements AwsRetryQuota {
  readonly name = 'aws retry quota' as const;
  available: number;
  private lastWasTimeout = false;
  constructor(
    readonly capacity: number,
    readonly retryCost: number,
    readonly timeoutCost: number,
    readonly successIncrement: number,
  ) {
    this.available = capacity;
  }
  onAttempt(): void {}
  onSuccess(_now: number, isRetry?: boolean): void {
    const a = this.available + (isRetry === true ? this.retryCost : this.successIncrement);
    // Stryker disable next-line EqualityOperator: at a === capacity both branches give capacity.
    this.available = a < this.capacity ? a : this.capacity;
  }
  onFailure(_now: number, isTimeout?: boolean): void {
    this.lastWasTimeout = isTimeout === true;
  }
  allowRetry(): boolean {
    const cost = this.lastWasTimeout ? this.timeoutCost : this.retryCost;
    if (this.available < cost) return false;
    this.available -= cost;
    return true;
  }
  toJSON(): BudgetSpec {
    return {
      kind: 'aws retry quota',
      capacity: this.capacity,
      retryCost: this.retryCost,
      timeoutCost: this.timeoutCost,
      successIncrement: this.successIncrement,
    };
  }
}

/**
 * The AWS SDKs' retry quota ("standard" retry mode, AWS SDKs and Tools Reference Guide, "Retry
 * behavior"; the token bucket the Amazon Builders' Library article "Timeouts, retries, and backoff
 * with jitter" describes): a client-wide quota that starts at `capacity`. A retry takes
 * `retryCost` (`timeoutCost` if the failure it follows timed out) and is refused when the quota
 * has less than that; a success on the first try adds `successIncrement`, a successful retry gives
 * back `retryCost`; the quota never exceeds `capacity`. With the defaults, 100 retries in a row
 * (50 after timeouts) empty it. Time plays no part.
 *
 * It reads the optional arguments of the protocol: `onFailure(now, isTimeout)` just before
 * `allowRetry` picks the cost, `onSuccess(now, isRetry)` picks the refund. The SDKs refund what
 * that retry cost; a shared budget cannot tell which call a success belongs to, so herdless
 * refunds `retryCost` — after a timeout retry that is 5 where the SDK gives back 10 (the quota
 * refills more slowly, never faster).
 *
 * @throws InvalidOptionError naming the field for a negative or non-finite value.
 * @example
 * ```ts
 * const quota = awsRetryQuota(); // 500, 5 per retry, 10 per timeout retry, +1 per success
 * quota.onFailure(now, true);
 * quota.allowRetry(now); // true; quota.available is 490
 * ```
 */
export function awsRetryQuota(options?: AwsRetryQuotaOptions): AwsRetryQuota {
  const owner = 'awsRetryQuota';
  const o = objectOption(owner, 'options', options, ['capacity', 'retryCost', 'timeoutCost', 'successIncrement']);
  const rule = { min: 0 };
  return new AwsQuota(
    numberOption(owner, 'capacity', o.capacity, 500, rule),
    numberOption(owner, 'retryCost', o.retryCost, 5, rule),
    numberOption(owner, 'timeoutCost', o.timeoutCost, 10, rule),
    numberOption(owner, 'successIncrement', o.successIncrement, 1, rule),
  );
}
