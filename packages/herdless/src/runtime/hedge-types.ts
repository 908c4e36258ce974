import type { HedgePolicy, HedgePolicyOptions } from '../core/hedge/policy.js';
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
   * `'aborted'`), each hedge (`type: 'hedge'`), a budget's refusal of a hedge, the give-up.
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
