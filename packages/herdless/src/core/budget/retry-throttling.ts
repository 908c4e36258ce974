import { numberOption, objectOption } from '../validate.js';
import { InvalidOptionError } from '../errors.js';
import type { BudgetSpec, RetryBudget } from './budget.js';
import { thousandths } from './thousandths.js';

/** Options of {@link retryThrottlingBudget}: gRFC A6's `retryThrottling` fields. */
export interface RetryThrottlingBudgetOptions {
  /**
   * The bucket size, and where it starts: retries stop once the tokens fall to `maxTokens / 2`.
   * Default 10 (gRFC A6's example). Range (0, 1000]; 3 decimal places are kept (truncated).
   */
  maxTokens?: number | undefined;
  /**
   * Tokens added by each success. Default 0.1 (gRFC A6's example). Range > 0, finite; 3 decimal
   * places are kept (truncated), so it must be at least 0.001.
   */
  tokenRatio?: number | undefined;
}

/**
 * The gRPC retry throttle. Its state is the token count, held internally in exact thousandths
 * (as gRPC's core does) so that a long run of `+0.1` never drifts.
 */
export interface RetryThrottlingBudget extends RetryBudget {
  readonly name: 'retry throttling';
  /** The normalised `maxTokens` (3 decimals kept). */
  readonly maxTokens: number;
  /** The normalised `tokenRatio` (3 decimals kept). */
  readonly tokenRatio: number;
  /** The tokens left now, in [0, maxTokens]; the lab charts it. */
  readonly tokens: number;
  /** The options, normalised, as data: `{ kind: 'retry throttling', maxTokens, tokenRatio }`. */
  toJSON(): BudgetSpec;
}

class RetryThrottling implements RetryThrottlingBudget {
  readonly name = 'retry throttling' as const;
  private milli: number;
  constructor(
    private readonly maxMilli: number,
    private readonly ratioMilli: number,
  ) {
    this.milli = maxMilli;
  }
  get maxTokens(): number {
    return this.maxMilli / 1000;
  }
  get tokenRatio(): number {
    return this.ratioMilli / 1000;
  }
  get tokens(): number {
    return this.milli / 1000;
  }
  onAttempt(): void {}
  onSuccess(): void {
    const t = this.milli + this.ratioMilli;
    // Stryker disable next-line EqualityOperator: at t === maxMilli both branches give maxMilli.
    this.milli = t < this.maxMilli ? t : this.maxMilli;
  }
  onFailure(): void {
    const t = this.milli - 1000;
    // Stryker disable next-line EqualityOperator: at t === 0 both branches give 0 (+0: a difference of equal numbers).
    this.milli = t > 0 ? t : 0;
  }
  allowRetry(): boolean {
    // gRFC A6: "retries are only allowed while token_count > max_tokens / 2" (exact in thousandths).
    return this.milli * 2 > this.maxMilli;
  }
  toJSON(): BudgetSpec {
    return { kind: 'retry throttling', maxTokens: this.maxTokens, tokenRatio: this.tokenRatio };
  }
}

/**
 * gRPC's client-side retry throttling (gRFC A6, `retryThrottling`): a token bucket shared by all
 * calls to one server. It starts full at `maxTokens`; each failure (a retryable status or server
 * pushback) takes 1 token (never below 0), each success adds `tokenRatio` (never above
 * `maxTokens`); a retry is allowed only while tokens > `maxTokens / 2`. First tries are never
 * limited — only retries.
 *
 * With the defaults (10, 0.1) a client stops retrying after at most 5 failures in a row, and needs
 * 10 successes per failure to stay level: retries resume once the failure rate drops below about
 * 1 in 11. In the article's 5–15 s outage this kept the load at 1.01× the new requests.
 *
 * The decision reads the tokens after this failure's decrement (`onFailure` comes first). The
 * budget ignores `now`, `onAttempt` and the optional arguments.
 *
 * @throws InvalidOptionError naming `maxTokens` or `tokenRatio` (as grpc-js does) for a value
 *   that is not a finite number, `maxTokens` outside (0, 1000], or a `tokenRatio` below 0.001.
 * @example
 * ```ts
 * const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
 * for (let i = 0; i < 4; i++) budget.onFailure(now);
 * budget.allowRetry(now); // true: 6 tokens > 5
 * budget.onFailure(now);
 * budget.allowRetry(now); // false: 5 tokens
 * ```
 */
export function retryThrottlingBudget(options?: RetryThrottlingBudgetOptions): RetryThrottlingBudget {
  const owner = 'retryThrottlingBudget';
  const o = objectOption(owner, 'options', options, ['maxTokens', 'tokenRatio']);
  const maxTokens = numberOption(owner, 'maxTokens', o.maxTokens, 10, { min: 0, minExclusive: true, max: 1000 });
  const tokenRatio = numberOption(owner, 'tokenRatio', o.tokenRatio, 0.1, { min: 0, minExclusive: true });
  const maxMilli = thousandths(maxTokens);
  const ratioMilli = thousandths(tokenRatio);
  if (maxMilli === 0) {
    throw new InvalidOptionError(owner, 'maxTokens', maxTokens, 'must be ≥ 0.001 (3 decimal places are kept)');
  }
  if (ratioMilli === 0) {
    throw new InvalidOptionError(owner, 'tokenRatio', tokenRatio, 'must be ≥ 0.001 (3 decimal places are kept)');
  }
  return new RetryThrottling(maxMilli, ratioMilli);
}
