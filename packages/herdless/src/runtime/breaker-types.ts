import type { BreakerPolicyOptions } from '../core/breaker/options.js';
import type { BreakerSnapshot } from '../core/breaker/snapshot.js';
import type { Rng } from '../core/rng.js';
import type { Clock } from '../core/time.js';
import type { TelemetryObserver } from './telemetry.js';

// The public shapes of circuitBreaker(): its options, what execute() passes to the operation, and
// the handles its methods return.

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

/** Options of one {@link CircuitBreaker.execute} call. */
export interface BreakerExecuteOptions {
  /**
   * Aborting it rejects the call at once with `signal.reason` and gives its permit back without
   * counting a success or a failure (a half-open trial slot is freed for the next caller). The
   * operation receives the signal and should stop; if it goes on, its outcome is ignored.
   */
  signal?: AbortSignal | undefined;
}
