import { classify } from '../core/classify/classify.js';
import { hedgeAfterFailure, hedgeDelay } from '../core/hedge/policy.js';
import { FailureLog, type GiveUpReason, type RetryErrorReason } from '../core/retry/errors.js';
import { checkedNow } from '../core/time.js';
import { subscribe, unsubscribe } from './abort-link.js';
import type { HedgeCallReport, HedgeRunner } from './hedge-options.js';
import { Attempt, HedgeTimer, hedgeError, lost, throttleAnswer } from './hedge-parts.js';
import type { HedgeContext, HedgeOperation } from './hedge-types.js';
import { callHook } from './hooks.js';
import { CallTelemetry, type AttemptContext } from './telemetry.js';

// One hedged call, run: attempts in flight, the hedge timer, the caller's abort, the throttle and the
// budget asked before each hedge, the first success. Its pieces are hedge-parts.ts.

/** @internal An operation of a protocol layer: it also receives the attempt's trace context, to carry in its request. */
type ReportedOperation<T> = (context: HedgeContext, trace: AttemptContext | undefined) => T | PromiseLike<T>;

/**
 * @internal One hedged call: a small event-driven state machine (attempts in flight, the hedge timer, the
 * caller's signal), settled exactly once. Every transition runs synchronously from a timer, an
 * attempt's settlement or the abort, so no two interleave.
 */
export class HedgedCall<T> {
  readonly #attempts: Attempt[] = [];
  readonly #log = new FailureLog();
  readonly #tel: CallTelemetry | undefined;
  readonly #startedAt: number;
  readonly #timer: HedgeTimer;
  #inFlight = 0;
  #settled = false;
  /** Why no more hedges may be sent (undefined: more may be). */
  #stopped: RetryErrorReason | undefined;
  #lastError: unknown;
  /** A hedge is waiting for an asynchronous budget's answer. */
  #confirming = false;

  constructor(
    readonly operation: HedgeOperation<T>,
    readonly runner: HedgeRunner,
    readonly signal: AbortSignal | undefined,
    readonly resolve: (value: T) => void,
    readonly reject: (reason: unknown) => void,
    readonly report: HedgeCallReport | undefined,
  ) {
    this.#tel = runner.telemetry === undefined ? undefined : new CallTelemetry(runner.telemetry, report?.call ?? { layer: 'hedge' }, runner.clock, runner.onHookError);
    this.#timer = new HedgeTimer(runner.clock, runner.unref);
    this.#startedAt = this.#now();
  }

  #now(): number {
    return checkedNow(this.runner.clock, this.runner.owner);
  }

  start(): void {
    const signal = this.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.#settled = true;
        this.#reportGiveUp('aborted', 0, signal.reason);
        this.reject(signal.reason);
        return;
      }
      subscribe(signal, this);
    }
    if (this.#admitted(1)) this.#send();
  }

  /**
   * Asks the throttle (if any) whether attempt `number` may be sent. A refusal is reported and
   * stops hedging; with nothing in flight (a first try, or a hedge after the last failure) the call
   * gives up with reason `'throttled'`.
   */
  #admitted(number: number): boolean {
    const throttle = this.runner.throttle;
    if (throttle === undefined) return true;
    let admitted: boolean;
    try {
      admitted = throttle.admit(this.#now(), this.runner.random, number > 1);
    } catch (error) {
      // A throttle that throws (or an Rng drawing outside [0, 1)): the call ends with what it threw —
      // from a hedge timer too, where a throw would otherwise escape as an uncaught exception.
      this.#endWith(error);
      return false;
    }
    if (admitted) return true;
    this.#tel?.throttleRejection(throttle, number);
    this.#stop('throttled');
    return false;
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    // Stryker disable next-line ConditionalExpression: the call unsubscribes from the signal when it settles, so no abort reaches a settled call.
    if (this.#settled) return;
    const reason: unknown = this.signal!.reason;
    this.#settle();
    this.#abortAll(reason, 'aborted');
    this.#reportGiveUp('aborted', this.#attempts.length, reason);
    this.reject(reason);
  }

  #send(): void {
    const policy = this.runner.policy;
    const attempt = new Attempt(this.#attempts.length + 1, this.#now());
    this.#attempts.push(attempt);
    this.#inFlight++;
    policy.budget?.onAttempt(attempt.startedAt, attempt.number > 1);
    const trace = this.#tel?.attemptStart(attempt.number);
    let result: T | PromiseLike<T>;
    try {
      result = (this.operation as ReportedOperation<T>)({ attempt: attempt.number, signal: attempt.controller.signal }, trace);
    } catch (error) {
      result = Promise.reject(error);
    }
    // A settlement after the call ended lands here and is ignored (handled: never unhandled).
    Promise.resolve(result).then(
      (value) => this.#succeeded(attempt, value),
      (error: unknown) => this.#failed(attempt, error),
    );
    if (!this.#settled && attempt.number < policy.maxAttempts && this.#stopped === undefined) this.#timer.set(hedgeDelay(policy), () => this.#hedge('delay'));
  }

  /** Time for a hedge: ask the budget, then send (or stop, and end the call if nothing is in flight). */
  #hedge(trigger: 'delay' | 'failure'): void {
    if (this.#settled || this.#stopped !== undefined || this.#confirming) return;
    const policy = this.runner.policy;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the hedge timer is set only below maxAttempts, and a failure checks it before asking for a hedge.
    if (this.#attempts.length >= policy.maxAttempts) return;
    // This runs from a timer: a budget (or an operation's synchronous setup) that throws here would
    // escape as an uncaught exception and leave the call pending, so the call ends with what it threw.
    try {
      const budget = policy.budget;
      if (budget !== undefined) {
        const now = this.#now();
        if (!budget.allowRetry(now)) return this.#refused();
        if (budget.confirmRetry !== undefined) {
          // A budget kept outside the process answers asynchronously; it bounds its wait.
          const answer = budget.confirmRetry(now);
          if (answer !== true) {
            this.#confirming = true;
            Promise.resolve(answer).then(
              (allowed) => {
                this.#confirming = false;
                if (this.#settled || this.#stopped !== undefined) return;
                try {
                  if (allowed) this.#sendHedge(trigger);
                  else this.#refused();
                } catch (error) {
                  this.#endWith(error);
                }
              },
              // A custom budget whose answer rejects: the call ends with its reason, never unhandled.
              (error: unknown) => {
                this.#confirming = false;
                if (!this.#settled) this.#endWith(error);
              },
            );
            return;
          }
        }
      }
      this.#sendHedge(trigger);
    } catch (error) {
      // Stryker disable next-line ConditionalExpression: #hedge returns at once on a settled call, so nothing in this try can run after it settled.
      if (!this.#settled) this.#endWith(error);
    }
  }

  #sendHedge(trigger: 'delay' | 'failure'): void {
    const attempt = this.#attempts.length + 1;
    if (!this.#admitted(attempt)) return;
    const afterMs = Math.max(0, this.#now() - this.#startedAt);
    this.#tel?.hedge(attempt, trigger, afterMs);
    callHook(this.runner.onHedge, { attempt, trigger, afterMs }, 'onHedge', this.runner.onHookError);
    if (this.#settled) return; // the hook may have aborted the call
    this.#send();
  }

  #refused(): void {
    const budget = this.runner.policy.budget!;
    this.#tel?.budgetRefusal(budget, this.#attempts.length);
    this.#stop('budget');
  }

  /** No more hedges; if nothing is in flight, the call gives up now. */
  #stop(reason: RetryErrorReason): void {
    if (this.#stopped === undefined) this.#stopped = reason;
    this.#timer.clear();
    if (this.#inFlight === 0) this.#giveUp(this.#stopped);
  }

  #succeeded(attempt: Attempt, value: T): void {
    // Stryker disable next-line ConditionalExpression: an attempt is marked ended only when the call settles or it did; in both cases the settled check that follows returns.
    if (attempt.ended) return;
    attempt.ended = true;
    // Stryker disable next-line UpdateOperator: a success settles the call; the count is not read again.
    this.#inFlight--;
    // Stryker disable next-line ConditionalExpression: a settled call has marked every attempt ended, so the check above has returned already.
    if (this.#settled) return;
    const now = this.#now();
    this.#settle();
    this.#tel?.attemptEnd(attempt.number, 'success', undefined, this.report?.status(value));
    this.runner.policy.budget?.onSuccess(now, attempt.number > 1);
    this.runner.throttle?.onAnswer(now, true);
    const delay = this.runner.policy.delayMs;
    // The first attempt's latency, or — when a hedge beat it — its age now, a lower bound: recording
    // only winners' latencies would let the percentile fall as hedging hides the tail, and hedge ever more.
    if (typeof delay !== 'number') delay.record(now - this.#attempts[0]!.startedAt);
    this.#abortAll(lost(), 'aborted');
    this.resolve(value);
  }

  #failed(attempt: Attempt, error: unknown): void {
    // Stryker disable next-line ConditionalExpression: an attempt is marked ended only when the call settles or it did; in both cases the settled check that follows returns.
    if (attempt.ended) return;
    attempt.ended = true;
    this.#inFlight--;
    // Stryker disable next-line ConditionalExpression: a settled call has marked every attempt ended, so the check above has returned already.
    if (this.#settled) return;
    const runner = this.runner;
    const policy = runner.policy;
    this.#tel?.attemptEnd(attempt.number, 'failure', error, this.report?.status(error));
    this.#log.add(attempt.number, error);
    this.#lastError = error;
    let verdict;
    try {
      verdict = classify(error, policy.retryable, attempt.number, !policy.ignoreHints);
    } catch (overrideError) {
      // A throwing `retryable` override: the call ends with what it threw, as retry() does.
      this.#endWith(overrideError);
      return;
    }
    const throttle = runner.throttle;
    if (throttle !== undefined) {
      const accepted = throttleAnswer(verdict, error, runner.loadFailure);
      if (accepted !== undefined) throttle.onAnswer(this.#now(), accepted);
    }
    const step = hedgeAfterFailure(policy, verdict);
    if (step.budgetFailure) policy.budget?.onFailure(this.#now(), verdict.kind === 'retryable' && verdict.timeout === true);
    switch (step.kind) {
      case 'fatal':
        this.#giveUp('fatal');
        return;
      case 'stop':
        this.#stop(step.reason);
        return;
      case 'next':
        if (this.#stopped !== undefined || this.#attempts.length >= policy.maxAttempts) {
          if (this.#inFlight === 0) this.#giveUp(this.#stopped ?? 'exhausted');
          return;
        }
        if (step.delayMs === 0) {
          this.#timer.clear();
          this.#hedge('failure');
          // The budget refused and stopped the call, or the hedge went: either way, nothing more here.
          // Stryker disable next-line ConditionalExpression,LogicalOperator,BooleanLiteral,EqualityOperator,StringLiteral: a guard no path reaches: #hedge above either sent a hedge, stopped or settled the call, or is waiting for the budget.
          if (!this.#settled && this.#stopped === undefined && this.#inFlight === 0 && !this.#confirming) this.#giveUp('exhausted');
        } else {
          this.#timer.set(step.delayMs, () => this.#hedge('failure'));
        }
    }
  }

  /** Ends the call with `error` itself (what a hook of the policy threw), aborting the attempts in flight. */
  #endWith(error: unknown): void {
    this.#settle();
    this.#abortAll(lost(), 'aborted');
    this.#reportGiveUp('fatal', this.#attempts.length, error);
    this.reject(error);
  }

  #giveUp(reason: RetryErrorReason): void {
    // Stryker disable next-line ConditionalExpression: every caller checks #settled first (a failure, a stop, a refusal of an unsettled call).
    if (this.#settled) return;
    this.#settle();
    this.#abortAll(lost(), 'aborted');
    const attempts = this.#attempts.length;
    this.#reportGiveUp(reason, attempts, this.#lastError);
    this.reject(hedgeError(reason, attempts, this.#lastError, this.runner.policy, this.#log));
  }

  #settle(): void {
    this.#settled = true;
    this.#timer.clear();
    if (this.signal !== undefined) unsubscribe(this.signal, this);
  }

  /** Aborts every attempt still in flight, reporting it as `outcome`. */
  #abortAll(reason: unknown, outcome: 'aborted'): void {
    for (const attempt of this.#attempts) {
      if (attempt.ended) continue;
      // Stryker disable next-line BooleanLiteral: the call has settled when attempts are aborted: a late outcome returns at the settled check.
      attempt.ended = true;
      // Stryker disable next-line UpdateOperator: the call has settled when attempts are aborted; the count is not read again.
      this.#inFlight--;
      this.#tel?.attemptEnd(attempt.number, outcome, reason);
      attempt.controller.abort(reason);
    }
  }

  #reportGiveUp(reason: GiveUpReason, attempts: number, error: unknown): void {
    // The budget's refusal was reported when it happened; the give-up itself here.
    this.#tel?.giveUp(reason, attempts, error, undefined, reason === 'aborted' ? undefined : this.report?.status(error));
    callHook(this.runner.onGiveUp, { reason, attempts, error }, 'onGiveUp', this.runner.onHookError);
  }
}
