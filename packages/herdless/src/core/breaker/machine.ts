import { checkedDelay } from '../backoff/backoff.js';
import { InvalidOptionError } from '../errors.js';
import { checkedNow, type Clock } from '../time.js';
import type { FailureCounter } from './counting.js';
import { BreakerListeners, type BreakerEvent, type BreakerEventOf, type BreakerEventType, type BreakerState, type Unsubscribe } from './events.js';
import { normaliseBreakerPolicy, type BreakerPolicyOptions, type HalfOpenSampling, type NormalisedBreakerPolicy } from './options.js';
import { BREAKER_SNAPSHOT_SCHEMA, BREAKER_SNAPSHOT_VERSION, parseBreakerSnapshot, type BreakerSnapshot } from './snapshot.js';

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
  /**
   * Ms until the next trial may be admitted, a whole number rounded up (the clock's fractions of a
   * millisecond are never reported, and waiting this long never arrives early); while half-open, the
   * last open duration (rounded up) as an estimate; `Infinity` while isolated (no trial until someone
   * releases the isolation).
   */
  readonly retryAfterMs: number;
  /** True when the breaker refused because it is isolated (`isolate()`), not because of failures. */
  readonly isolated: boolean;
}

/**
 * One isolation from {@link CircuitBreakerMachine.isolate}. The breaker stays isolated while any
 * isolation is held.
 */
export interface MachineIsolation {
  /**
   * Ends this isolation at `now` ms; when it was the last, the breaker half-opens. Returns true
   * when this call ended the isolation of the breaker. A second call, or a call after `reset()` or
   * `endIsolation()`, does nothing.
   */
  release(now: number): boolean;
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

const EVENT_TYPES: readonly string[] = ['open', 'half-open', 'close', 'isolate', 'reset'];

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
 * Allowed edges: closed → open, open → half-open, half-open → open, half-open → closed; by hand,
 * `isolate()` (any → open, isolated: every call refused until released), the release of the last
 * isolation (→ half-open) and `reset()` (any → closed). `snapshot()` and `restore()` carry the state
 * to another machine, in another process too (see {@link BreakerSnapshot} for the time base).
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
  /** Failed trials, in one half-open period, that reopen the breaker: 1, or more with `halfOpenSampling`. */
  readonly trialFailureThreshold: number;
  /** The half-open sample, when the policy has one. */
  readonly halfOpenSampling: HalfOpenSampling | undefined;

  readonly #policy: NormalisedBreakerPolicy;
  readonly #counter: FailureCounter;
  readonly #listeners: BreakerListeners;
  #state: BreakerState = 'closed';
  #generation = 0;
  #openings = 0;
  #openDurationMs = 0;
  #nextTrialAt = 0;
  #inFlight = 0;
  #successes = 0;
  #trialFailures = 0;
  /** The trials in flight, oldest first (at most halfOpenMaxCalls). */
  // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry, so its first value is never read.
  #trials: Permit[] = [];
  /** Isolations held (`isolate()` not yet released); the breaker is isolated while it is > 0. */
  #isolations = 0;
  /** Bumped when isolations end all at once (`reset()`, `endIsolation()`): older handles then do nothing. */
  #isolationEpoch = 0;

  /** @throws InvalidOptionError naming the field and the value (see {@link BreakerPolicyOptions}). */
  constructor(options?: BreakerPolicyOptions) {
    this.#policy = normaliseBreakerPolicy(options);
    this.halfOpenMaxCalls = this.#policy.halfOpenMaxCalls;
    this.successThreshold = this.#policy.successThreshold;
    this.trialFailureThreshold = this.#policy.trialFailureThreshold;
    this.halfOpenSampling = this.#policy.halfOpenSampling;
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
      if (this.#isolations > 0) return { kind: 'rejection', state: 'open', retryAfterMs: Infinity, isolated: true };
      // Whole ms, rounded up: a caller that waits retryAfterMs finds the breaker half-open, never still open.
      if (now < this.#nextTrialAt) return { kind: 'rejection', state: 'open', retryAfterMs: Math.ceil(this.#nextTrialAt - now), isolated: false };
      this.#halfOpen(now, false);
      // A listener may have acquired or released in between: decide on the state as it is now.
      return this.acquire(now);
    }
    if (this.#state === 'closed') return new Permit(this, this.#generation, false);
    if (this.#inFlight < this.halfOpenMaxCalls) {
      this.#inFlight++;
      const permit = new Permit(this, this.#generation, true, now);
      this.#trials.push(permit);
      return permit;
    }
    return { kind: 'rejection', state: 'half-open', retryAfterMs: Math.ceil(this.#openDurationMs), isolated: false };
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
      const i = this.#trials.indexOf(permit);
      // Expired just now, counted as a failed trial of a sample that goes on: its outcome is late.
      if (i < 0) return false;
      this.#trials.splice(i, 1);
      this.#inFlight--;
      if (!failed && outcome !== 'success') return false;
      if (failed) return this.#trialFailed(at);
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

  /** A trial failed at `at` (its slot already freed): reopens once `trialFailureThreshold` have. */
  #trialFailed(at: number): boolean {
    this.#trialFailures++;
    if (this.#trialFailures < this.trialFailureThreshold) return false;
    this.#open(at, 'half-open');
    return true;
  }

  /**
   * Expires the trials that have run past their time limit by `now`, oldest first: each is a
   * failed trial as of the moment its limit passed (so a reopened breaker's wait runs from then,
   * as a timer would have had it), and its late outcome is ignored. If that reopens the breaker
   * and the wait is over too, it half-opens again.
   */
  #expireTrials(now: number): void {
    const limit = this.#policy.halfOpenTrialTimeoutMs;
    // Stryker disable next-line ConditionalExpression: without a limit the expiry is start + Infinity, which no finite clock reading reaches (the check below returns); this only skips the addition.
    if (limit === Infinity) return;
    while (this.#trials.length > 0) {
      const oldest = this.#trials[0]!;
      const expiredAt = oldest.startedAt + limit;
      if (now < expiredAt) return;
      // Its permit's release finds it gone from the list: a late outcome, ignored.
      this.#trials.shift();
      this.#inFlight--;
      if (this.#trialFailed(expiredAt)) {
        if (now >= this.#nextTrialAt) this.#halfOpen(now, false);
        return;
      }
    }
  }

  /** The state at `now` ms (an open breaker whose open period has ended half-opens here). */
  state(now: number): BreakerState {
    // Stryker disable next-line ConditionalExpression: outside half-open the trial list is empty, so #expireTrials would return at once.
    if (this.#state === 'half-open') this.#expireTrials(now);
    // An isolated breaker's nextTrialAt is Infinity: no reading reaches it.
    if (this.#state === 'open' && now >= this.#nextTrialAt) this.#halfOpen(now, false);
    return this.#state;
  }

  /** Bumped by every state change: a permit granted in an older generation is stale. */
  get generation(): number {
    return this.#generation;
  }

  /** True while the breaker is held open by {@link CircuitBreakerMachine.isolate}. */
  get isolated(): boolean {
    return this.#isolations > 0;
  }

  /**
   * The state at `now` ms (monotonic, the breaker's clock) as plain JSON, stamped `takenAt` (ms
   * since the Unix epoch, a wall clock); see {@link BreakerSnapshot} for the time base. Reading it
   * changes nothing but what reading the state would (an ended open period half-opens).
   */
  snapshot(now: number, takenAt: number): BreakerSnapshot {
    const state = this.state(now);
    const isolated = this.#isolations > 0;
    const base = {
      schema: BREAKER_SNAPSHOT_SCHEMA,
      schemaVersion: BREAKER_SNAPSHOT_VERSION,
      takenAt,
      state,
      isolated,
      openings: this.#openings,
      halfOpenInFlight: this.#inFlight,
      halfOpenSuccesses: this.#successes,
      halfOpenFailures: this.#trialFailures,
      counts: this.#counter.snapshot(now),
    } as const;
    if (state === 'closed' || isolated) return base;
    if (state === 'half-open') return { ...base, openDurationMs: this.#openDurationMs };
    // remainingOpenMs in whole ms, rounded up: a restored breaker never half-opens before the original would.
    return { ...base, openDurationMs: this.#openDurationMs, remainingOpenMs: Math.ceil(this.#nextTrialAt - now) };
  }

  /**
   * Takes over the state of `snapshot` (from `snapshot()`, perhaps of a breaker in another process)
   * at `now` ms on this breaker's clock, `restoredAt` ms since the Unix epoch on the wall clock:
   * - open: open for what is left of its period (the wall-clock time since `takenAt` subtracted,
   *   never less than 0), then half-open; the next opening continues the backoff (`openings`);
   * - isolated: isolated, by an isolation no handle holds — `endIsolation()` or `reset()` ends it;
   * - half-open: half-open with no trial in flight and no trial result (the restorer runs its own);
   * - closed: closed;
   * - the counts are the counting strategy's to restore (a strategy that cannot starts from zero).
   *
   * All or nothing: the snapshot is checked whole before anything changes. Permits granted before
   * are stale afterwards. No event is emitted: it is how a breaker starts, not a transition.
   *
   * @param field the name the errors give the snapshot. Default `'snapshot'`.
   * @throws InvalidOptionError naming the field (`snapshot.remainingOpenMs`, …) and the value, for
   *   anything but a version-1 herdless breaker snapshot of this counting strategy.
   */
  restore(snapshot: BreakerSnapshot, now: number, restoredAt: number, field = 'snapshot'): void {
    const s = parseBreakerSnapshot(snapshot, restoredAt, this.#policy.counting.name, 'circuitBreaker', field);
    // The counter checks its counts before changing them: the last step that can throw.
    this.#counter.restore?.(s.counts, now, s.ageMs, 'circuitBreaker', `${field}.counts`);
    if (this.#counter.restore === undefined) this.#counter.reset(now);
    this.#generation++;
    this.#state = s.state;
    this.#openings = s.openings;
    this.#openDurationMs = s.openDurationMs;
    this.#nextTrialAt = now + s.remainingOpenMs;
    this.#inFlight = 0;
    this.#successes = 0;
    this.#trialFailures = 0;
    this.#trials = [];
    this.#isolationEpoch++;
    this.#isolations = s.isolated ? 1 : 0;
    if (s.isolated) this.#nextTrialAt = Infinity;
  }

  /**
   * Isolates the breaker at `now` ms: it is forced open and refuses every call
   * (`retryAfterMs: Infinity`, `isolated: true`) until every isolation is released, whatever its
   * counts and timers say — for an incident or a deploy of the dependency. Isolations nest: the
   * breaker stays isolated while any is held. The first emits an `'isolate'` event; trials in
   * flight become stale. Releasing the last one half-opens the breaker (trial calls decide, so
   * releasing many clients at once does not send them all at the dependency); `reset()` closes it.
   *
   * @example
   * ```ts
   * const isolation = m.isolate(now);
   * // … the dependency is being redeployed …
   * isolation.release(later); // half-open: trials decide
   * ```
   */
  isolate(now: number): MachineIsolation {
    const from = this.state(now);
    // Stryker disable next-line ConditionalExpression: forcing open again under a nested isolation changes nothing one can observe (already open, no trials, every older permit already stale); the check only skips the work.
    if (this.#isolations === 0) {
      this.#generation++;
      this.#state = 'open';
      this.#nextTrialAt = Infinity;
      this.#inFlight = 0;
      this.#successes = 0;
      this.#trialFailures = 0;
      // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry; emptying it here only frees the entries early.
      this.#trials = [];
    }
    this.#isolations++;
    const epoch = this.#isolationEpoch;
    let held = true;
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#isolations === 1 && this.#listeners.active) this.#listeners.emit({ type: 'isolate', from, at: now });
    return {
      release: (at: number): boolean => {
        if (!held || epoch !== this.#isolationEpoch) return false;
        held = false;
        this.#isolations--;
        if (this.#isolations > 0) return false;
        this.#halfOpen(at, true);
        return true;
      },
    };
  }

  /**
   * Ends every isolation at once at `now` ms (held handles then do nothing), and half-opens the
   * breaker. For an isolation no handle holds: one restored from a snapshot, or a lost handle.
   * Returns false (and does nothing) when the breaker was not isolated.
   */
  endIsolation(now: number): boolean {
    if (this.#isolations === 0) return false;
    this.#isolations = 0;
    this.#isolationEpoch++;
    this.#halfOpen(now, true);
    return true;
  }

  /**
   * Closes the breaker by hand at `now` ms, as new: isolations ended (held handles then do
   * nothing), counts, openings and trials forgotten, permits granted before stale. Emits a
   * `'reset'` event, even when the breaker was closed already.
   */
  reset(now: number): void {
    const wasIsolated = this.#isolations > 0;
    const from = wasIsolated ? 'open' : this.state(now);
    this.#isolations = 0;
    this.#isolationEpoch++;
    this.#closedAsNew(now);
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) this.#listeners.emit({ type: 'reset', from, wasIsolated, at: now });
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
      throw new InvalidOptionError('circuitBreaker.on', 'type', type, "must be 'open', 'half-open', 'close', 'isolate' or 'reset'");
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
    this.#openDurationMs = duration;
    this.#nextTrialAt = now + duration;
    this.#inFlight = 0;
    this.#successes = 0;
    this.#trialFailures = 0;
    // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry; emptying it here only frees the expired trials' entries early.
    this.#trials = [];
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) {
      this.#listeners.emit({ type: 'open', from, at: now, openDurationMs: duration, nextTrialAt: this.#nextTrialAt, openings: this.#openings });
    }
  }

  #halfOpen(now: number, released: boolean): void {
    this.#generation++;
    this.#state = 'half-open';
    this.#inFlight = 0;
    this.#successes = 0;
    this.#trialFailures = 0;
    this.#trials = [];
    // Stryker disable next-line ConditionalExpression: emit() with no listener calls nobody; the check only skips building the event.
    if (this.#listeners.active) this.#listeners.emit({ type: 'half-open', from: 'open', at: now, released });
  }

  /**
   * Closed as new (by its trials, or by hand): a new generation, so permits granted before are
   * stale; counts, openings and trials forgotten.
   */
  #closedAsNew(now: number): void {
    this.#generation++;
    this.#state = 'closed';
    this.#openings = 0;
    this.#inFlight = 0;
    this.#successes = 0;
    this.#trialFailures = 0;
    // Stryker disable next-line ArrayDeclaration: the trial list is read only while half-open, and #halfOpen empties it on entry; emptying it here only frees the entries of trials still running.
    this.#trials = [];
    this.#counter.reset(now);
  }

  #close(now: number): void {
    this.#closedAsNew(now);
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
