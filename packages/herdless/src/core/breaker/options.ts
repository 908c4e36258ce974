import type { Backoff } from '../backoff/backoff.js';
import { MAX_DELAY_MS } from '../backoff/backoff.js';
import { InvalidOptionError } from '../errors.js';
import type { Rng } from '../rng.js';
import { numberOption, objectOption } from '../validate.js';
import { consecutiveFailures } from './consecutive-failures.js';
import type { CountingStrategy } from './counting.js';
import type { BreakerEvent } from './events.js';

/** Options of the breaker's state machine (`circuitBreakerMachine`, in `herdless/sim`); `circuitBreaker()` takes them too. */
export interface BreakerPolicyOptions {
  /**
   * What opens a closed breaker. Default `consecutiveFailures({ threshold: 5 })`. See also
   * `failureRatio()`.
   */
  counting?: CountingStrategy | undefined;
  /**
   * How long the breaker stays open before it admits a trial call, in ms: a number in
   * [0, 2^31 − 1], or a {@link Backoff} whose `delay(n, previous, random)` gives the nth opening since
   * the breaker last closed (n = 1, 2, …; `previous` is the last open duration, 0 at first). A
   * failed trial reopens with the next n; closing resets n. Default 5 000.
   */
  openDurationMs?: number | Backoff | undefined;
  /**
   * How many trial calls the half-open breaker admits at once; others are refused. Default 1, or
   * `halfOpenSampling.calls` when that is given. An integer ≥ 1 (≤ `halfOpenSampling.calls`).
   */
  halfOpenMaxCalls?: number | undefined;
  /**
   * Judge the half-open period by a sample of trial calls rather than by the first failure:
   * among `calls` trials, the breaker reopens as soon as the failures reach `ratio` of `calls`,
   * and closes as soon as enough have succeeded that they no longer can. Both are decided as
   * early as the outcomes allow, so at most `calls` trial outcomes are ever needed. With
   * `{ calls: 10, ratio: 0.5 }`: 5 failed trials reopen it, 6 successful ones close it. The same
   * rule as cockatiel's `halfOpenSampling` (cockatiel counts the failures allowed, herdless the
   * share that reopens, as `failureRatio()` does for the closed state). Cannot be given with
   * `successThreshold`. Default: none — the first failed trial reopens, `successThreshold`
   * successes close. `calls`: an integer ≥ 1; `ratio`: in (0, 1].
   */
  halfOpenSampling?: HalfOpenSampling | undefined;
  /**
   * Successful trial calls needed, in one half-open period, to close the breaker; the first failed
   * trial reopens it. Default `halfOpenMaxCalls`. A finished trial frees its slot for the next caller, so the successes may
   * come from more calls than `halfOpenMaxCalls`; the breaker can close while a trial is still running.
   * An integer ≥ 1; it may exceed `halfOpenMaxCalls` (trials then run in turns). Not with
   * `halfOpenSampling`, whose sample decides.
   */
  successThreshold?: number | undefined;
  /**
   * How long a half-open trial call may run, in ms. A trial that has not settled by then (a hung
   * call, with no signal to end it) is expired: its slot is freed and it counts as a failed trial —
   * the breaker reopens as of that moment, and the trial's late outcome is ignored. Without this,
   * one trial that never settles would keep the breaker refusing every call for good. Checked
   * lazily, when the breaker is next asked (nothing is scheduled). Default 60 000 (a minute). Range
   * (0, 2^31 − 1], or `Infinity` for no limit.
   */
  halfOpenTrialTimeoutMs?: number | undefined;
  /**
   * The random source a jittered `openDurationMs` backoff draws from. Required by the bare state
   * machine when `openDurationMs` is a Backoff; `circuitBreaker()` defaults it to `systemRandom`.
   */
  random?: Rng | undefined;
  /**
   * Called when an event listener throws, with the error and the event being delivered. The
   * breaker catches listener errors so its state stays consistent, then calls this. Default: the
   * error is dropped.
   */
  onListenerError?: ((error: unknown, event: BreakerEvent) => void) | undefined;
}

/**
 * The half-open sample of {@link BreakerPolicyOptions.halfOpenSampling}.
 * @example
 * ```ts
 * const sampling: HalfOpenSampling = { calls: 10, ratio: 0.5 }; // 5 failures reopen, 6 successes close
 * ```
 */
export interface HalfOpenSampling {
  /** Trial calls in the sample. An integer ≥ 1. */
  readonly calls: number;
  /** The share of `calls` that, once failed, reopens the breaker. In (0, 1]. */
  readonly ratio: number;
}

/** {@link BreakerPolicyOptions} after validation and defaults. */
export interface NormalisedBreakerPolicy {
  counting: CountingStrategy;
  openDurationMs: number | Backoff;
  halfOpenMaxCalls: number;
  successThreshold: number;
  /** Failed trials, in one half-open period, that reopen the breaker (1 without sampling). */
  trialFailureThreshold: number;
  halfOpenSampling: HalfOpenSampling | undefined;
  halfOpenTrialTimeoutMs: number;
  random: Rng | undefined;
  onListenerError: (error: unknown, event: BreakerEvent) => void;
}

const OWNER = 'circuitBreaker';

/** The option names of {@link BreakerPolicyOptions}. */
export const BREAKER_POLICY_KEYS: readonly string[] = [
  'counting',
  'openDurationMs',
  'halfOpenMaxCalls',
  'halfOpenSampling',
  'successThreshold',
  'halfOpenTrialTimeoutMs',
  'random',
  'onListenerError',
];

/**
 * Default `halfOpenTrialTimeoutMs`: 60 000 ms. Long enough for any trial that is really running
 * (a request with its own timeouts), short enough that a hung one frees the breaker within a minute.
 * @example
 * ```ts
 * circuitBreaker({ halfOpenTrialTimeoutMs: DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS / 6 }); // 10 s
 * ```
 */
export const DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS = 60_000;

function isBackoff(value: unknown): value is Backoff {
  return typeof value === 'object' && value !== null && typeof (value as Backoff).delay === 'function';
}

/**
 * Validates breaker policy options and fills in the defaults.
 *
 * @throws InvalidOptionError naming the field and the value.
 */
export function normaliseBreakerPolicy(options: BreakerPolicyOptions | undefined): NormalisedBreakerPolicy {
  const o = objectOption(OWNER, 'options', options, BREAKER_POLICY_KEYS);

  const counting = o.counting ?? consecutiveFailures();
  // Never null here: `??` above turns null into the default.
  if (typeof counting !== 'object' || typeof counting.create !== 'function') {
    throw new InvalidOptionError(OWNER, 'counting', counting, 'must be a counting strategy such as consecutiveFailures() or failureRatio()');
  }

  let openDurationMs: number | Backoff;
  if (isBackoff(o.openDurationMs)) {
    openDurationMs = o.openDurationMs;
    if (o.random === undefined) {
      throw new InvalidOptionError(OWNER, 'random', o.random, 'is required when openDurationMs is a Backoff');
    }
  } else if (typeof o.openDurationMs === 'object' || typeof o.openDurationMs === 'function') {
    // null and a function too: "a number of ms or a Backoff" says what was meant better than "a number".
    throw new InvalidOptionError(OWNER, 'openDurationMs', o.openDurationMs, 'must be a number of ms or a Backoff');
  } else {
    openDurationMs = numberOption(OWNER, 'openDurationMs', o.openDurationMs, 5_000, { min: 0, max: MAX_DELAY_MS });
  }

  const sampling = samplingOption(o.halfOpenSampling);
  const halfOpenMaxCalls = numberOption(OWNER, 'halfOpenMaxCalls', o.halfOpenMaxCalls, sampling?.calls ?? 1, { min: 1, max: sampling?.calls, integer: true });
  let successThreshold: number;
  let trialFailureThreshold = 1;
  if (sampling === undefined) {
    successThreshold = numberOption(OWNER, 'successThreshold', o.successThreshold, halfOpenMaxCalls, { min: 1, integer: true });
  } else {
    if (o.successThreshold !== undefined) {
      throw new InvalidOptionError(OWNER, 'successThreshold', o.successThreshold, 'cannot be given with halfOpenSampling (the sample decides when the breaker closes)');
    }
    trialFailureThreshold = failuresThatReopen(sampling);
    successThreshold = sampling.calls - trialFailureThreshold + 1;
  }

  const halfOpenTrialTimeoutMs =
    o.halfOpenTrialTimeoutMs === Infinity
      ? Infinity
      : numberOption(OWNER, 'halfOpenTrialTimeoutMs', o.halfOpenTrialTimeoutMs, DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS, { min: 0, minExclusive: true, max: MAX_DELAY_MS });

  const random = o.random;
  if (random !== undefined && (typeof random !== 'object' || random === null || typeof random.random !== 'function')) {
    throw new InvalidOptionError(OWNER, 'random', random, 'must be an object with a random() method');
  }
  const onListenerError = o.onListenerError ?? (() => {});
  if (typeof onListenerError !== 'function') {
    throw new InvalidOptionError(OWNER, 'onListenerError', onListenerError, 'must be a function');
  }
  return { counting, openDurationMs, halfOpenMaxCalls, successThreshold, trialFailureThreshold, halfOpenSampling: sampling, halfOpenTrialTimeoutMs, random, onListenerError };
}

function samplingOption(value: unknown): HalfOpenSampling | undefined {
  if (value === undefined) return undefined;
  const o = objectOption<HalfOpenSampling>(OWNER, 'halfOpenSampling', value as HalfOpenSampling, ['calls', 'ratio']);
  if (o.calls === undefined) throw new InvalidOptionError(OWNER, 'halfOpenSampling.calls', o.calls, 'is required (the trial calls in the sample)');
  if (o.ratio === undefined) throw new InvalidOptionError(OWNER, 'halfOpenSampling.ratio', o.ratio, 'is required (the share of failed trials that reopens)');
  const calls = numberOption(OWNER, 'halfOpenSampling.calls', o.calls, 1, { min: 1, integer: true });
  const ratio = numberOption(OWNER, 'halfOpenSampling.ratio', o.ratio, 1, { min: 0, minExclusive: true, max: 1 });
  return { calls, ratio };
}

/**
 * The fewest failed trials f with f ÷ calls ≥ ratio. Compared by division, not f ≥ ratio × calls,
 * so that both sides are correctly rounded (3 of 10 meets 0.3 exactly; 0.3 × 10 is 3.0000000000000004).
 */
function failuresThatReopen({ calls, ratio }: HalfOpenSampling): number {
  // Stryker disable next-line MethodExpression,ArithmeticOperator: any start at or below the answer gives the same answer (the loop climbs to it); this start only makes the loop O(1).
  let f = Math.max(1, Math.floor(ratio * calls) - 1);
  while (f / calls < ratio) f++;
  return f;
}
