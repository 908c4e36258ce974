import { CircuitOpenError, isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import type { BreakerOutcome, BreakerPermit, BreakerRejection } from '../core/breaker/machine.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedNow } from '../core/time.js';
import type { CircuitBreakerMachine } from '../core/breaker/machine.js';
import type { Clock } from '../core/time.js';
import type { TelemetryObserver } from './telemetry.js';
import { emitTelemetry } from './telemetry.js';

// How a breaker's calls reach its state machine: admission, the classification of each outcome,
// the permit given back, and the failure kept as the cause of later refusals.

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
  finish(permit: BreakerPermit, outcome: BreakerOutcome, error?: unknown): void {
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
  settleValue(permit: BreakerPermit, value: unknown): void {
    let outcome: BreakerOutcome;
    try {
      outcome = this.#isResultFailure(value) ? 'failure' : 'success';
    } catch (classifierError) {
      this.finish(permit, 'ignored');
      throw classifierError;
    }
    this.finish(permit, outcome);
  }

  /** Classifies an error and gives the permit back; throws the classifier's own error (permit given back uncounted). */
  settleError(permit: BreakerPermit, error: unknown, aborted: boolean): void {
    let outcome: BreakerOutcome;
    try {
      outcome = aborted || isCircuitOpenError(error) ? 'ignored' : this.#isFailure(error) ? 'failure' : 'success';
    } catch (classifierError) {
      this.finish(permit, 'ignored');
      throw classifierError;
    }
    this.finish(permit, outcome, error);
  }

  /** The breaker was reset: no failure is behind its state any more. */
  forget(): void {
    this.#lastFailure = undefined;
  }
}
