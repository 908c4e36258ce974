import { isNotFatal } from '../core/classify/classify.js';
import { isGivenUp } from '../core/classify/hints.js';
import { CircuitOpenError, isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { BreakerEvent, BreakerEventOf, BreakerEventType, BreakerState, Unsubscribe } from '../core/breaker/events.js';
import { CircuitBreakerMachine, type BreakerOutcome, type BreakerPermit, type BreakerRejection, type MachineIsolation } from '../core/breaker/machine.js';
import { BREAKER_POLICY_KEYS, type BreakerPolicyOptions } from '../core/breaker/options.js';
import type { BreakerSnapshot } from '../core/breaker/snapshot.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedRng, type Rng } from '../core/rng.js';
import { checkedNow, type Clock } from '../core/time.js';
import { functionOption, objectOption } from '../core/validate.js';
import { subscribe, unsubscribe } from './abort-link.js';
import { systemClock } from './system-clock.js';
import { systemRandom } from './system-random.js';
import { emitTelemetry, telemetryOption, type BreakerStateEvent, type TelemetryObserver } from './telemetry.js';

/**
 * The signal of `execute()`'s options, checked: a misspelt key would otherwise be ignored, and a
 * `signal` that is not an AbortSignal fail inside as an unrelated TypeError.
 */
function executeSignal(options: BreakerExecuteOptions): AbortSignal | undefined {
  const { signal } = objectOption('circuitBreaker.execute', 'options', options, ['signal']);
  if (signal === undefined) return undefined;
  if (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function' || typeof signal.aborted !== 'boolean') {
    throw new InvalidOptionError('circuitBreaker.execute', 'signal', signal, 'must be an AbortSignal');
  }
  return signal;
}

/** Options of {@link circuitBreaker}: the policy ({@link BreakerPolicyOptions}) plus how calls are run and classified. */
export interface CircuitBreakerOptions extends BreakerPolicyOptions {
  /** The monotonic ms clock the breaker reads at each acquire and release. Default `systemClock` (`performance.now()`). */
  clock?: Clock | undefined;
  /**
   * Which thrown errors count as failures. Default: `retry()`'s classification — an error `retry()`
   * would retry (network failure, timeout, 408/429/5xx, gRPC UNAVAILABLE) or one marked "overloaded;
   * don't retry" is a failure of the dependency; a fatal error is not. An error for which it returns
   * false counts as a success (the dependency answered, e.g. with a 404). Whatever it says, the
   * breaker's own refusals ({@link CircuitOpenError}, also from a nested breaker) and aborts by the
   * caller's `signal` are never counted.
   */
  isFailure?: ((error: unknown) => boolean) | undefined;
  /**
   * Which returned values count as failures (e.g. `(r) => r.status >= 500`). The value is still
   * returned. Default: the values a herdless layer gave up on ({@link isGivenUp}) — a `Response`
   * that `withRetry()` returned after its last attempt is a failure of the dependency, not a success.
   */
  isResultFailure?: ((result: unknown) => boolean) | undefined;
  /** Randomness for a jittered `openDurationMs` backoff, as `retry()`'s `random`. Default `systemRandom`. */
  random?: Rng | undefined;
  /**
   * Receives `'breaker-state'` (every state change) and `'breaker-rejection'` (every refused call)
   * events, see {@link TelemetryObserver}. An observer: its failures are reported as a process
   * warning and change nothing. Default: none.
   */
  telemetry?: TelemetryObserver | undefined;
  /** The breaker's name in telemetry events (e.g. the dependency it guards). Default `'default'`. */
  name?: string | undefined;
  /**
   * Start from this state instead of closed: a {@link BreakerSnapshot} from `snapshot()`, perhaps
   * taken by another process (a previous instance of a serverless function, another pod), read
   * back from JSON. An open breaker stays open for what is left of its open period (wall-clock
   * time since the snapshot subtracted), then half-opens; see {@link BreakerSnapshot} for the time
   * base and `CircuitBreakerMachine.restore` for each state. All or nothing: a snapshot that is not
   * a version-1 herdless breaker snapshot of the same counting strategy makes the constructor throw
   * an `InvalidOptionError` naming the field (`initialState.remainingOpenMs`, …) and the value.
   * Default: closed.
   */
  initialState?: BreakerSnapshot | undefined;
  /**
   * The wall clock, in ms since the Unix epoch, that stamps snapshots (`takenAt`) and measures a
   * restored snapshot's age. Default `Date.now`. (Everything else uses `clock`, a monotonic clock.)
   * A reading that is not a finite number is refused with an `InvalidOptionError` naming `now()`.
   */
  now?: (() => number) | undefined;
}

/**
 * One isolation of a {@link CircuitBreaker}, from {@link CircuitBreaker.isolate}.
 * @example
 * ```ts
 * const isolation: BreakerIsolation = breaker.isolate();
 * isolation.release();
 * ```
 */
export interface BreakerIsolation {
  /**
   * Ends this isolation; when it was the last one held, the breaker half-opens (trial calls decide
   * whether it closes). Returns true when this call ended the breaker's isolation. Calling it
   * again, or after `reset()` / `endIsolation()`, does nothing.
   * @throws InvalidOptionError when the breaker's clock returns something other than a finite number.
   */
  release(): boolean;
}

/**
 * How a call admitted by {@link CircuitBreaker.tryAcquire} ended, for {@link CircuitBreaker.settle}:
 * the value it produced, the error it failed with, or `'ignored'` (the caller gave up: counted
 * neither way).
 * @example
 * ```ts
 * breaker.settle(permit, { error: status });
 * ```
 */
export type BreakerSettlement = { readonly value: unknown } | { readonly error: unknown } | 'ignored';

/** What {@link CircuitBreaker.execute} passes to the operation. */
export interface BreakerCallContext {
  /**
   * The caller's signal: stop work when it aborts. Without one, a signal that never aborts (a new one
   * at each read), so that `fetch(url, { signal })` needs no check.
   */
  readonly signal: AbortSignal;
  /** True when this call is a half-open trial (a probe of a dependency that recently failed). */
  readonly trial: boolean;
}

/**
 * The contexts of calls without a signal: two constants, shared by every such call. Nothing can
 * abort such a call, so any never-aborting signal will do; each read makes a fresh one (a signal is
 * never shared between calls: listeners a consumer leaves on it must not pile up).
 */
const CALL_CONTEXT: BreakerCallContext = /* @__PURE__ */ Object.freeze({
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
  trial: false,
});
const TRIAL_CONTEXT: BreakerCallContext = /* @__PURE__ */ Object.freeze({
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
  trial: true,
});

/** Options of one {@link CircuitBreaker.execute} call. */
export interface BreakerExecuteOptions {
  /**
   * Aborting it rejects the call at once with `signal.reason` and gives its permit back without
   * counting a success or a failure (a half-open trial slot is freed for the next caller). The
   * operation receives the signal and should stop; if it goes on, its outcome is ignored.
   */
  signal?: AbortSignal | undefined;
}

/**
 * A circuit breaker around calls to one dependency: the async shell of {@link CircuitBreakerMachine}.
 * See {@link circuitBreaker}.
 */
export class CircuitBreaker {
  /** The state machine this shell drives (shared with nobody else unless you pass it around). */
  readonly machine: CircuitBreakerMachine;
  /** The clock the breaker reads. */
  readonly clock: Clock;
  readonly #isFailure: (error: unknown) => boolean;
  readonly #isResultFailure: (result: unknown) => boolean;
  #lastFailure: unknown;
  /**
   * Set when the injected clock returned something that is not a finite number. The closed state
   * does not read the clock (one read per call would cost more than the rest of an admission), so
   * a broken clock shows only when the breaker must open — and it cannot open without a time. From
   * then on every call reads the clock and is refused while it stays broken, rather than reaching
   * the dependency with no breaker at all.
   */
  #clockBroken = false;
  readonly #telemetry: TelemetryObserver | undefined;
  /** The name telemetry events carry. */
  readonly name: string;
  readonly #now: () => number;

  /** @throws InvalidOptionError naming the field and the value. */
  constructor(options?: CircuitBreakerOptions) {
    const o = objectOption('circuitBreaker', 'options', options, [...BREAKER_POLICY_KEYS, 'clock', 'isFailure', 'isResultFailure', 'telemetry', 'name', 'initialState', 'now']);
    const { clock: _clock, isFailure: _isFailure, isResultFailure: _isResultFailure, telemetry: _telemetry, name: _name, initialState, now: _now, ...policy } = o;
    this.machine = new CircuitBreakerMachine({ ...policy, random: o.random === undefined ? systemRandom : checkedRng(o.random, 'circuitBreaker', 'random') });
    this.clock = o.clock ?? systemClock;
    if (typeof this.clock !== 'object' || this.clock === null || typeof this.clock.now !== 'function') {
      throw new InvalidOptionError('circuitBreaker', 'clock', this.clock, 'must be an object with a now() method');
    }
    this.#isFailure = functionOption('circuitBreaker', 'isFailure', o.isFailure) ?? isNotFatal;
    this.#isResultFailure = functionOption('circuitBreaker', 'isResultFailure', o.isResultFailure) ?? isGivenUp;
    if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) throw new InvalidOptionError('circuitBreaker', 'name', o.name, 'must be a non-empty string');
    this.name = o.name ?? 'default';
    const now = functionOption('circuitBreaker', 'now', o.now) ?? Date.now;
    const wall = { now };
    this.#now = () => checkedNow(wall, 'circuitBreaker', 'now()', 'must return a finite number of ms since the epoch, as Date.now() does');
    if (initialState !== undefined) this.machine.restore(initialState, checkedNow(this.clock, 'circuitBreaker'), this.#now(), 'initialState');
    const telemetry = (this.#telemetry = telemetryOption('circuitBreaker', o.telemetry));
    if (telemetry !== undefined) {
      this.machine.onStateChange((event) => {
        emitTelemetry(telemetry, breakerStateEvent(this.name, event), undefined);
      });
    }
  }

  /**
   * Runs `fn` if the breaker admits the call, and counts its outcome.
   *
   * - Refused (open, or half-open with every trial slot taken): rejects at once with a
   *   {@link CircuitOpenError} (`retryAfterMs`, `doNotRetry: true`); `fn` is not called.
   * - Admitted: the permit is taken synchronously, before `execute` returns, so N calls started in
   *   the same tick see each other (1 000 concurrent calls on a half-open breaker: exactly
   *   `halfOpenMaxCalls` run). It is given back exactly once, when `fn` returns, throws, rejects or
   *   the caller aborts, whichever comes first.
   * - The result or error of `fn` is passed through unchanged. A classifier (`isFailure`,
   *   `isResultFailure`) that throws rejects the call with its own error; the permit is then given
   *   back uncounted.
   *
   * @throws (rejects with) CircuitOpenError when refused; `signal.reason` when aborted; whatever `fn`
   *   throws; InvalidOptionError when `fn` is not a function, or `options` is not an object, has a key
   *   other than `signal`, or a `signal` that is not an AbortSignal.
   * @example
   * ```ts
   * const user = await breaker.execute(({ signal }) => fetch(`${api}/users/1`, { signal }), { signal });
   * ```
   */
  execute<T>(fn: (context: BreakerCallContext) => T | PromiseLike<T>, options?: BreakerExecuteOptions): Promise<T> {
    if (typeof fn !== 'function') {
      return Promise.reject(new InvalidOptionError('circuitBreaker.execute', 'fn', fn, 'must be a function'));
    }
    let signal: AbortSignal | undefined;
    if (options !== undefined) {
      try {
        signal = executeSignal(options);
      } catch (invalid) {
        return Promise.reject(invalid);
      }
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    let admission: BreakerPermit | BreakerRejection;
    try {
      if (this.#clockBroken) {
        checkedNow(this.clock, 'circuitBreaker');
        this.#clockBroken = false;
      }
      admission = this.machine.acquireFrom(this.clock);
    } catch (invalid) {
      // A broken injected clock (its now() not a finite number): the call fails, naming it.
      return Promise.reject(invalid);
    }
    if (admission.kind === 'rejection') return Promise.reject(this.#refusal(admission));
    return signal === undefined ? this.#runLean(fn, admission) : this.#run(fn, admission, signal);
  }

  /** A refusal as the error callers get, reported to telemetry. */
  #refusal(rejection: BreakerRejection): CircuitOpenError {
    if (this.#telemetry !== undefined) {
      emitTelemetry(this.#telemetry, { type: 'breaker-rejection', breaker: this.name, state: rejection.state, isolated: rejection.isolated }, undefined);
    }
    const cause = this.#lastFailure;
    return new CircuitOpenError(rejection.state, rejection.retryAfterMs, cause === undefined || rejection.isolated ? { isolated: rejection.isolated } : { cause, isolated: false });
  }

  /**
   * Asks to run one call now, for clients that are not promise-shaped (callback or event APIs,
   * such as grpc-js interceptors): a {@link BreakerPermit} to give back exactly once with
   * {@link CircuitBreaker.settle}, or the {@link CircuitOpenError} that `execute()` would have
   * rejected with (returned, not thrown; reported to telemetry the same way). Prefer `execute()`
   * wherever the call is a promise.
   *
   * @throws InvalidOptionError when the breaker's clock returns something other than a finite number.
   * @example
   * ```ts
   * const permit = breaker.tryAcquire();
   * if (isCircuitOpenError(permit)) return callback(permit);
   * startCall((error, value) => {
   *   breaker.settle(permit, error === null ? { value } : { error });
   *   callback(error, value);
   * });
   * ```
   */
  tryAcquire(): BreakerPermit | CircuitOpenError {
    const admission = this.machine.acquireFrom(this.clock);
    return admission.kind === 'rejection' ? this.#refusal(admission) : admission;
  }

  /**
   * Gives back a permit from {@link CircuitBreaker.tryAcquire}, counting the call as `execute()`
   * would: `{ value }` through `isResultFailure`, `{ error }` through `isFailure` (a
   * `CircuitOpenError` of a nested breaker is not counted), `'ignored'` not at all. Only the first
   * settlement of a permit counts.
   *
   * @throws what a classifier throws (the permit is then given back uncounted), or an
   *   InvalidOptionError for a broken clock or a custom open-duration backoff's bad delay.
   */
  settle(permit: BreakerPermit, settlement: BreakerSettlement): void {
    if (settlement === 'ignored') this.#finish(permit, 'ignored');
    else if ('error' in settlement) this.#settleError(permit, settlement.error, false);
    else this.#settleValue(permit, settlement.value);
  }

  /** Counts an outcome: gives the permit back, and keeps (or forgets) the failure behind a state change. */
  #finish(permit: BreakerPermit, outcome: BreakerOutcome, error?: unknown): void {
    let changed: boolean;
    try {
      changed = this.machine.releaseFrom(permit, outcome, this.clock);
    } catch (invalid) {
      if (invalid instanceof InvalidOptionError && invalid.field === 'clock.now()') this.#clockBroken = true;
      // A custom openDurationMs backoff's bad delay: the call rejects with that InvalidOptionError,
      // and the failure that was opening the breaker is kept as its cause (nothing is lost).
      if (error !== undefined && typeof invalid === 'object' && invalid !== null && !('cause' in invalid)) {
        Object.defineProperty(invalid, 'cause', { value: error, configurable: true, writable: true });
      }
      throw invalid;
    }
    // A release that changes the state either opened the breaker (keep the failure as the cause of
    // later refusals) or closed it (forget it).
    if (changed) this.#lastFailure = outcome === 'failure' ? error : undefined;
  }

  /** Classifies a value and gives the permit back; throws the classifier's own error (permit given back uncounted). */
  #settleValue(permit: BreakerPermit, value: unknown): void {
    let outcome: BreakerOutcome;
    try {
      outcome = this.#isResultFailure(value) ? 'failure' : 'success';
    } catch (classifierError) {
      this.#finish(permit, 'ignored');
      throw classifierError;
    }
    this.#finish(permit, outcome);
  }

  /** Classifies an error and gives the permit back; throws the classifier's own error (permit given back uncounted). */
  #settleError(permit: BreakerPermit, error: unknown, aborted: boolean): void {
    let outcome: BreakerOutcome;
    try {
      outcome = aborted || isCircuitOpenError(error) ? 'ignored' : this.#isFailure(error) ? 'failure' : 'success';
    } catch (classifierError) {
      this.#finish(permit, 'ignored');
      throw classifierError;
    }
    this.#finish(permit, outcome, error);
  }

  /**
   * A call without a signal: nothing can end it but `fn` itself, so its outcome is counted by one
   * `.then()` on the operation's promise (no executor, no abort bookkeeping). A value that is not a
   * thenable is counted at once, before `execute` returns.
   */
  #runLean<T>(fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit): Promise<T> {
    let result: T | PromiseLike<T>;
    try {
      result = fn(permit.trial ? TRIAL_CONTEXT : CALL_CONTEXT);
    } catch (error) {
      try {
        this.#settleError(permit, error, false);
      } catch (classifierError) {
        return Promise.reject(classifierError);
      }
      return Promise.reject(error);
    }
    if ((typeof result === 'object' && result !== null) || typeof result === 'function') {
      // Promise.resolve adopts any thenable, and turns a throwing `then` getter into a rejection.
      const settled = result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result);
      return settled.then(
        (value) => {
          this.#settleValue(permit, value);
          return value;
        },
        (error: unknown) => {
          this.#settleError(permit, error, false);
          throw error;
        },
      );
    }
    try {
      this.#settleValue(permit, result);
    } catch (classifierError) {
      return Promise.reject(classifierError);
    }
    return Promise.resolve(result);
  }

  /** A call with a signal: the first of `fn`'s outcome and the caller's abort settles it. */
  #run<T>(fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const settle = (): void => {
        done = true;
        unsubscribe(signal, aborts);
      };
      const onAbort = (): void => {
        if (done) return;
        settle();
        this.#finish(permit, 'ignored');
        reject(signal.reason);
      };
      // One listener on the caller's signal however many calls share it (see abort-link).
      const aborts = { handleEvent: onAbort };
      const onValue = (value: T): void => {
        if (done) return;
        settle();
        try {
          this.#settleValue(permit, value);
        } catch (classifierError) {
          reject(classifierError);
          return;
        }
        resolve(value);
      };
      const onError = (error: unknown): void => {
        if (done) return;
        settle();
        try {
          this.#settleError(permit, error, signal.aborted);
        } catch (classifierError) {
          reject(classifierError);
          return;
        }
        reject(error);
      };

      subscribe(signal, aborts);
      let result: T | PromiseLike<T>;
      try {
        result = fn({ signal, trial: permit.trial });
      } catch (error) {
        onError(error);
        return;
      }
      if ((typeof result === 'object' && result !== null) || typeof result === 'function') {
        // Promise.resolve adopts any thenable, and turns a throwing `then` getter into a rejection.
        Promise.resolve(result).then(onValue, onError);
      } else {
        onValue(result);
      }
    });
  }

  /** The state now (reading the clock; an open breaker whose open period has ended half-opens here). */
  get state(): BreakerState {
    // A broken clock's reading (not a finite number) moves nothing: the state is read as it stands.
    // execute() is where it is reported, naming the clock.
    const now = this.clock.now();
    return this.machine.state(typeof now === 'number' && now > -Infinity && now < Infinity ? now : -Infinity);
  }

  /** True while the breaker is isolated (held open by {@link CircuitBreaker.isolate}). */
  get isolated(): boolean {
    return this.machine.isolated;
  }

  /**
   * The state now as plain, versioned JSON that another process can restore
   * (`circuitBreaker({ initialState })`); see {@link BreakerSnapshot} for the fields and the time
   * base (durations from the snapshot, stamped with the wall clock `now()`).
   *
   * @throws InvalidOptionError when `clock.now()` or `now()` returns something other than a finite number.
   * @example
   * ```ts
   * await store.put('breaker:payments', JSON.stringify(breaker.snapshot()));
   * // in the next process:
   * const breaker = circuitBreaker({ ...options, initialState: JSON.parse(await store.get('breaker:payments')) });
   * ```
   */
  snapshot(): BreakerSnapshot {
    return this.machine.snapshot(checkedNow(this.clock, 'circuitBreaker'), this.#now());
  }

  /**
   * Forces the breaker open until released: every call is refused at once with a
   * `CircuitOpenError` whose `isolated` is true (and `retryAfterMs` `Infinity`), whatever the
   * counts say — to take a dependency out of service during an incident or a deploy. Isolations
   * nest (the breaker stays isolated while any is held) and survive a snapshot. Releasing the last
   * one half-opens the breaker, so that trial calls, not every client at once, find out whether the
   * dependency is back; {@link CircuitBreaker.reset} closes it instead. Emits `'isolate'` (the
   * first isolation only) and telemetry `breaker-state` with `cause: 'isolate'`.
   *
   * @throws InvalidOptionError when the breaker's clock returns something other than a finite number.
   * @example
   * ```ts
   * const isolation = breaker.isolate();
   * await deploy();
   * isolation.release(); // half-open: a trial call goes first
   * ```
   */
  isolate(): BreakerIsolation {
    const handle: MachineIsolation = this.machine.isolate(checkedNow(this.clock, 'circuitBreaker'));
    return { release: () => handle.release(checkedNow(this.clock, 'circuitBreaker')) };
  }

  /**
   * Ends every isolation at once, even those no handle holds (one restored from a snapshot, or a
   * lost handle), and half-opens the breaker. Returns false (doing nothing) when it was not isolated.
   *
   * @throws InvalidOptionError when the breaker's clock returns something other than a finite number.
   */
  endIsolation(): boolean {
    return this.machine.endIsolation(checkedNow(this.clock, 'circuitBreaker'));
  }

  /**
   * Closes the breaker as new: isolations ended, counts and openings forgotten; calls in flight
   * are no longer counted. Emits `'reset'` and telemetry `breaker-state` with `cause: 'reset'`.
   *
   * @throws InvalidOptionError when the breaker's clock returns something other than a finite number.
   * @example
   * ```ts
   * breaker.reset(); // the dependency was replaced: start afresh
   * ```
   */
  reset(): void {
    this.machine.reset(checkedNow(this.clock, 'circuitBreaker'));
    this.#lastFailure = undefined;
  }

  /** Same as {@link CircuitBreaker.snapshot}, so `JSON.stringify(breaker)` works. */
  toJSON(): BreakerSnapshot {
    return this.snapshot();
  }

  /**
   * Calls `listener` on every `'open'`, `'half-open'` or `'close'` event; returns the unsubscribe
   * function. Listeners run synchronously after the state changed; one that throws is caught (see
   * `onListenerError`) and the breaker carries on.
   */
  on<T extends BreakerEventType>(type: T, listener: (event: BreakerEventOf<T>) => void): Unsubscribe {
    return this.machine.on(type, listener);
  }

  /** Calls `listener` on every state change; returns the unsubscribe function. */
  onStateChange(listener: (event: BreakerEvent) => void): Unsubscribe {
    return this.machine.onStateChange(listener);
  }
}

/** The state an event leaves the breaker in. */
const STATE_AFTER: Readonly<Record<BreakerEvent['type'], BreakerState>> = { open: 'open', 'half-open': 'half-open', close: 'closed', isolate: 'open', reset: 'closed' };

/** A machine event as telemetry's `breaker-state`, with the manual cause when there is one. */
function breakerStateEvent(breaker: string, event: BreakerEvent): BreakerStateEvent {
  const base = { type: 'breaker-state', breaker, from: event.from, to: STATE_AFTER[event.type], at: event.at } as const;
  if (event.type === 'isolate' || event.type === 'reset') return { ...base, cause: event.type };
  if (event.type === 'half-open' && event.released) return { ...base, cause: 'release' };
  return base;
}

/**
 * A circuit breaker for calls to one dependency (closed → open → half-open → closed), so that a
 * failing dependency is given time to recover instead of a steady stream of calls. Share one
 * breaker per dependency.
 *
 * Defaults: opens after 5 consecutive failures, stays open 5 000 ms, then admits 1 trial call;
 * 1 success closes it, a failure reopens it for another open period. Every thrown error counts as a
 * failure except its own refusals and aborts by the caller. Time comes from `clock` (default
 * `performance.now()`); nothing is scheduled, so an idle breaker holds no timers.
 *
 * Manual control: `isolate()` (forced open until released), `endIsolation()`, `reset()`. State
 * across restarts: `snapshot()`, and `initialState` to start from one. Per host or per server:
 * `keyedBreakers()`.
 *
 * Compose with retry from the OUTSIDE: `retry(() => breaker.execute(op))`. Its refusals carry
 * `doNotRetry: true`, so the retry gives up at once instead of sleeping and trying again.
 * Sources: M. Nygard, "Release It!"; Google SRE book, "Handling Overload".
 *
 * @throws InvalidOptionError naming the field and the value for a bad option.
 * @example
 * ```ts
 * const breaker = circuitBreaker({
 *   counting: failureRatio({ ratio: 0.5, windowMs: 10_000, minimumCalls: 10 }),
 *   openDurationMs: exponentialBackoff({ initialBackoffMs: 1_000, maxBackoffMs: 60_000 }),
 * });
 * breaker.on('open', (e) => log.warn(`breaker open for ${e.openDurationMs} ms`));
 * const res = await breaker.execute(({ signal }) => fetch(url, { signal }));
 * ```
 */
export function circuitBreaker(options?: CircuitBreakerOptions): CircuitBreaker {
  return new CircuitBreaker(options);
}
