import type { AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import type { HedgePolicy, HedgePolicyOptions } from '../core/hedge/policy.js';
import type { Rng } from '../core/rng.js';
import type { GiveUpEvent, HookName } from './hooks.js';
import type { Scheduler } from './scheduler.js';
import type { TelemetryObserver } from './telemetry.js';

// The public shapes of hedge() and createHedger(): what an attempt receives, the options, the hedger.

/**
 * What each attempt of a hedged call receives.
 * @example
 * ```ts
 * hedge(({ attempt, signal }: HedgeContext) => fetch(url, { signal, headers: { 'x-attempt': String(attempt) } }), { delayMs: 50 });
 * ```
 */
export interface HedgeContext {
  /** This attempt's number, from 1 (the first try); 2 and up are hedges. */
  readonly attempt: number;
  /**
   * Aborts when another attempt wins (reason: a {@link HerdlessError} with code
   * `ERR_HERDLESS_HEDGE_LOST`), when another attempt fails fatally (the same), or when the caller's
   * `signal` aborts (reason: the caller's reason). Pass it on to `fetch()` and the like: that is how
   * the losers are cancelled.
   */
  readonly signal: AbortSignal;
}

/**
 * The function a hedged call runs, once per attempt; several may run at once, so it must be
 * idempotent (a read, or a write with an idempotency key).
 * @example
 * ```ts
 * const op: HedgeOperation<Response> = ({ signal }) => fetch(url, { signal });
 * ```
 */
export type HedgeOperation<T> = (context: HedgeContext) => T | PromiseLike<T>;

/**
 * A hedge was sent (the `onHedge` hook).
 * @example
 * ```ts
 * onHedge: ({ attempt, trigger }: HedgeEvent) => log.debug(`hedge ${attempt} (${trigger})`);
 * ```
 */
export interface HedgeEvent {
  /** The hedge's attempt number, from 2. */
  readonly attempt: number;
  /** `'delay'`: the attempts in flight had not answered after the hedge delay; `'failure'`: an attempt failed with a non-fatal failure. */
  readonly trigger: 'delay' | 'failure';
  /** When it was sent, in ms after the call's start. */
  readonly afterMs: number;
}

/**
 * Options of {@link createHedger}: the hedging policy ({@link HedgePolicyOptions}) plus the runtime's ports and hooks.
 * @example
 * ```ts
 * const options: HedgerOptions = { maxAttempts: 3, delayMs: 40, budget: retryRatioBudget({ ratio: 0.1 }) };
 * ```
 */
export interface HedgerOptions extends HedgePolicyOptions {
  /**
   * Client-side adaptive throttling shared by many calls (`adaptiveThrottling()`, the SRE book's
   * "Handling Overload"), asked before *every* attempt, as `retry()` asks it: before the first
   * (a refusal ends the call unsent: a {@link index!HedgeError} with reason `'throttled'`, 0 attempts,
   * no `cause`) and before each hedge (a refused hedge is not sent, and no more follow; the attempts
   * in flight go on, and if they all fail the call gives up with `'throttled'`). Each answer is
   * reported to it: a success, or a failure that is not about load (a 404), as accepted; a
   * non-fatal failure (503, 429, a timeout), a transient failure `retryable` calls fatal, or
   * "don't retry" pushback as rejected. Losers aborted by the winner report nothing (no answer came).
   * Default: none.
   */
  throttle?: AttemptThrottle | undefined;
  /** The randomness `throttle` draws from. Default `systemRandom` (`Math.random`); pass a seeded `Rng` (`new PyRandom(seed)`) in tests. */
  random?: Rng | undefined;
  /** The clock and timers. Default `systemScheduler`; pass a `ManualClock` in tests. */
  clock?: Scheduler | undefined;
  /** `true` unrefs the hedge timer, so a pending hedge does not keep a Node.js process alive. Default false. */
  unref?: boolean | undefined;
  /** Called when a hedge is sent. An observer: never awaited; its failures go to `onHookError`. */
  onHedge?: ((event: HedgeEvent) => unknown) | undefined;
  /** Called once when the call ends without a result, just before it rejects. An observer, as `onHedge`. */
  onGiveUp?: ((event: GiveUpEvent) => unknown) | undefined;
  /** Receives a hook's failure. Default: a process warning `HERDLESS_HOOK_FAILED`. */
  onHookError?: ((error: unknown, hook: HookName) => void) | undefined;
  /**
   * Receives the call's events (layer `'hedge'`): each attempt's start and end (a loser's outcome is
   * `'aborted'`), each hedge (`type: 'hedge'`), a budget's refusal of a hedge, a throttle's
   * rejection of an attempt (`throttle-rejection`), the give-up.
   */
  telemetry?: TelemetryObserver | undefined;
}

/**
 * Options of {@link hedge}: everything {@link createHedger} takes, plus the call's `signal`.
 * @example
 * ```ts
 * const options: HedgeOptions = { delayMs: 40, signal: AbortSignal.timeout(2000) };
 * ```
 */
export interface HedgeOptions extends HedgerOptions {
  /** Aborting it ends the call at once: every attempt in flight is aborted, and the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/**
 * A hedging policy bound to the runtime, made once by {@link createHedger}: call it like `hedge()`.
 * @example
 * ```ts
 * const hedged: Hedger = createHedger({ delayMs: latencyPercentile() });
 * const value = await hedged(({ signal }) => read(key, signal), { signal });
 * ```
 */
export interface Hedger {
  <T>(operation: HedgeOperation<T>, options?: { signal?: AbortSignal | undefined }): Promise<T>;
  /** The normalised policy. */
  readonly policy: HedgePolicy;
}
