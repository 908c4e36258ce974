import { AttemptTimeoutError } from '../core/retry/errors.js';
import { callOperation, type BudgetScope } from './budget-scope.js';
import type { RetrySettings } from './retry-options.js';
import type { RetryContext, RetryOperation } from './retry-types.js';

// The guard of a call: the contexts its attempts receive, and the timers and the caller's abort
// that can end an attempt or a wait early. A call's first attempt on the lean path uses the plain context.

/**
 * @internal The first attempt's context on the plain path, shared by every call: nothing can abort a plain
 * attempt, so any never-aborting signal will do. Each read makes a fresh one (a signal is never
 * shared between calls: listeners a consumer leaves on it must not pile up), and an operation that
 * ignores the signal costs nothing — not even the context's allocation.
 */
export const FIRST_PLAIN_CONTEXT: RetryContext = /* @__PURE__ */ Object.freeze({
  attempt: 1,
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
});

/** An attempt's context in the loop. Its signal is made on first read (nothing at all for an operation that never reads it). */
class AttemptContext implements RetryContext {
  readonly attempt: number;
  #guard: Guard;
  #signal: AbortSignal | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  constructor(attempt: number, guard: Guard) {
    this.attempt = attempt;
    this.#guard = guard;
  }

  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    const guard = this.#guard;
    // Only the caller can abort this attempt: hand over the caller's own signal, no controller needed.
    if (guard.settings.plain && guard.signal !== undefined && !this.#aborted) {
      return (this.#signal = guard.signal);
    }
    const controller = new AbortController();
    if (this.#aborted) controller.abort(this.#reason);
    this.#controller = controller;
    return (this.#signal = controller.signal);
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

function unrefTimer(handle: unknown): void {
  // Stryker disable next-line ConditionalExpression: a handle that is a number has no unref: `unref?.()` does nothing for it either.
  if (typeof handle === 'object' && handle !== null) (handle as { unref?: () => unknown }).unref?.();
}

/** @internal Runs a call's stages (attempts and waits) so that an abort or a timeout ends the current one at once. */
export class Guard {
  readonly settings: RetrySettings;
  readonly signal: AbortSignal | undefined;
  /** The caller's signal aborted. */
  aborted = false;
  /** The last attempt was cut short by the deadline. */
  byDeadline = false;
  #reject: ((reason: unknown) => void) | undefined;
  #timer: unknown;
  // Stryker disable next-line BooleanLiteral: clearing a timer that was never set is a no-op for a Scheduler (clearTimeout ignores unknown handles).
  #hasTimer = false;
  #context: AttemptContext | undefined;

  constructor(settings: RetrySettings, signal: AbortSignal | undefined) {
    this.settings = settings;
    this.signal = signal;
  }

  /** The caller's signal fired (`this` is the listener object, so no closure is allocated). */
  handleEvent(): void {
    this.aborted = true;
    this.#clearTimer();
    const reason = this.signal!.reason;
    this.#context?.abort(reason);
    const reject = this.#reject;
    this.#reject = undefined;
    reject?.(reason);
  }

  #setTimer(callback: () => void, ms: number): void {
    this.#timer = this.settings.clock.setTimeout(callback, ms);
    this.#hasTimer = true;
    if (this.settings.unref) unrefTimer(this.#timer);
  }

  #clearTimer(): void {
    // Stryker disable next-line ConditionalExpression: clearTimeout of a fired, cleared or absent handle is a no-op for a Scheduler; the flag only spares the call.
    if (this.#hasTimer) {
      // Stryker disable next-line BooleanLiteral: the timer has fired or is being cleared; clearing it again is a no-op for a Scheduler.
      this.#hasTimer = false;
      this.settings.clock.clearTimeout(this.#timer);
    }
  }

  /**
   * Runs one attempt, failing it with an AttemptTimeoutError after `timeoutMs` (if finite). An
   * attempt that nothing can cut short (no timer, no signal) is the operation's own result, not
   * raced: one promise and its hops less per retry of a plain call (BENCHMARKS.md section 2).
   */
  attempt<T>(operation: RetryOperation<T>, attempt: number, timeoutMs: number, byDeadline: boolean, scope: BudgetScope | undefined): T | PromiseLike<T> {
    const context = new AttemptContext(attempt, this);
    this.byDeadline = false;
    // Stryker disable next-line ConditionalExpression: racing an attempt that nothing can cut short settles it the same way, one promise later.
    if (timeoutMs === Infinity && this.signal === undefined) return callOperation(operation, context, scope);
    this.#context = context;
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      if (timeoutMs !== Infinity) {
        this.#setTimer(() => {
          // Stryker disable next-line BooleanLiteral: the timer has fired or is being cleared; clearing it again is a no-op for a Scheduler.
          this.#hasTimer = false;
          this.#reject = undefined;
          this.byDeadline = byDeadline;
          const timeout = new AttemptTimeoutError(attempt, timeoutMs, byDeadline);
          reject(timeout);
          context.abort(timeout);
        }, timeoutMs);
      }
      let result: T | PromiseLike<T>;
      try {
        result = callOperation(operation, context, scope);
      } catch (error) {
        reject(error);
        return;
      }
      // A late settlement after a timeout or an abort lands on a settled promise: ignored, and
      // handled, so it never becomes an unhandled rejection.
      Promise.resolve(result).then(resolve, reject);
    });
  }

  /** Waits `ms` ms (> 0); rejects at once if the caller aborts. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#reject = reject;
      this.#setTimer(() => {
        // Stryker disable next-line BooleanLiteral: the timer has fired or is being cleared; clearing it again is a no-op for a Scheduler.
        this.#hasTimer = false;
        this.#reject = undefined;
        resolve();
      }, ms);
    });
  }

  /** The current stage is over: drop its timer and its hooks into the attempt. */
  settled(): void {
    this.#clearTimer();
    this.#reject = undefined;
    this.#context = undefined;
  }
}
