import { InvalidOptionError } from '../core/errors.js';
import type { GiveUpReason } from '../core/retry/errors.js';
import { reportHookError, type HookName } from './hooks.js';
import type { AttemptContext, AttemptEndEvent, AttemptOutcome, AttemptStartEvent, DelaySource, GiveUpTelemetryEvent, TelemetryCall, TelemetryEvent, TelemetryObserver } from './telemetry-events.js';

// Delivering telemetry: the option's check, one event to an observer, one call's reporter. The
// event shapes are telemetry-events.ts.

export type {
  TelemetryLayer,
  TelemetryCall,
  AttemptContext,
  AttemptOutcome,
  DelaySource,
  AttemptStartEvent,
  AttemptEndEvent,
  RetryScheduledEvent,
  GiveUpTelemetryEvent,
  BudgetRefusalEvent,
  ThrottleRejectionEvent,
  HedgeScheduledEvent,
  BreakerStateEvent,
  BreakerRejectionEvent,
  ShedEvent,
  TelemetryEvent,
  TelemetryObserver,
} from './telemetry-events.js';

/** @internal Checks a `telemetry` option: the observer, or `undefined` for none or a disabled one. */
export function telemetryOption(owner: string, value: unknown): TelemetryObserver | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof (value as TelemetryObserver).onEvent !== 'function') {
    throw new InvalidOptionError(owner, 'telemetry', value, 'must be an observer object with an onEvent(event) method');
  }
  return (value as TelemetryObserver).enabled === false ? undefined : (value as TelemetryObserver);
}

/** @internal Delivers one event as an observer: never awaited, failures reported, never thrown. */
export function emitTelemetry(
  observer: TelemetryObserver,
  event: TelemetryEvent,
  onHookError: ((error: unknown, hook: HookName) => void) | undefined,
): void {
  try {
    const result = observer.onEvent(event);
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, (error: unknown) => reportHookError(onHookError, 'telemetry', error));
    }
  } catch (error) {
    reportHookError(onHookError, 'telemetry', error);
  }
}

/**
 * @internal One call's reporter: made only when an observer is given, so a call without one
 * builds nothing. It times attempts on the layer's clock. The events every layer reports (an
 * attempt's start and end, a retry, a give-up) are here; {@link CallTelemetry} adds what only the
 * layers that send requests or hedge report, so that `retry()` alone does not carry it.
 */
export class CallReporter {
  readonly call: TelemetryCall;
  readonly #observer: TelemetryObserver;
  readonly #onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  readonly #clock: { now(): number };
  #startedAt = 0;

  constructor(observer: TelemetryObserver, call: TelemetryCall, clock: { now(): number }, onHookError: ((error: unknown, hook: HookName) => void) | undefined) {
    this.#observer = observer;
    this.call = call;
    this.#clock = clock;
    this.#onHookError = onHookError;
  }

  emit(event: TelemetryEvent): void {
    emitTelemetry(this.#observer, event, this.#onHookError);
  }

  /** Reports the attempt's start; returns the event, for a layer that asks the observer for a trace context. */
  attemptStarted(attempt: number): AttemptStartEvent {
    this.#startedAt = this.#clock.now();
    const event: AttemptStartEvent = { type: 'attempt-start', call: this.call, attempt };
    this.emit(event);
    return event;
  }

  attemptEnd(attempt: number, outcome: AttemptOutcome, error?: unknown, status?: number): void {
    const durationMs = Math.max(0, this.#clock.now() - this.#startedAt);
    const event: { -readonly [K in keyof AttemptEndEvent]: AttemptEndEvent[K] } = { type: 'attempt-end', call: this.call, attempt, outcome, durationMs };
    if (status !== undefined) event.status = status;
    if (outcome !== 'success') event.error = error;
    this.emit(event);
  }

  retry(attempt: number, delayMs: number, delaySource: DelaySource, error: unknown): void {
    this.emit({ type: 'retry', call: this.call, attempt, delayMs, delaySource, error });
  }

  /**
   * The give-up, preceded by the refusal when a budget or a throttle is the reason: `limiter` is
   * the budget for `'budget'`, the throttle for `'throttled'` (which rejected attempt `attempts + 1`).
   */
  giveUp(reason: GiveUpReason | 'committed', attempts: number, error: unknown, limiter: { readonly name: string } | undefined, status?: number): void {
    if (limiter !== undefined) {
      if (reason === 'budget') this.emit({ type: 'budget-refusal', call: this.call, budget: limiter.name, attempt: attempts });
      else if (reason === 'throttled') this.emit({ type: 'throttle-rejection', call: this.call, throttle: limiter.name, attempt: attempts + 1 });
    }
    const event: { -readonly [K in keyof GiveUpTelemetryEvent]: GiveUpTelemetryEvent[K] } = { type: 'give-up', call: this.call, reason, attempts, error };
    if (status !== undefined) event.status = status;
    this.emit(event);
  }
}

/**
 * @internal The reporter of a layer that sends requests (HTTP, gRPC) or hedges: an attempt's start
 * also asks the observer for the trace context the request carries, and hedges and a budget's
 * refusal of a hedge are reported.
 */
export class CallTelemetry extends CallReporter {
  readonly #observer: TelemetryObserver;
  readonly #onHookError: ((error: unknown, hook: HookName) => void) | undefined;

  constructor(observer: TelemetryObserver, call: TelemetryCall, clock: { now(): number }, onHookError: ((error: unknown, hook: HookName) => void) | undefined) {
    super(observer, call, clock, onHookError);
    this.#observer = observer;
    this.#onHookError = onHookError;
  }

  /** Reports the attempt's start; returns its trace context when the observer has one to carry. */
  attemptStart(attempt: number): AttemptContext | undefined {
    const event = this.attemptStarted(attempt);
    // A bare hedge() runs the caller's own code: no request of its own to carry a context.
    if (this.#observer.attemptContext === undefined || (this.call.layer === 'hedge' && this.call.client === undefined)) return undefined;
    try {
      return this.#observer.attemptContext(event) ?? undefined;
    } catch (error) {
      reportHookError(this.#onHookError, 'telemetry', error);
      return undefined;
    }
  }

  hedge(attempt: number, trigger: 'delay' | 'failure', afterMs: number): void {
    this.emit({ type: 'hedge', call: this.call, attempt, trigger, afterMs });
  }

  /** A budget refused an attempt (a hedge) without ending the call. */
  budgetRefusal(budget: { readonly name: string }, attempt: number): void {
    this.emit({ type: 'budget-refusal', call: this.call, budget: budget.name, attempt });
  }

  /** A throttle rejected attempt `attempt` locally without ending the call (a hedge: the attempts in flight go on). */
  throttleRejection(throttle: { readonly name: string }, attempt: number): void {
    this.emit({ type: 'throttle-rejection', call: this.call, throttle: throttle.name, attempt });
  }
}
