import { classify } from '../core/classify/classify.js';
import { HerdlessError } from '../core/errors.js';
import { hedgeAfterFailure, hedgeDelay, type HedgePolicy } from '../core/hedge/policy.js';
import { FailureLog, RetryError, type GiveUpReason } from '../core/retry/errors.js';
import { checkedNow } from '../core/time.js';
import { subscribe, unsubscribe } from './abort-link.js';
import type { HedgeOperation } from './hedge-types.js';
import type { HedgeRunner } from './hedge-options.js';
import { callHook } from './hooks.js';
import { CallTelemetry } from './telemetry.js';

// One hedged call, run: attempts in flight, the hedge timer, the caller's abort, the first success.

/** The abort reason of an attempt that another one beat (or that a fatal failure elsewhere ended). */
const HEDGE_LOST = 'ERR_HERDLESS_HEDGE_LOST';

/** One attempt in flight. */
class Attempt {
  readonly controller = new AbortController();
  ended = false;
  constructor(
    readonly number: number,
    readonly startedAt: number,
  ) {}
}

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
  #inFlight = 0;
  #timer: unknown;
  #hasTimer = false;
  #settled = false;
  /** Why no more hedges may be sent (undefined: more may be). */
  #stopped: GiveUpReason | undefined;
  #lastError: unknown;
  /** A hedge is waiting for an asynchronous budget's answer. */
  #confirming = false;

  constructor(
    readonly operation: HedgeOperation<T>,
    readonly runner: HedgeRunner,
    readonly signal: AbortSignal | undefined,
    readonly resolve: (value: T) => void,
    readonly reject: (reason: unknown) => void,
  ) {
    this.#tel = runner.telemetry === undefined ? undefined : new CallTelemetry(runner.telemetry, { layer: 'hedge' }, runner.clock, runner.onHookError);
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
    this.#send();
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
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
    this.#tel?.attemptStart(attempt.number);
    let result: T | PromiseLike<T>;
    try {
      result = this.operation({ attempt: attempt.number, signal: attempt.controller.signal });
    } catch (error) {
      result = Promise.reject(error);
    }
    // A settlement after the call ended lands here and is ignored (handled: never unhandled).
    Promise.resolve(result).then(
      (value) => this.#succeeded(attempt, value),
      (error: unknown) => this.#failed(attempt, error),
    );
    if (!this.#settled && attempt.number < policy.maxAttempts && this.#stopped === undefined) this.#arm(hedgeDelay(policy), 'delay');
  }

  /** Sets the hedge timer (replacing any): the next hedge goes `ms` ms from now. */
  #arm(ms: number, trigger: 'delay' | 'failure'): void {
    this.#clearTimer();
    this.#timer = this.runner.clock.setTimeout(() => {
      this.#hasTimer = false;
      this.#hedge(trigger);
    }, ms);
    this.#hasTimer = true;
    if (this.runner.unref) {
      const handle = this.#timer as { unref?: () => unknown } | null;
      if (typeof handle === 'object' && handle !== null) handle.unref?.();
    }
  }

  #clearTimer(): void {
    if (!this.#hasTimer) return;
    this.#hasTimer = false;
    this.runner.clock.clearTimeout(this.#timer);
  }

  /** Time for a hedge: ask the budget, then send (or stop, and end the call if nothing is in flight). */
  #hedge(trigger: 'delay' | 'failure'): void {
    if (this.#settled || this.#stopped !== undefined || this.#confirming) return;
    const policy = this.runner.policy;
    if (this.#attempts.length >= policy.maxAttempts) return;
    const budget = policy.budget;
    if (budget !== undefined) {
      const now = this.#now();
      if (!budget.allowRetry(now)) return this.#refused();
      if (budget.confirmRetry !== undefined) {
        // A budget kept outside the process answers asynchronously; it bounds its wait and never rejects.
        const answer = budget.confirmRetry(now);
        if (answer !== true) {
          this.#confirming = true;
          Promise.resolve(answer).then((allowed) => {
            this.#confirming = false;
            if (this.#settled || this.#stopped !== undefined) return;
            if (allowed) this.#sendHedge(trigger);
            else this.#refused();
          });
          return;
        }
      }
    }
    this.#sendHedge(trigger);
  }

  #sendHedge(trigger: 'delay' | 'failure'): void {
    const attempt = this.#attempts.length + 1;
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
  #stop(reason: GiveUpReason): void {
    if (this.#stopped === undefined) this.#stopped = reason;
    this.#clearTimer();
    if (this.#inFlight === 0) this.#giveUp(this.#stopped);
  }

  #succeeded(attempt: Attempt, value: T): void {
    if (attempt.ended) return;
    attempt.ended = true;
    this.#inFlight--;
    if (this.#settled) return;
    const now = this.#now();
    this.#settle();
    this.#tel?.attemptEnd(attempt.number, 'success');
    this.runner.policy.budget?.onSuccess(now, attempt.number > 1);
    const delay = this.runner.policy.delayMs;
    // The first attempt's latency, or — when a hedge beat it — its age now, a lower bound: recording
    // only winners' latencies would let the percentile fall as hedging hides the tail, and hedge ever more.
    if (typeof delay !== 'number') delay.record(now - this.#attempts[0]!.startedAt);
    this.#abortAll(lost(), 'aborted');
    this.resolve(value);
  }

  #failed(attempt: Attempt, error: unknown): void {
    if (attempt.ended) return;
    attempt.ended = true;
    this.#inFlight--;
    if (this.#settled) return;
    const runner = this.runner;
    const policy = runner.policy;
    this.#tel?.attemptEnd(attempt.number, 'failure', error);
    this.#log.add(attempt.number, error);
    this.#lastError = error;
    let verdict;
    try {
      verdict = classify(error, policy.retryable, attempt.number, !policy.ignoreHints);
    } catch (overrideError) {
      // A throwing `retryable` override: the call ends with what it threw, as retry() does.
      this.#settle();
      this.#abortAll(lost(), 'aborted');
      this.#reportGiveUp('fatal', this.#attempts.length, overrideError);
      this.reject(overrideError);
      return;
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
          this.#clearTimer();
          this.#hedge('failure');
          // The budget refused and stopped the call, or the hedge went: either way, nothing more here.
          if (!this.#settled && this.#stopped === undefined && this.#inFlight === 0 && !this.#confirming) this.#giveUp('exhausted');
        } else {
          this.#arm(step.delayMs, 'failure');
        }
    }
  }

  #giveUp(reason: GiveUpReason): void {
    if (this.#settled) return;
    this.#settle();
    this.#abortAll(lost(), 'aborted');
    const attempts = this.#attempts.length;
    this.#reportGiveUp(reason, attempts, this.#lastError);
    this.reject(new RetryError(reason, attempts, this.#lastError, describe(reason, this.runner.policy), this.#log.kept, this.#log.omitted));
  }

  #settle(): void {
    this.#settled = true;
    this.#clearTimer();
    if (this.signal !== undefined) unsubscribe(this.signal, this);
  }

  /** Aborts every attempt still in flight, reporting it as `outcome`. */
  #abortAll(reason: unknown, outcome: 'aborted'): void {
    for (const attempt of this.#attempts) {
      if (attempt.ended) continue;
      attempt.ended = true;
      this.#inFlight--;
      this.#tel?.attemptEnd(attempt.number, outcome, reason);
      attempt.controller.abort(reason);
    }
  }

  #reportGiveUp(reason: GiveUpReason, attempts: number, error: unknown): void {
    // The budget's refusal was reported when it happened; the give-up itself here.
    this.#tel?.giveUp(reason, attempts, error, undefined);
    callHook(this.runner.onGiveUp, { reason, attempts, error }, 'onGiveUp', this.runner.onHookError);
  }
}

function lost(): HerdlessError {
  return new HerdlessError(HEDGE_LOST, 'hedged call: another attempt answered first, or the call ended');
}

function describe(reason: GiveUpReason, policy: HedgePolicy): string {
  switch (reason) {
    case 'exhausted':
      return `all ${policy.maxAttempts} hedged attempt${policy.maxAttempts === 1 ? '' : 's'} failed (maxAttempts ${policy.maxAttempts})`;
    case 'fatal':
      return 'the failure is not retryable';
    case 'budget':
      return `the retry budget "${policy.budget?.name ?? ''}" refused a hedge and the attempts in flight failed`;
    case 'do-not-retry':
      return 'a failure said not to retry, and the attempts in flight failed';
    case 'circuit-open':
      return 'the circuit is open';
    case 'hint-too-long':
      return `the server asked to wait longer than maxRetryAfterMs (${policy.maxRetryAfterMs} ms)`;
    default:
      return reason;
  }
}
