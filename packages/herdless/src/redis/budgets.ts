import { retryRatioBudget, type RetryRatioBudget } from '../core/budget/retry-ratio.js';
import { retryThrottlingBudget, type RetryThrottlingBudget } from '../core/budget/retry-throttling.js';
import { InvalidOptionError } from '../core/errors.js';
import { numberOption, objectOption } from '../core/validate.js';
import { COMMON_FIELDS, commonSettings, type CommonSettings, type RedisBudgetCommonOptions } from './options.js';
import { RATIO_SCRIPT, THROTTLING_SCRIPT } from './scripts.js';
import { SharedBudget } from './shared-budget.js';

/** Options of {@link redisRetryThrottlingBudget}: the common ones and gRFC A6's `retryThrottling` fields. */
export interface RedisRetryThrottlingOptions extends RedisBudgetCommonOptions {
  /** As `retryThrottlingBudget`'s: the bucket size, where it starts. Default 10. Range (0, 1000], 3 decimals kept. */
  maxTokens?: number | undefined;
  /** As `retryThrottlingBudget`'s: tokens added by each success. Default 0.1. Range ≥ 0.001, 3 decimals kept. */
  tokenRatio?: number | undefined;
}

/** Options of {@link redisRetryRatioBudget}: the common ones and the retry ratio's (counted at decision). */
export interface RedisRetryRatioOptions extends RedisBudgetCommonOptions {
  /** As `retryRatioBudget`'s: retries allowed per request over the window. Default 0.1. Range [0, 1]. */
  ratio?: number | undefined;
  /** As `retryRatioBudget`'s: retries allowed per window whatever the traffic. Default 1. Range ≥ 0. */
  minRetriesPerWindow?: number | undefined;
  /** As `retryRatioBudget`'s: the window, in ms. Default 1000. Range [10, 3 600 000]. */
  windowMs?: number | undefined;
  /** As `retryRatioBudget`'s: buckets in the window. Default 10. Integer in [1, 100] (each is 3 hash fields). */
  buckets?: number | undefined;
}

/** A gRFC A6 token bucket shared by every process that names the same server, kept in Redis. */
export interface RedisRetryThrottlingBudget extends SharedBudget<RetryThrottlingBudget> {
  readonly name: 'retry throttling (redis)';
}

/** An SRE retry ratio shared by every process that names the same server, kept in Redis. */
export interface RedisRetryRatioBudget extends SharedBudget<RetryRatioBudget> {
  readonly name: 'retry ratio (redis)';
}

class Throttling extends SharedBudget<RetryThrottlingBudget> implements RedisRetryThrottlingBudget {
  readonly name = 'retry throttling (redis)' as const;
  private successes = 0;
  private failures = 0;
  private failureQueued = false;
  private readonly fixed: string[];
  constructor(settings: CommonSettings, local: RetryThrottlingBudget) {
    super(settings, THROTTLING_SCRIPT, local);
    // In thousandths, as the local bucket holds them (its options are already truncated to 3 decimals).
    this.fixed = [String(Math.round(local.maxTokens * 1000)), String(Math.round(local.tokenRatio * 1000))];
  }
  onAttempt(): void {}
  onSuccess(now: number): void {
    this.local.onSuccess(now);
    if (this.mode !== 'shared') return;
    this.successes++;
    this.scheduleFlush();
  }
  onFailure(now: number): void {
    this.local.onFailure(now);
    if (this.mode !== 'shared') return;
    this.failures++;
    // Stryker disable next-line ConditionalExpression: only saves microtasks: a second one finds the failures sent by the first
    if (this.failureQueued) return;
    // Stryker disable next-line BooleanLiteral: as above, one microtask per failure sends the same batch once
    this.failureQueued = true;
    // A failure must never lag (a lagging one would leave the shared bucket laxer than one bucket):
    // a retry decision, which comes synchronously after it, takes it along; if none came, it is sent
    // alone right away — a round trip no call waits for.
    queueMicrotask(() => {
      this.failureQueued = false;
      if (this.failures > 0) void this.flush();
    });
  }
  protected hasBatch(): boolean {
    return this.successes > 0 || this.failures > 0;
  }
  protected batchArgs(decide: boolean): (string | number)[] {
    const args = [this.fixed[0]!, this.fixed[1]!, this.successes, this.failures, decide ? 1 : 0, this.settings.keyTtlMs];
    this.successes = 0;
    this.failures = 0;
    return args;
  }
  protected dropBatch(): void {
    this.successes = 0;
    this.failures = 0;
  }
}

class Ratio extends SharedBudget<RetryRatioBudget> implements RedisRetryRatioBudget {
  readonly name = 'retry ratio (redis)' as const;
  private requests = 0;
  private readonly fixed: (string | number)[];
  constructor(settings: CommonSettings, local: RetryRatioBudget) {
    super(settings, RATIO_SCRIPT, local);
    this.fixed = [String(local.ratio), String(local.minRetriesPerWindow), local.windowMs / local.buckets, local.buckets];
  }
  onAttempt(now: number, isRetry: boolean): void {
    this.local.onAttempt(now, isRetry);
    // Retries are counted where they are granted (in the script), like the local ratio's default.
    if (isRetry || this.mode !== 'shared') return;
    this.requests++;
    this.scheduleFlush();
  }
  onSuccess(): void {}
  onFailure(): void {}
  protected hasBatch(): boolean {
    return this.requests > 0;
  }
  protected batchArgs(decide: boolean): (string | number)[] {
    const args = [...this.fixed, this.requests, decide ? 1 : 0, this.settings.keyTtlMs];
    this.requests = 0;
    return args;
  }
  protected dropBatch(): void {
    this.requests = 0;
  }
}

/** Builds the local budget, its option errors named after the shared budget's factory (the one the user called). */
function renamed<B>(owner: string, make: () => B): B {
  try {
    return make();
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: the local budgets' factories throw nothing but InvalidOptionError
    if (error instanceof InvalidOptionError) throw new InvalidOptionError(owner, error.field, error.value, error.requirement);
    throw error;
  }
}

const THROTTLING_FIELDS = [...COMMON_FIELDS, 'maxTokens', 'tokenRatio'];
const RATIO_FIELDS = [...COMMON_FIELDS, 'ratio', 'minRetriesPerWindow', 'windowMs', 'buckets'];

/**
 * gRPC's retry throttling (gRFC A6, `retryThrottling`) with its token bucket in Redis, shared by
 * every process that uses the same Redis, key prefix and `server` — a fleet of short-lived or
 * lightly loaded processes gets the one budget a single long-lived client would have, instead of
 * a full bucket per process. The rule is A6's: a failure takes 1 token, a success adds
 * `tokenRatio`, a retry is allowed while tokens > `maxTokens / 2`.
 *
 * Guarantees:
 * - **Atomic**: a retry decision is one Lua script (the pending batch, this failure, the check);
 *   concurrent processes never overdraw — the retries granted are exactly those one A6 bucket
 *   grants for the sequence of batches Redis received.
 * - **Success path without Redis**: successes are counted locally and sent in one batch at most
 *   `flushIntervalMs` after the first (default 100 ms): the shared tokens lag by that much, which
 *   only makes the bucket stricter. Failures never lag: each goes with its retry decision, or, when
 *   no decision follows (the last attempt), alone at once in a round trip that no call waits for.
 * - **Bounded wait**: a decision waits at most `timeoutMs` (default 100 ms) for Redis — for Redis:
 *   a reply that arrived while this process was busy counts as on time.
 * - **Fails safe, not open**: when Redis times out or fails, the budget decides with a per-process
 *   A6 bucket of the same size (which has seen all of this process's traffic), calls
 *   `onFallback`, tries Redis again every `recoverIntervalMs`, and resumes sharing by itself
 *   (`onRecover`). The batch in flight when Redis failed is dropped. No call fails because Redis did.
 *
 * A decision asks the per-process bucket first (`allowRetry`), then Redis (`confirmRetry`): a retry
 * needs both, so the shared budget is never laxer than gRPC's own per-process throttling.
 * `retry()`, `createRetry()` and `herdless/http`'s fetch await `confirmRetry`; a driver that only
 * calls `allowRetry` gets the per-process limit alone. Call `close()`
 * (or `flush()`) before a short-lived process exits, so that its last batch is counted.
 *
 * @throws InvalidOptionError naming the field: no Redis client, an empty `server`, an option out
 *   of range (see {@link RedisRetryThrottlingOptions}), an unknown option.
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { retry } from 'herdless';
 * import { redisRetryThrottlingBudget } from 'herdless/redis';
 *
 * const client = new Redis({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const budget = redisRetryThrottlingBudget({ client, server: 'api.example.com', maxTokens: 10, tokenRatio: 0.1 });
 * await retry(() => callApi(), { budget });
 * await budget.close(); // before the process exits
 * ```
 */
export function redisRetryThrottlingBudget(options: RedisRetryThrottlingOptions): RedisRetryThrottlingBudget {
  const owner = 'redisRetryThrottlingBudget';
  const o = objectOption(owner, 'options', options, THROTTLING_FIELDS);
  const local = renamed(owner, () => retryThrottlingBudget({ maxTokens: o.maxTokens, tokenRatio: o.tokenRatio }));
  return new Throttling(commonSettings(owner, o, 'retry-throttling', 0), local);
}

/**
 * The SRE book's retry ratio ("Handling Overload": retry only while retries are under 10% of
 * requests) over a sliding window kept in Redis, shared by every process naming the same
 * `server`. Same rule as `retryRatioBudget` with `countAt: 'decision'`: a retry is granted iff,
 * counting it, retries ≤ `ratio` × requests + `minRetriesPerWindow` over the window. The window
 * runs on the Redis server's clock, so the processes' clocks need not agree.
 *
 * Guarantees as for {@link redisRetryThrottlingBudget}: one atomic script per decision, first tries
 * counted locally and sent at most `flushIntervalMs` late (a request is then counted in the bucket
 * of its batch's arrival: it enters the window, and leaves it, up to that much later — in the lab's
 * fleet, 1.115× instead of 1.114×), `timeoutMs` bound, a per-process ratio budget when Redis fails,
 * recovery by itself.
 *
 * @throws InvalidOptionError naming the field (see {@link RedisRetryRatioOptions}).
 * @example
 * ```ts
 * const budget = redisRetryRatioBudget({ client, server: 'api.example.com', ratio: 0.1 });
 * await retry(() => callApi(), { budget });
 * ```
 */
export function redisRetryRatioBudget(options: RedisRetryRatioOptions): RedisRetryRatioBudget {
  const owner = 'redisRetryRatioBudget';
  const o = objectOption(owner, 'options', options, RATIO_FIELDS);
  const windowMs = numberOption(owner, 'windowMs', o.windowMs, 1000, { min: 10, max: 3_600_000 });
  // Stryker disable next-line BooleanLiteral: retryRatioBudget refuses a fractional bucket count too, with the same field and words
  const buckets = numberOption(owner, 'buckets', o.buckets, 10, { min: 1, max: 100, integer: true });
  const local = renamed(owner, () => retryRatioBudget({ ratio: o.ratio, minRetriesPerWindow: o.minRetriesPerWindow, windowMs, buckets }));
  return new Ratio(commonSettings(owner, o, 'retry-ratio', windowMs), local);
}
