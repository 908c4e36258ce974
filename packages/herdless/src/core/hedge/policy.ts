import type { RetryBudget } from '../budget/budget.js';
import type { RetryableOverride } from '../classify/classify.js';
import type { Verdict } from '../classify/verdict.js';
import { InvalidOptionError } from '../errors.js';
import type { RetryErrorReason } from '../retry/errors.js';
import { budgetOption, ignoreHintsOption, maxRetryAfterOption, retryableOption } from '../retry/policy.js';
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../retry/policy.js';
import { numberOption, unknownOption } from '../validate.js';
import { isLatencyPercentile, type LatencyPercentile } from './latency.js';

/** The most attempts a hedged call may make, the first included. gRFC A6 caps a service config's at 5; a library caller may ask for up to this. */
export const MAX_HEDGED_ATTEMPTS = 10;

/** The hedging options that shape what a hedged call does (the runtime adds its ports and hooks). */
export interface HedgePolicyOptions {
  /**
   * Attempts in all, the first included: `maxAttempts - 1` hedges at most (gRFC A6 `hedgingPolicy.maxAttempts`).
   * Default 2 (one hedge); an integer in [1, 10] (1 sends no hedge).
   */
  maxAttempts?: number | undefined;
  /**
   * How long to wait after sending an attempt before sending the next (gRFC A6 `hedgingDelay`), in
   * ms: a number (finite, ≥ 0; 0 sends all attempts at once), or a shared {@link LatencyPercentile}
   * that follows the latencies it observes. Required: no delay suits every service.
   */
  delayMs: number | LatencyPercentile;
  /**
   * Admits every hedge beyond the first attempt (gRFC A6: hedged attempts count against
   * `retryThrottling`): `allowRetry(now)` before each hedge, `onAttempt` on each send,
   * `onFailure` for each non-fatal failure, `onSuccess` for the winner. The same objects as
   * `retry()` takes. Default: none (every hedge is sent).
   */
  budget?: RetryBudget | undefined;
  /**
   * Which failures are non-fatal (start the next hedge at once, as A6's `nonFatalStatusCodes`):
   * `(error, { attempt, transient }) => boolean | undefined`, as `retry()`'s. Default: the transient
   * failures of `isTransientError`. A fatal failure ends the call and cancels the other attempts.
   */
  retryable?: RetryableOverride | undefined;
  /** Ignore servers' retry hints (`retryAfterMs`). Default false: a hinted failure delays the next hedge by the hint (A6 pushback). */
  ignoreHints?: boolean | undefined;
  /** The longest hint obeyed, in ms; a longer one stops hedging (reason `'hint-too-long'`). Default 60 000. */
  maxRetryAfterMs?: number | undefined;
}

/** The normalised hedging policy. */
export interface HedgePolicy {
  readonly maxAttempts: number;
  readonly delayMs: number | LatencyPercentile;
  readonly budget: RetryBudget | undefined;
  readonly retryable: RetryableOverride | undefined;
  readonly ignoreHints: boolean;
  readonly maxRetryAfterMs: number;
}

/** The option names of {@link HedgePolicyOptions}. @internal */
export const HEDGE_POLICY_KEYS: readonly string[] = ['maxAttempts', 'delayMs', 'budget', 'retryable', 'ignoreHints', 'maxRetryAfterMs'];

/** @internal Reads one policy option; false for a key that is no policy option. */
export function readHedgePolicyOption(owner: string, draft: { -readonly [K in keyof HedgePolicy]: HedgePolicy[K] }, key: string, value: unknown): boolean {
  switch (key) {
    case 'maxAttempts':
      draft.maxAttempts = numberOption(owner, key, value, 2, { min: 1, max: MAX_HEDGED_ATTEMPTS, integer: true });
      return true;
    case 'delayMs':
      draft.delayMs = delayOption(owner, value);
      return true;
    case 'budget':
      draft.budget = budgetOption(owner, value);
      return true;
    case 'retryable':
      draft.retryable = retryableOption(owner, value);
      return true;
    case 'ignoreHints':
      draft.ignoreHints = ignoreHintsOption(owner, value);
      return true;
    case 'maxRetryAfterMs':
      draft.maxRetryAfterMs = maxRetryAfterOption(owner, value);
      return true;
    default:
      return false;
  }
}

function delayOption(owner: string, value: unknown): number | LatencyPercentile {
  if (value === undefined) {
    throw new InvalidOptionError(owner, 'delayMs', value, 'is required: a delay in ms (e.g. the p95 latency), or a latencyPercentile()');
  }
  if (isLatencyPercentile(value)) return value;
  if (typeof value === 'object') throw new InvalidOptionError(owner, 'delayMs', value, 'must be a number of ms or a latencyPercentile()');
  return numberOption(owner, 'delayMs', value, 0, { min: 0 });
}

/** @internal A policy draft with the defaults (delayMs must still be given). */
export function defaultHedgePolicy(): { -readonly [K in keyof HedgePolicy]: HedgePolicy[K] } {
  return { maxAttempts: 2, delayMs: NaN, budget: undefined, retryable: undefined, ignoreHints: false, maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_MS };
}

/**
 * Reads and validates hedging options (what `hedge()` and `createHedger()` do with theirs).
 * @throws InvalidOptionError naming the field and the value.
 * @example
 * ```ts
 * parseHedgePolicy({ maxAttempts: 3, delayMs: 50 }).maxAttempts; // 3
 * ```
 */
export function parseHedgePolicy(options: HedgePolicyOptions, owner = 'hedge'): HedgePolicy {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const draft = defaultHedgePolicy();
  for (const key in options) {
    const value: unknown = (options as unknown as Record<string, unknown>)[key];
    if (!readHedgePolicyOption(owner, draft, key, value)) {
      throw new InvalidOptionError(owner, key, value, unknownOption('a hedging option', key, HEDGE_POLICY_KEYS));
    }
  }
  if (!('delayMs' in options)) delayOption(owner, undefined);
  return Object.freeze(draft);
}

/** The wait before the next hedge, in ms: the fixed delay, or the percentile's current value. */
export function hedgeDelay(policy: HedgePolicy): number {
  const d = policy.delayMs;
  return typeof d === 'number' ? d : d.delayMs();
}

/**
 * What a hedged call does after one attempt's failure (gRFC A6, "Hedging Policy"):
 * - `fatal`: end the call with this failure and cancel the other attempts;
 * - `stop`: send no more hedges (a "do not retry" mark, an open circuit, a hint over `maxRetryAfterMs`),
 *   let the attempts in flight finish, and give up with `reason` if none succeeds;
 * - `next`: send the next hedge after `delayMs` (0 for a plain non-fatal failure: at once; the
 *   server's hint when it gave one, A6's pushback).
 * `budgetFailure` says whether the failure counts against the budget (`onFailure`): every non-fatal
 * failure does, pushback included; a fatal one does not (as for retries).
 */
export type HedgeStep =
  | { readonly kind: 'fatal'; readonly budgetFailure: false }
  | { readonly kind: 'stop'; readonly reason: RetryErrorReason; readonly budgetFailure: boolean }
  | { readonly kind: 'next'; readonly delayMs: number; readonly budgetFailure: true };

/**
 * The step after a failed attempt, from its verdict (`classify(error, policy.retryable, attempt, !policy.ignoreHints)`).
 * @example
 * ```ts
 * hedgeAfterFailure(policy, { kind: 'retryable' }); // { kind: 'next', delayMs: 0, budgetFailure: true }
 * ```
 */
export function hedgeAfterFailure(policy: HedgePolicy, verdict: Verdict): HedgeStep {
  switch (verdict.kind) {
    case 'fatal':
      return { kind: 'fatal', budgetFailure: false };
    case 'do-not-retry':
      return { kind: 'stop', reason: 'do-not-retry', budgetFailure: false };
    case 'circuit-open':
      return { kind: 'stop', reason: 'circuit-open', budgetFailure: false };
    case 'retryable': {
      const hint = verdict.retryAfterMs;
      if (hint === undefined) return { kind: 'next', delayMs: 0, budgetFailure: true };
      if (hint > policy.maxRetryAfterMs) return { kind: 'stop', reason: 'hint-too-long', budgetFailure: true };
      return { kind: 'next', delayMs: hint, budgetFailure: true };
    }
  }
}
