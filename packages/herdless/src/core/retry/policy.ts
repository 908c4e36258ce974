import type { Backoff } from '../backoff/backoff.js';
import { MAX_DELAY_MS } from '../backoff/backoff.js';
import { defaultFullJitter } from '../backoff/exponential.js';
import type { RetryBudget } from '../budget/budget.js';
import type { RetryableOverride } from '../classify/classify.js';
import { InvalidOptionError } from '../errors.js';
import { numberOption } from '../validate.js';

/**
 * Default `maxAttempts`: 3 tries in all (the first included), as the SRE book's "Handling Overload"
 * example (at most 3 attempts per request).
 * @example
 * ```ts
 * parseRetryPolicy({}).maxAttempts === DEFAULT_MAX_ATTEMPTS; // true
 * ```
 */
export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * Default `maxRetryAfterMs`: 60 000 ms. Servers send `Retry-After` of a few seconds for a blip or a
 * rate limit; a request to wait more than a minute means "come back later", which one pending call
 * should not sit through — it ends with reason `'hint-too-long'` and the caller decides.
 * @example
 * ```ts
 * retry(op, { maxRetryAfterMs: 5 * DEFAULT_MAX_RETRY_AFTER_MS }); // honour hints up to 5 minutes
 * ```
 */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

/**
 * The default backoff: full jitter, `initialBackoffMs` 100, `backoffMultiplier` 2, `maxBackoffMs`
 * 10 000 — waits drawn from [0, 100), [0, 200), [0, 400) … [0, 10 000) ms. Full jitter did the
 * least work in the AWS "Exponential Backoff And Jitter" post (M. Brooker, 2015) and crashed the
 * article's herd lab the least; 100 ms is long enough to clear a blip and short enough for a
 * foreground call; the 10 s cap bounds a single wait as the SRE book's "Handling Overload" advises
 * (a caller waiting longer is better served by failing).
 * @example
 * ```ts
 * DEFAULT_BACKOFF.toJSON(); // { kind: 'full jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 10000 }
 * ```
 */
export const DEFAULT_BACKOFF: Backoff = /* @__PURE__ */ defaultFullJitter(100);

/**
 * The default `throttlingBackoff`: full jitter from 500 ms, doubling to a 10 s cap — the wait after a
 * throttling answer without a hint (HTTP 429, gRPC RESOURCE_EXHAUSTED). A server that throttles is
 * asking for less traffic; the AWS SDKs' standard retry mode uses the same 500 ms base for throttling
 * errors against 100 ms for other transient ones, so a throttled client backs off five times as far.
 * @example
 * ```ts
 * DEFAULT_THROTTLING_BACKOFF.toJSON(); // { kind: 'full jitter', initialBackoffMs: 500, backoffMultiplier: 2, maxBackoffMs: 10000 }
 * ```
 */
export const DEFAULT_THROTTLING_BACKOFF: Backoff = /* @__PURE__ */ defaultFullJitter(500);

/**
 * The options of a retry policy that the pure core reads (the runtime adds timers, signal and hooks).
 * @example
 * ```ts
 * const options: RetryPolicyOptions = { maxAttempts: 4, backoff: fullJitterBackoff(), deadlineMs: 10_000 };
 * ```
 */
export interface RetryPolicyOptions {
  /**
   * Attempts in all, **the first try included** (gRPC / AWS SDK / resilience4j meaning):
   * `maxAttempts: 1` never retries. Default 3. An integer ≥ 1.
   */
  maxAttempts?: number | undefined;
  /** How long to wait before each retry. Default {@link DEFAULT_BACKOFF} (full jitter, 100 ms × 2^n, cap 10 s). */
  backoff?: Backoff | undefined;
  /**
   * How long to wait after a throttling answer that carries no hint (HTTP 429, gRPC
   * RESOURCE_EXHAUSTED), instead of `backoff`. Default: {@link DEFAULT_THROTTLING_BACKOFF} (full
   * jitter, 500 ms × 2^n, cap 10 s — the AWS SDKs' throttling base, five times the default
   * backoff's) when `backoff` is left at its default; when you set `backoff`, that backoff (your
   * choice of waits is kept) unless you set this too.
   */
  throttlingBackoff?: Backoff | undefined;
  /**
   * `true` ignores every server hint (`retryAfterMs`: HTTP `Retry-After` / `retry-after-ms`, gRPC
   * pushback) and waits the backoff instead — for a server or proxy that sends absurd values. A
   * malformed hint then ends nothing either. The "do not retry" mark still applies. Default `false`:
   * a hint is honoured, up to `maxRetryAfterMs`.
   */
  ignoreHints?: boolean | undefined;
  /** The one override of the default classification; see {@link RetryableOverride}. Default: none. */
  retryable?: RetryableOverride | undefined;
  /**
   * The longest server hint (`retryAfterMs`) the call will honour, in ms. A longer hint ends the call
   * at once with reason `'hint-too-long'` — never a shorter wait. Default 60 000. Range [0, 2^31 − 1].
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * The whole call's time limit in ms — every attempt and every wait. The running attempt's signal
   * aborts at the deadline; a wait that would end at or after it is not started. Default: none.
   * Range (0, 2^31 − 1], or `Infinity` for none.
   */
  deadlineMs?: number | undefined;
  /**
   * Each attempt's time limit in ms: the attempt's `signal` aborts and the attempt fails with a
   * (retryable) `AttemptTimeoutError`. Default: none. Range (0, 2^31 − 1], or `Infinity` for none.
   */
  attemptTimeoutMs?: number | undefined;
  /** A retry budget shared by many calls (see `RetryBudget`); a refusal ends the call with reason `'budget'`. Default: none. */
  budget?: RetryBudget | undefined;
}

/**
 * A normalised, frozen retry policy: configuration only, safe to share between calls, drivable in
 * real time (`retry()`) and virtual time (the lab). `deadlineMs` and `attemptTimeoutMs` are
 * `Infinity` when unset.
 *
 * @example
 * ```ts
 * const policy: RetryPolicy = parseRetryPolicy({ maxAttempts: 4 });
 * ```
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (an integer ≥ 1). */
  readonly maxAttempts: number;
  /** The backoff that computes each wait. */
  readonly backoff: Backoff;
  /** The backoff of a throttling failure without a hint. */
  readonly throttlingBackoff: Backoff;
  /** Server hints are ignored: the backoff always decides. */
  readonly ignoreHints: boolean;
  /** The classification override, if any. */
  readonly retryable: RetryableOverride | undefined;
  /** The longest honoured server hint, in ms. */
  readonly maxRetryAfterMs: number;
  /** The whole call's limit in ms; `Infinity` for none. */
  readonly deadlineMs: number;
  /** Each attempt's limit in ms; `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  /** The shared retry budget, if any. */
  readonly budget: RetryBudget | undefined;
}

const LIMIT_RULE = { min: 0, minExclusive: true, max: MAX_DELAY_MS };
const MAX_ATTEMPTS_RULE = { min: 1, integer: true };
const HINT_RULE = { min: 0, max: MAX_DELAY_MS };

function limitOption(owner: string, field: string, value: unknown): number {
  // The common case first, without a call: a number in (0, 2^31 − 1]; numberOption words the error.
  // Stryker disable next-line ConditionalExpression,StringLiteral,EqualityOperator: a fast path: numberOption below returns the same value for every valid one.
  if (typeof value === 'number' && value > 0 && value <= MAX_DELAY_MS) return value;
  // Stryker disable next-line ConditionalExpression: for undefined, numberOption below returns its fallback, the same Infinity (Infinity itself is killed: numberOption refuses it).
  if (value === undefined || value === Infinity) return Infinity;
  return numberOption(owner, field, value, Infinity, LIMIT_RULE);
}

function isFunction(value: unknown): boolean {
  return typeof value === 'function';
}

/** @internal A retry policy being read: the defaults, then each option given, in place. */
export type PolicyDraft = { -readonly [K in keyof RetryPolicy]: RetryPolicy[K] };

// One reader per option, shared by parseRetryPolicy and the runtime's own one-pass reading of a
// call's options (retry.ts), so that the rules exist once. Each takes the given value (undefined:
// the default) and returns the normalised one, or throws an InvalidOptionError naming the field.

/** @internal */
export function maxAttemptsOption(owner: string, value: unknown): number {
  // Stryker disable next-line ConditionalExpression,StringLiteral,EqualityOperator: a fast path: numberOption below returns the same value for every valid one (Number.isInteger is false for any non-number).
  if (typeof value === 'number' && value >= 1 && Number.isInteger(value)) return value;
  return numberOption(owner, 'maxAttempts', value, DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_RULE);
}

/** @internal */
export function backoffOption(owner: string, value: unknown, field = 'backoff'): Backoff {
  if (value === undefined) return DEFAULT_BACKOFF;
  if (typeof value !== 'object' || value === null || !isFunction((value as Backoff).delay)) {
    throw new InvalidOptionError(owner, field, value, 'must be a Backoff (e.g. fullJitterBackoff())');
  }
  return value as Backoff;
}

/** @internal */
export function throttlingBackoffOption(owner: string, value: unknown): Backoff {
  return value === undefined ? DEFAULT_THROTTLING_BACKOFF : backoffOption(owner, value, 'throttlingBackoff');
}

/**
 * @internal The throttling backoff a policy ends up with: the one given; else, when `backoff` was
 * given, that same backoff (the caller chose the waits); else {@link DEFAULT_THROTTLING_BACKOFF}.
 */
export function throttlingDefault(draft: PolicyDraft, given: unknown): Backoff {
  return given === undefined && draft.backoff !== DEFAULT_BACKOFF ? draft.backoff : draft.throttlingBackoff;
}

/** @internal */
export function ignoreHintsOption(owner: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new InvalidOptionError(owner, 'ignoreHints', value, 'must be a boolean');
  return value === true;
}

/** @internal */
export function retryableOption(owner: string, value: unknown): RetryableOverride | undefined {
  if (value !== undefined && !isFunction(value)) {
    throw new InvalidOptionError(owner, 'retryable', value, 'must be a function (error, { attempt, transient }) => boolean | undefined');
  }
  return value as RetryableOverride | undefined;
}

/** @internal */
export function maxRetryAfterOption(owner: string, value: unknown): number {
  // Stryker disable next-line ConditionalExpression,StringLiteral,EqualityOperator: a fast path: numberOption below returns the same value for every valid one.
  if (typeof value === 'number' && value >= 0 && value <= MAX_DELAY_MS) return value;
  return numberOption(owner, 'maxRetryAfterMs', value, DEFAULT_MAX_RETRY_AFTER_MS, HINT_RULE);
}

/** @internal `deadlineMs` and `attemptTimeoutMs`. */
export { limitOption };

/** @internal */
export function budgetOption(owner: string, value: unknown): RetryBudget | undefined {
  if (value !== undefined && !isBudget(value)) {
    throw new InvalidOptionError(owner, 'budget', value, 'must be a RetryBudget (onAttempt, onSuccess, onFailure, allowRetry)');
  }
  return value as RetryBudget | undefined;
}

/** Each policy option's reader, by name. */
const POLICY_READERS: { readonly [K in keyof PolicyDraft]: (owner: string, value: unknown) => PolicyDraft[K] } = {
  maxAttempts: maxAttemptsOption,
  backoff: (owner, value) => backoffOption(owner, value),
  throttlingBackoff: throttlingBackoffOption,
  ignoreHints: ignoreHintsOption,
  retryable: retryableOption,
  maxRetryAfterMs: maxRetryAfterOption,
  deadlineMs: (owner, value) => limitOption(owner, 'deadlineMs', value),
  attemptTimeoutMs: (owner, value) => limitOption(owner, 'attemptTimeoutMs', value),
  budget: budgetOption,
};

/** Reads one policy option into `draft`; a key that is not a policy option is left to the caller. */
function readPolicyOption(owner: string, draft: PolicyDraft, key: string, value: unknown): void {
  if (!Object.prototype.hasOwnProperty.call(POLICY_READERS, key)) return;
  const read = POLICY_READERS[key as keyof PolicyDraft] as (owner: string, value: unknown) => unknown;
  (draft as Record<string, unknown>)[key] = read(owner, value);
}

function isBudget(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const b = value as RetryBudget;
  return (
    isFunction(b.onAttempt) &&
    isFunction(b.onSuccess) &&
    isFunction(b.onFailure) &&
    isFunction(b.allowRetry) &&
    (b.confirmRetry === undefined || isFunction(b.confirmRetry))
  );
}

/**
 * Validates and normalises the core retry options once, into a frozen {@link RetryPolicy}.
 * Fields it does not know are left to the caller (the runtime checks the full option set).
 *
 * @param options the options; `undefined` gives the defaults.
 * @param owner the name used in error messages (`retry`, `createRetry`, …).
 * @throws InvalidOptionError naming the field and the value: `maxAttempts` not an integer ≥ 1;
 *   `backoff` / `throttlingBackoff` without a `delay` function; `ignoreHints` not a boolean; `retryable` not a function; `maxRetryAfterMs` outside
 *   [0, 2^31 − 1]; `deadlineMs` / `attemptTimeoutMs` not in (0, 2^31 − 1] or `Infinity`; `budget`
 *   missing one of `onAttempt`, `onSuccess`, `onFailure`, `allowRetry`.
 * @example
 * ```ts
 * const policy = parseRetryPolicy({ maxAttempts: 4, deadlineMs: 5000 });
 * policy.attemptTimeoutMs; // Infinity
 * ```
 */
export function parseRetryPolicy(options: RetryPolicyOptions | undefined, owner = 'retry'): RetryPolicy {
  if (options === undefined) return DEFAULT_POLICY;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const draft = defaultPolicyDraft();
  for (const key in options) readPolicyOption(owner, draft, key, (options as Record<string, unknown>)[key]);
  draft.throttlingBackoff = throttlingDefault(draft, options.throttlingBackoff);
  return Object.freeze(draft);
}

/** @internal The defaults, as a draft to read options into. */
export function defaultPolicyDraft(): PolicyDraft {
  return {
    maxAttempts: DEFAULT_MAX_ATTEMPTS,
    backoff: DEFAULT_BACKOFF,
    throttlingBackoff: DEFAULT_THROTTLING_BACKOFF,
    ignoreHints: false,
    retryable: undefined,
    maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_MS,
    deadlineMs: Infinity,
    attemptTimeoutMs: Infinity,
    budget: undefined,
  };
}

const DEFAULT_POLICY: RetryPolicy = /* @__PURE__ */ Object.freeze(/* @__PURE__ */ defaultPolicyDraft());
