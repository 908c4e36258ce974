import type { BreakerEvent, BreakerEventOf, BreakerEventType, BreakerState, Unsubscribe } from '../core/breaker/events.js';
import type { CircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { CircuitBreakerMachine, BreakerPermit, BreakerRejection, MachineIsolation } from '../core/breaker/machine.js';
import type { BreakerSnapshot } from '../core/breaker/snapshot.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedNow, type Clock } from '../core/time.js';
import type { BreakerCount } from './breaker-count.js';
import { executeSignal, readBreakerOptions } from './breaker-options.js';
import type { BreakerCallContext, BreakerExecuteOptions, BreakerIsolation, BreakerSettlement, CircuitBreakerOptions } from './breaker-types.js';

// The circuit breaker's shell: admission and settlement of calls (execute, tryAcquire, settle) and
// the manual controls (isolate, reset, snapshot). Beside it: breaker-options.ts (reading the
// options), breaker-count.ts (admitted calls run and counted into the state machine),
// breaker-types.ts (the public shapes); the state machine itself is core/breaker/machine.ts, pure.

export type { BreakerCallContext, BreakerExecuteOptions, BreakerIsolation, BreakerSettlement, CircuitBreakerOptions } from './breaker-types.js';

/**
 * A circuit breaker around calls to one dependency: the async shell of {@link CircuitBreakerMachine}.
 * See {@link circuitBreaker}.
 */
export class CircuitBreaker {
  /** The state machine this shell drives (shared with nobody else unless you pass it around). */
  readonly machine: CircuitBreakerMachine;
  /** The clock the breaker reads. */
  readonly clock: Clock;
  /** The name telemetry events carry. */
  readonly name: string;
  readonly #count: BreakerCount;

  /** @throws InvalidOptionError naming the field and the value. */
  constructor(options?: CircuitBreakerOptions) {
    const count = (this.#count = readBreakerOptions(options));
    this.machine = count.machine;
    this.clock = count.clock;
    this.name = count.name;
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
    // Stryker disable next-line ConditionalExpression: executeSignal(undefined) reads no options and returns no signal, as skipping it does.
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
      admission = this.#count.acquire();
    } catch (invalid) {
      // A broken injected clock (its now() not a finite number): the call fails, naming it.
      return Promise.reject(invalid);
    }
    if (admission.kind === 'rejection') return Promise.reject(this.#count.refusal(admission));
    return signal === undefined ? this.#count.runLean(fn, admission) : this.#count.runWithSignal(fn, admission, signal);
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
    return admission.kind === 'rejection' ? this.#count.refusal(admission) : admission;
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
    this.#count.settle(permit, settlement);
  }

  /** The state now (reading the clock; an open breaker whose open period has ended half-opens here). */
  get state(): BreakerState {
    // A broken clock's reading (not a finite number) moves nothing: the state is read as it stands.
    // execute() is where it is reported, naming the clock.
    const now = this.clock.now();
    // Stryker disable next-line EqualityOperator: a reading of -Infinity reaches the machine as -Infinity either way.
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
    return this.machine.snapshot(checkedNow(this.clock, 'circuitBreaker'), this.#count.now());
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
    this.#count.forget();
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
