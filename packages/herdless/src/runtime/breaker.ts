import { isNotFatal } from '../core/classify/classify.js';
import { isGivenUp } from '../core/classify/hints.js';
import { CircuitOpenError, isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { BreakerEvent, BreakerEventOf, BreakerEventType, BreakerState, Unsubscribe } from '../core/breaker/events.js';
import { CircuitBreakerMachine, type BreakerOutcome, type BreakerPermit, type BreakerRejection, type BreakerSnapshot } from '../core/breaker/machine.js';
import { BREAKER_POLICY_KEYS, type BreakerPolicyOptions } from '../core/breaker/options.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedRng, type Rng } from '../core/rng.js';
import { checkedNow, type Clock } from '../core/time.js';
import { functionOption, objectOption } from '../core/validate.js';
import { subscribe, unsubscribe } from './abort-link.js';
import { systemClock } from './system-clock.js';
import { systemRandom } from './system-random.js';
import { emitTelemetry, telemetryOption, type TelemetryObserver } from './telemetry.js';

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
}

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

  /** @throws InvalidOptionError naming the field and the value. */
  constructor(options?: CircuitBreakerOptions) {
    const o = objectOption('circuitBreaker', 'options', options, [...BREAKER_POLICY_KEYS, 'clock', 'isFailure', 'isResultFailure', 'telemetry', 'name']);
    const { clock: _clock, isFailure: _isFailure, isResultFailure: _isResultFailure, telemetry: _telemetry, name: _name, ...policy } = o;
    this.machine = new CircuitBreakerMachine({ ...policy, random: o.random === undefined ? systemRandom : checkedRng(o.random, 'circuitBreaker', 'random') });
    this.clock = o.clock ?? systemClock;
    if (typeof this.clock !== 'object' || this.clock === null || typeof this.clock.now !== 'function') {
      throw new InvalidOptionError('circuitBreaker', 'clock', this.clock, 'must be an object with a now() method');
    }
    this.#isFailure = functionOption('circuitBreaker', 'isFailure', o.isFailure) ?? isNotFatal;
    this.#isResultFailure = functionOption('circuitBreaker', 'isResultFailure', o.isResultFailure) ?? isGivenUp;
    if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) throw new InvalidOptionError('circuitBreaker', 'name', o.name, 'must be a non-empty string');
    this.name = o.name ?? 'default';
    const telemetry = (this.#telemetry = telemetryOption('circuitBreaker', o.telemetry));
    if (telemetry !== undefined) {
      this.machine.onStateChange((event) => {
        const to: BreakerState = event.type === 'close' ? 'closed' : event.type;
        emitTelemetry(telemetry, { type: 'breaker-state', breaker: this.name, from: event.from, to, at: event.at }, undefined);
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
    if (admission.kind === 'rejection') {
      if (this.#telemetry !== undefined) emitTelemetry(this.#telemetry, { type: 'breaker-rejection', breaker: this.name, state: admission.state }, undefined);
      const cause = this.#lastFailure;
      return Promise.reject(new CircuitOpenError(admission.state, admission.retryAfterMs, cause === undefined ? undefined : { cause }));
    }
    return signal === undefined ? this.#runLean(fn, admission) : this.#run(fn, admission, signal);
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

  /** The state now as plain JSON; see {@link BreakerSnapshot}. */
  snapshot(): BreakerSnapshot {
    return this.machine.snapshot(checkedNow(this.clock, 'circuitBreaker'));
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
