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
   * [0, 2^31 − 1], or a {@link Backoff} whose `delay(n, previous, rng)` gives the nth opening since
   * the breaker last closed (n = 1, 2, …; `previous` is the last open duration, 0 at first). A
   * failed trial reopens with the next n; closing resets n. Default 5 000.
   */
  openDurationMs?: number | Backoff | undefined;
  /** How many trial calls the half-open breaker admits at once; others are refused. Default 1. An integer ≥ 1. */
  halfOpenMaxCalls?: number | undefined;
  /**
   * Successful trial calls needed, in one half-open period, to close the breaker; the first failed
   * trial reopens it. Default `halfOpenMaxCalls`. A finished trial frees its slot for the next caller, so the successes may
   * come from more calls than `halfOpenMaxCalls`; the breaker can close while a trial is still running.
   * An integer ≥ 1; it may exceed `halfOpenMaxCalls` (trials then run in turns).
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

/** {@link BreakerPolicyOptions} after validation and defaults. */
export interface NormalisedBreakerPolicy {
  counting: CountingStrategy;
  openDurationMs: number | Backoff;
  halfOpenMaxCalls: number;
  successThreshold: number;
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

  const halfOpenMaxCalls = numberOption(OWNER, 'halfOpenMaxCalls', o.halfOpenMaxCalls, 1, { min: 1, integer: true });
  const successThreshold = numberOption(OWNER, 'successThreshold', o.successThreshold, halfOpenMaxCalls, { min: 1, integer: true });

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
  return { counting, openDurationMs, halfOpenMaxCalls, successThreshold, halfOpenTrialTimeoutMs, random, onListenerError };
}
