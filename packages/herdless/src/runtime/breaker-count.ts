import { CircuitOpenError, isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { BreakerOutcome, BreakerPermit, BreakerRejection } from '../core/breaker/machine.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedNow } from '../core/time.js';
import type { CircuitBreakerMachine } from '../core/breaker/machine.js';
import type { Clock } from '../core/time.js';
import type { TelemetryObserver } from './telemetry.js';
import { subscribe, unsubscribe } from './abort-link.js';
import type { BreakerCallContext, BreakerSettlement } from './breaker-types.js';
import { emitTelemetry } from './telemetry.js';

// How a breaker's calls reach its state machine: admission, one admitted call run until its
// outcome (or the caller's abort), the classification of that outcome, the permit given back
// exactly once, and the failure kept as the cause of later refusals.

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

/**
 * @internal One breaker's traffic through its machine, with what its options set (read by
 * breaker-options.ts): what `execute()`, `tryAcquire()` and `settle()` share.
 */
export class BreakerCount {
  readonly machine: CircuitBreakerMachine;
  readonly clock: Clock;
  readonly #isFailure: (error: unknown) => boolean;
  readonly #isResultFailure: (result: unknown) => boolean;
  readonly name: string;
  /** The wall clock, checked at each reading. */
  readonly now: () => number;
  readonly #telemetry: TelemetryObserver | undefined;
  #lastFailure: unknown;
  /**
   * Set when the injected clock returned something that is not a finite number. The closed state
   * does not read the clock (one read per call would cost more than the rest of an admission), so
   * a broken clock shows only when the breaker must open — and it cannot open without a time. From
   * then on every call reads the clock and is refused while it stays broken, rather than reaching
   * the dependency with no breaker at all.
   */
  #clockBroken = false;

  constructor(
    machine: CircuitBreakerMachine,
    clock: Clock,
    isFailure: (error: unknown) => boolean,
    isResultFailure: (result: unknown) => boolean,
    name: string,
    now: () => number,
    telemetry: TelemetryObserver | undefined,
  ) {
    this.machine = machine;
    this.clock = clock;
    this.#isFailure = isFailure;
    this.#isResultFailure = isResultFailure;
    this.name = name;
    this.now = now;
    this.#telemetry = telemetry;
  }

  /** Asks the machine for a permit; throws an InvalidOptionError for a broken clock. */
  acquire(): BreakerPermit | BreakerRejection {
    if (this.#clockBroken) {
      checkedNow(this.clock, 'circuitBreaker');
      // Stryker disable next-line BooleanLiteral: a flag left set makes each call read the clock first, which reads fine again: a cost, not an outcome.
      this.#clockBroken = false;
    }
    return this.machine.acquireFrom(this.clock);
  }

  /** A refusal as the error callers get, reported to telemetry. */
  refusal(rejection: BreakerRejection): CircuitOpenError {
    if (this.#telemetry !== undefined) {
      emitTelemetry(this.#telemetry, { type: 'breaker-rejection', breaker: this.name, state: rejection.state, isolated: rejection.isolated }, undefined);
    }
    const cause = this.#lastFailure;
    return new CircuitOpenError(rejection.state, rejection.retryAfterMs, cause === undefined || rejection.isolated ? { isolated: rejection.isolated } : { cause, isolated: false });
  }

  /** Counts an outcome: gives the permit back, and keeps (or forgets) the failure behind a state change. */
  #finish(permit: BreakerPermit, outcome: BreakerOutcome, error?: unknown): void {
    let changed: boolean;
    try {
      changed = this.machine.releaseFrom(permit, outcome, this.clock);
    } catch (invalid) {
      // Stryker disable next-line ConditionalExpression,LogicalOperator: the flag set for another error only makes the next call read the clock first, which then reads fine.
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
      // Stryker disable next-line StringLiteral: the machine counts only 'success' and 'failure'; any other outcome is ignored.
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
      // Stryker disable next-line StringLiteral: the machine counts only 'success' and 'failure'; any other outcome is ignored.
      this.#finish(permit, 'ignored');
      throw classifierError;
    }
    this.#finish(permit, outcome, error);
  }

  /** Gives back a permit of `tryAcquire()`, counting the call as `execute()` would (see `CircuitBreaker.settle`). */
  settle(permit: BreakerPermit, settlement: BreakerSettlement): void {
    if (settlement === 'ignored') this.#finish(permit, 'ignored');
    else if ('error' in settlement) this.#settleError(permit, settlement.error, false);
    else this.#settleValue(permit, settlement.value);
  }

  /** The breaker was reset: no failure is behind its state any more. */
  forget(): void {
    this.#lastFailure = undefined;
  }

  /**
   * A call without a signal: nothing can end it but `fn` itself, so its outcome is counted by one
   * `.then()` on the operation's promise (no executor, no abort bookkeeping). A value that is not a
   * thenable is counted at once, before `execute` returns.
   */
  runLean<T>(fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit): Promise<T> {
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
  runWithSignal<T>(fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const settle = (): void => {
        // Stryker disable next-line BooleanLiteral: settle() has removed the abort listener, and a promise calls one of its handlers once: nothing can run after it.
        done = true;
        unsubscribe(signal, aborts);
      };
      const onAbort = (): void => {
        // Stryker disable next-line ConditionalExpression: settle() removes the abort listener, and a promise calls one of its handlers once: no second settlement reaches here.
        if (done) return;
        settle();
        // Stryker disable next-line StringLiteral: the machine counts only 'success' and 'failure'; any other outcome is ignored.
        this.#finish(permit, 'ignored');
        reject(signal.reason);
      };
      // One listener on the caller's signal however many calls share it (see abort-link).
      const aborts = { handleEvent: onAbort };
      const onValue = (value: T): void => {
        // Stryker disable next-line ConditionalExpression: settle() removes the abort listener, and a promise calls one of its handlers once: no second settlement reaches here.
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
        // Stryker disable next-line ConditionalExpression: settle() removes the abort listener, and a promise calls one of its handlers once: no second settlement reaches here.
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
}
