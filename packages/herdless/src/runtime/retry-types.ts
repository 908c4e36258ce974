import type { RetryPolicy, RetryPolicyOptions } from '../core/retry/policy.js';
import type { Rng } from '../core/rng.js';
import type { GiveUpEvent, HookName, RetryEvent } from './hooks.js';
import type { Scheduler } from './scheduler.js';
import type { TelemetryObserver } from './telemetry.js';

// The public shapes of retry() and createRetry(): what an operation receives, the options, the retrier.

/**
 * What each attempt of a `retry()` call receives.
 * @example
 * ```ts
 * retry(({ attempt, signal }: RetryContext) => fetch(url, { signal, headers: { 'x-attempt': String(attempt) } }));
 * ```
 */
export interface RetryContext {
  /** This attempt's number, counting from 1. */
  readonly attempt: number;
  /**
   * Aborts when the caller's `signal` aborts (reason: the caller's reason) or when this attempt
   * runs out of time (`attemptTimeoutMs` or the call's deadline; reason: an `AttemptTimeoutError`).
   * Pass it on to `fetch()` and the like. It is created on first read, so an operation that never
   * reads it costs nothing. On a call that nothing can abort (no `signal`, `deadlineMs` or
   * `attemptTimeoutMs`) it is a signal that never aborts — on the first attempt, a new one at each read.
   * When only the caller's `signal` can abort the call, it is that signal itself: `retry()` removes
   * every listener it adds, but a consumer may leave its own on it (Node.js's `fetch` leaves one per
   * request until the request is garbage-collected, as when you pass the signal to `fetch`
   * directly). Otherwise it is the attempt's own signal: it follows the caller's while the attempt
   * runs and adds nothing to it (all calls on one caller signal share one listener, removed when the
   * last of them ends). Do not wrap a long-lived signal in `AbortSignal.any([signal, …])` per attempt
   * or per request: on Node.js 20 every such call leaves an entry on the long-lived signal for as long
   * as that signal lives.
   */
  readonly signal: AbortSignal;
}

/**
 * The function `retry()` runs: one call per attempt. It may return a value or a promise.
 * @example
 * ```ts
 * const op: RetryOperation<Response> = ({ signal }) => fetch(url, { signal });
 * ```
 */
export type RetryOperation<T> = (context: RetryContext) => T | PromiseLike<T>;

/**
 * Options of {@link createRetry}: the policy (see {@link RetryPolicyOptions}) plus the runtime's ports and hooks.
 * @example
 * ```ts
 * const options: RetrierOptions = { maxAttempts: 4, clock: new ManualClock(), random: new PyRandom(1) };
 * ```
 */
export interface RetrierOptions extends RetryPolicyOptions {
  /** The randomness the backoff draws from. Default `systemRandom` (`Math.random`); pass a seeded `Rng` (`new PyRandom(seed)` from `herdless/sim`) for repeatable waits. */
  random?: Rng | undefined;
  /** The clock and timers. Default `systemScheduler` (`performance.now`, `setTimeout`); pass a `ManualClock` (from `herdless`) in tests. */
  clock?: Scheduler | undefined;
  /**
   * `true` unrefs every timer the call schedules, so a pending retry does not keep a Node.js process
   * alive (background work). Default `false`: a foreground call is allowed to finish.
   */
  unref?: boolean | undefined;
  /**
   * Called before each wait: attempt `attempt` failed with `error`, the next starts after `delayMs` ms.
   * An observer — see {@link createRetry} for what happens if it throws or rejects.
   */
  onRetry?: ((event: RetryEvent) => unknown) | undefined;
  /** Called once when the call stops without a result, just before it rejects. An observer, as `onRetry`. */
  onGiveUp?: ((event: GiveUpEvent) => unknown) | undefined;
  /**
   * Receives a hook's failure (a throw, or the rejection of the promise it returned). Default: a
   * process warning `HERDLESS_HOOK_FAILED` (`console.error` outside Node.js).
   */
  onHookError?: ((error: unknown, hook: HookName) => void) | undefined;
  /**
   * Receives the call's events — attempt started and ended (outcome, duration in ms), retry
   * scheduled (delay in ms and its source), give-up (reason), budget refusal — see
   * {@link TelemetryEvent}. An observer, as `onRetry` (its failures go to `onHookError` as
   * `'telemetry'`). `herdless/otel` turns them into OpenTelemetry metrics. Default: none, and then
   * nothing is built.
   */
  telemetry?: TelemetryObserver | undefined;
}

/**
 * Options of {@link retry}: everything {@link createRetry} takes, plus the call's `signal`.
 * @example
 * ```ts
 * const options: RetryOptions = { maxAttempts: 4, deadlineMs: 10_000, signal: request.signal };
 * ```
 */
export interface RetryOptions extends RetrierOptions {
  /**
   * Aborting it ends the call at once — during an attempt or a wait — and the call rejects with the
   * signal's `reason` itself (as `fetch()` does), not with a `RetryError`. The pending timer is
   * cleared, no further attempt starts, and the listener `retry()` added is removed.
   */
  signal?: AbortSignal | undefined;
}

/**
 * Per-call options of a {@link Retrier}.
 * @example
 * ```ts
 * await withRetry(op, { signal: AbortSignal.timeout(5000) } satisfies RetryCallOptions);
 * ```
 */
export interface RetryCallOptions {
  /** As {@link RetryOptions.signal}. */
  signal?: AbortSignal | undefined;
}

/**
 * A retry policy bound to the runtime, made once by {@link createRetry}: call it like `retry()`.
 * @example
 * ```ts
 * const withRetry: Retrier = createRetry({ maxAttempts: 4 });
 * const value = await withRetry(op);
 * ```
 */
export interface Retrier {
  <T>(operation: RetryOperation<T>, options?: RetryCallOptions): Promise<T>;
  /** The normalised policy, e.g. for the lab or for logging. */
  readonly policy: RetryPolicy;
}
