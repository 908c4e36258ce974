import { checkedDelay } from '../backoff/backoff.js';
import { InvalidOptionError } from '../errors.js';
import { checkedNow, type Clock } from '../time.js';
import type { BreakerCounts, FailureCounter } from './counting.js';
import { BreakerListeners, type BreakerEvent, type BreakerEventOf, type BreakerEventType, type BreakerState, type Unsubscribe } from './events.js';
import { normaliseBreakerPolicy, type BreakerPolicyOptions, type NormalisedBreakerPolicy } from './options.js';

/**
 * How a call admitted by the breaker ended, as the breaker counts it:
 * - `'success'`: the dependency answered (a thrown error that is not a failure counts here too);
 * - `'failure'`: it counts towards opening (closed) or reopens at once (half-open trial);
 * - `'ignored'`: neither — the caller gave up (abort) or the outcome says nothing about the
 *   dependency. It only gives the permit back.
 */
export type BreakerOutcome = 'success' | 'failure' | 'ignored';

/**
 * The right to run one call, from {@link CircuitBreakerMachine.acquire}. Give it back exactly once
 * with {@link CircuitBreakerMachine.release}; further releases are ignored. A permit remembers the
 * breaker's generation (bumped by every state change): once the state has changed, its release is
 * stale and changes nothing, so a slow call from before an opening can never close, reopen or free
 * a trial slot of a later half-open period.
 */
export interface BreakerPermit {
  readonly kind: 'permit';
  /** True for a half-open trial call, false for a call admitted while closed. */
  readonly trial: boolean;
  /** The breaker's generation when the permit was granted. */
  readonly generation: number;
}

/** A refusal from {@link CircuitBreakerMachine.acquire}: the call must not run. */
export interface BreakerRejection {
  readonly kind: 'rejection';
  /** The state that refused. */
  readonly state: 'open' | 'half-open';
  /** Ms until the next trial may be admitted; while half-open, the last open duration as an estimate. */
  readonly retryAfterMs: number;
}

/** A breaker's state as plain JSON (all times in ms on the breaker's clock). */
export interface BreakerSnapshot {
  readonly state: BreakerState;
  /** Bumped by every state change; permits from an older generation are stale. */
  readonly generation: number;
  /** Openings since the breaker last closed (0 while closed). */
  readonly openings: number;
  /** When the breaker last opened (open and half-open only). */
  readonly openedAt?: number;
  /** The duration of the last opening, in ms (open and half-open only). */
  readonly openDurationMs?: number;
  /** When the first trial may be admitted (open only). */
  readonly nextTrialAt?: number;
  /** Trial calls in flight (0 unless half-open). */
  readonly halfOpenInFlight: number;
  /** Trial calls that succeeded in this half-open period (0 unless half-open). */
  readonly halfOpenSuccesses: number;
  readonly halfOpenMaxCalls: number;
  readonly successThreshold: number;
  /** The counting strategy's counts, over the calls admitted while closed (reset when the breaker closes). */
  readonly counts: BreakerCounts;
}

class Permit implements BreakerPermit {
  readonly kind = 'permit' as const;
  released = false;
  constructor(
    readonly owner: CircuitBreakerMachine,
    readonly generation: number,
    readonly trial: boolean,
    /** A trial's admission time (ms), for its time limit; 0 for a closed-state call. */
    readonly startedAt = 0,
  ) {}
}

const EVENT_TYPES: readonly string[] = ['open', 'half-open', 'close'];

/**
 * The circuit breaker's state machine: closed → open → half-open → closed (or back to open),
 * synchronous, with time passed in as `now` (ms on a monotonic clock) and nothing scheduled. The
 * runtime's `circuitBreaker()` drives it with a real clock; the simulator drives it in virtual time.
 * It is a shared object on purpose: one per dependency, used by every call to it.
 *
 * - Closed: every call is admitted; the outcomes go to the counting strategy, which may open it.
 * - Open: every call is refused with `retryAfterMs = nextTrialAt − now`, and nothing is counted.
 *   At `nextTrialAt` (noticed lazily, on the next acquire, state read or snapshot) it half-opens.
 * - Half-open: at most `halfOpenMaxCalls` trial permits are out at once; others are refused. A
 *   failed trial reopens at once (timer restarted from that moment, next backoff step);
 *   `successThreshold` successful trials close it; an ignored trial (caller abort) just frees its
 *   permit for the next caller.
 *
 * Allowed edges: closed → open, open → half-open, half-open → open, half-open → closed.
 *
 * Events are delivered synchronously, after the state has fully changed. Source of the pattern:
 * M. Nygard, "Release It!", and the Google SRE book, "Handling Overload".
 *
 * @example
 * ```ts
 * const m = circuitBreakerMachine({ openDurationMs: 1000 });
 * const p = m.acquire(now);
 * if (p.kind === 'rejection') return wait(p.retryAfterMs);
 * const ok = await send();
 * m.release(p, ok ? 'success' : 'failure', laterNow);
 * ```
 */
export class CircuitBreakerMachine {
  /** Trial calls admitted at once while half-open. */
  readonly halfOpenMaxCalls: number;
  /** Successful trials that close the breaker. */
  readonly successThreshold: number;

  readonly #policy: NormalisedBreakerPolicy;
  readonly #counter: FailureCounter;
  readonly #listeners: BreakerListeners;
  #state: BreakerState = 'closed';
  #generation = 0;
  #openings = 0;
  #openedAt = 0;
  #openDurationMs = 0;
  #nextTrialAt = 0;
  #inFlight = 0;
  #successes = 0;
  /** Admission times of the trials in flight, oldest first (at most halfOpenMaxCalls). */
  // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry, so its first value is never read.
  #trialStarts: number[] = [];

  /** @throws InvalidOptionError naming the field and the value (see {@link BreakerPolicyOptions}). */
  constructor(options?: BreakerPolicyOptions) {
    this.#policy = normaliseBreakerPolicy(options);
    this.halfOpenMaxCalls = this.#policy.halfOpenMaxCalls;
    this.successThreshold = this.#policy.successThreshold;
    this.#counter = this.#policy.counting.create();
    this.#listeners = new BreakerListeners(this.#policy.onListenerError);
  }

  /**
   * Asks to run one call at `now` ms: a {@link BreakerPermit} to release later, or a
   * {@link BreakerRejection}. Refusals change no count.
   */
  acquire(now: number): BreakerPermit | BreakerRejection {
    // Stryker disable next-line ConditionalExpression: outside half-open the trial list is empty (#open and #close empty it), so #expireTrials would return at once; the check only skips the call.
    if (this.#state === 'half-open') this.#expireTrials(now);
    if (this.#state === 'open') {
      if (now < this.#nextTrialAt) return { kind: 'rejection', state: 'open', retryAfterMs: this.#nextTrialAt - now };
      this.#halfOpen(now);
      // A listener may have acquired or released in between: decide on the state as it is now.
      return this.acquire(now);
    }
    if (this.#state === 'closed') return new Permit(this, this.#generation, false);
    if (this.#inFlight < this.halfOpenMaxCalls) {
      this.#inFlight++;
      this.#trialStarts.push(now);
      return new Permit(this, this.#generation, true, now);
    }
    return { kind: 'rejection', state: 'half-open', retryAfterMs: this.#openDurationMs };
  }

  /**
   * Gives a permit back at `now` ms with the call's outcome. Returns true when this release changed
   * the state (opened or closed the breaker). A second release of the same permit, a permit of
   * another breaker and a stale permit (granted before the last state change) change nothing.
   */
  release(permit: BreakerPermit, outcome: BreakerOutcome, now: number): boolean {
    return this.#release(permit, outcome, now, undefined);
  }

  /**
   * {@link acquire}, reading `clock` only when the answer depends on the time (not when closed).
   * @internal For the async shell: a clock read costs more than the rest of an admission.
   */
  acquireFrom(clock: Clock): BreakerPermit | BreakerRejection {
    if (this.#state === 'closed') return new Permit(this, this.#generation, false);
    return this.acquire(checkedNow(clock, 'circuitBreaker'));
  }

  /**
   * {@link release}, reading `clock` only when the outcome needs the time: not for a closed-state
   * outcome that a `timeless` counter records without opening the breaker.
   * @internal For the async shell.
   */
  releaseFrom(permit: BreakerPermit, outcome: BreakerOutcome, clock: Clock): boolean {
    return this.#release(permit, outcome, NaN, clock);
  }

  /** `release`, with the time given as `now` or, when `clock` is given, read from it as needed. */
  #release(permit: BreakerPermit, outcome: BreakerOutcome, given: number, clock: Clock | undefined): boolean {
    if (!(permit instanceof Permit) || permit.owner !== this || permit.released) return false;
    permit.released = true;
    if (permit.generation !== this.#generation) return false;
    const failed = outcome === 'failure';
    if (permit.trial) {
      // A trial that outlived its time limit expired then (a failure, the breaker reopened): its
      // late outcome is ignored, as a stale permit's is.
      const at = clock === undefined ? given : checkedNow(clock, 'circuitBreaker');
      this.#expireTrials(at);
      if (permit.generation !== this.#generation) return false;
      this.#trialStarts.splice(this.#trialStarts.indexOf(permit.startedAt), 1);
      if (!failed && outcome !== 'success') {
        this.#inFlight--;
        return false;
      }
      this.#inFlight--;
      if (failed) {
        this.#open(at, 'half-open');
        return true;
      }
      this.#successes++;
      if (this.#successes < this.successThreshold) return false;
      this.#close(at);
      return true;
    }
    if (!failed && outcome !== 'success') return false;
    // A timeless counter is not given the time (NaN); the clock is read only if the breaker opens.
    const counter = this.#counter;
    const at = clock === undefined ? given : counter.timeless === true ? NaN : checkedNow(clock, 'circuitBreaker');
    if (!counter.record(failed, at)) return false;
    this.#open(clock !== undefined && counter.timeless === true ? checkedNow(clock, 'circuitBreaker') : at, 'closed');
    return true;
  }

  /**
   * Expires the oldest trial if it has run past its time limit by `now`: a failed trial, as of the
   * moment its limit passed (so the reopened breaker's wait runs from then, as a timer would have
   * had it), which reopens the breaker — and, if that wait is over too, half-opens it again.
   */
  #expireTrials(now: number): void {
    const limit = this.#policy.halfOpenTrialTimeoutMs;
    if (this.#trialStarts.length === 0) return;
    // Stryker disable next-line ConditionalExpression: without a limit the expiry is start + Infinity, which no finite clock reading reaches (the check below returns); this only skips the addition.
    if (limit === Infinity) return;
    const expiredAt = this.#trialStarts[0]! + limit;
    if (now < expiredAt) return;
    this.#open(expiredAt, 'half-open');
    if (now >= this.#nextTrialAt) this.#halfOpen(now);
  }

  /** The state at `now` ms (an open breaker whose open period has ended half-opens here). */
  state(now: number): BreakerState {
    // Stryker disable next-line ConditionalExpression: outside half-open the trial list is empty, so #expireTrials would return at once.
    if (this.#state === 'half-open') this.#expireTrials(now);
    if (this.#state === 'open' && now >= this.#nextTrialAt) this.#halfOpen(now);
    return this.#state;
  }

  /** The state at `now` ms as plain JSON; see {@link BreakerSnapshot}. */
  snapshot(now: number): BreakerSnapshot {
    const state = this.state(now);
    const base = {
      state,
      generation: this.#generation,
      openings: this.#openings,
      halfOpenInFlight: this.#inFlight,
      halfOpenSuccesses: this.#successes,
      halfOpenMaxCalls: this.halfOpenMaxCalls,
      successThreshold: this.successThreshold,
      counts: this.#counter.snapshot(now),
    };
    if (state === 'closed') return base;
    const opened = { ...base, openedAt: this.#openedAt, openDurationMs: this.#openDurationMs };
    return state === 'open' ? { ...opened, nextTrialAt: this.#nextTrialAt } : opened;
  }

  /**
   * Calls `listener` on every event of `type` (`'open'`, `'half-open'` or `'close'`). Returns the
   * function that unsubscribes it. A listener that throws does not disturb the breaker (see
   * `onListenerError`).
   *
   * @throws InvalidOptionError for an unknown event type.
   */
  on<T extends BreakerEventType>(type: T, listener: (event: BreakerEventOf<T>) => void): Unsubscribe {
    if (!EVENT_TYPES.includes(type)) {
      throw new InvalidOptionError('circuitBreaker.on', 'type', type, "must be 'open', 'half-open' or 'close'");
    }
    return this.#listeners.add(type, listener as (event: BreakerEvent) => void);
  }

  /** Calls `listener` on every state change. Returns the function that unsubscribes it. */
  onStateChange(listener: (event: BreakerEvent) => void): Unsubscribe {
    return this.#listeners.add('change', listener);
  }

  #open(now: number, from: 'closed' | 'half-open'): void {
    // First, so that a custom Backoff's bad delay (an InvalidOptionError) leaves the state untouched.
    const duration = this.#nextOpenDuration(this.#openings + 1);
    this.#generation++;
    this.#openings++;
    this.#state = 'open';
    this.#openedAt = now;
    this.#openDurationMs = duration;
    this.#nextTrialAt = now + duration;
    this.#inFlight = 0;
    this.#successes = 0;
    // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry; emptying it here only frees the expired trials' entries early.
    this.#trialStarts = [];
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) {
      this.#listeners.emit({ type: 'open', from, at: now, openDurationMs: duration, nextTrialAt: this.#nextTrialAt, openings: this.#openings });
    }
  }

  #halfOpen(now: number): void {
    this.#generation++;
    this.#state = 'half-open';
    this.#inFlight = 0;
    this.#successes = 0;
    this.#trialStarts = [];
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) this.#listeners.emit({ type: 'half-open', from: 'open', at: now });
  }

  #close(now: number): void {
    this.#generation++;
    this.#state = 'closed';
    this.#openings = 0;
    this.#inFlight = 0;
    this.#successes = 0;
    // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry; emptying it here only frees the entries of trials still running when the breaker closed.
    this.#trialStarts = [];
    this.#counter.reset(now);
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) this.#listeners.emit({ type: 'close', from: 'half-open', at: now });
  }

  /** The open duration of opening number `opening` (counting from 1), in [0, 2^31 − 1] ms. */
  #nextOpenDuration(opening: number): number {
    const d = this.#policy.openDurationMs;
    if (typeof d === 'number') return d;
    const previous = opening === 1 ? 0 : this.#openDurationMs;
    return checkedDelay('circuitBreaker', d.delay(opening, previous, this.#policy.random!));
  }
}

/**
 * Builds a {@link CircuitBreakerMachine}: the pure, synchronous breaker that the runtime's
 * `circuitBreaker()` and the simulator both drive. Most code wants `circuitBreaker()` instead.
 *
 * @throws InvalidOptionError naming the field and the value (see {@link BreakerPolicyOptions}).
 * @example
 * ```ts
 * const m = circuitBreakerMachine({ counting: failureRatio({ minimumCalls: 10 }), halfOpenMaxCalls: 3 });
 * ```
 */
export function circuitBreakerMachine(options?: BreakerPolicyOptions): CircuitBreakerMachine {
  return new CircuitBreakerMachine(options);
}
