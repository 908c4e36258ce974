import { MAX_DELAY_MS } from '../core/backoff/backoff.js';
import { DO_NOT_RETRY_VERDICT, FATAL, RETRYABLE, retryAfter, type Verdict } from '../core/classify/verdict.js';
import { decide, describeGiveUp, type HintedRetryBudget, type RetryCommand, type RetryState } from '../core/retry/decide.js';
import { callHook } from '../runtime/hooks.js';
import { CallTelemetry } from '../runtime/telemetry.js';
import type { GrpcGiveUpEvent, GrpcMethodPlan, GrpcRetryEvent, GrpcRetryPlanner } from './interceptor-options.js';
import { parseGrpcPushback } from './pushback.js';

/**
 * @internal How a finished attempt's status reads for `decide()` (gRFC A6): a retryable status is
 * retryable, with the server's pushback as the wait, or "do not retry" for a negative or malformed
 * pushback (both count as failures for throttling); any other status is fatal.
 */
export function grpcVerdict(plan: GrpcMethodPlan, code: number, pushback: unknown): Verdict {
  if (!plan.codes.has(code)) return FATAL;
  const ms = parseGrpcPushback(pushback);
  if (ms === undefined) return RETRYABLE;
  if (ms === 'do-not-retry') return DO_NOT_RETRY_VERDICT;
  // Far above any timer: decide() turns it into 'hint-too-long' against maxRetryAfterMs.
  return retryAfter(ms < MAX_DELAY_MS ? ms : MAX_DELAY_MS + 1);
}

/**
 * @internal One call's retry state across its attempts, shared by the grpc-js and Connect
 * interceptors: the budget's bookkeeping, `decide()`, and the hooks.
 */
export class GrpcCallRetry {
  #state: RetryState;
  /** The call's reporter; `undefined` (nothing built) without an observer. */
  readonly #tel: CallTelemetry | undefined;
  /** An attempt has started and not yet been reported as ended. */
  #inFlight = false;
  /** A retry was decided and its attempt has not started: the attempts made are one fewer. */
  #waiting = false;
  constructor(
    private readonly planner: GrpcRetryPlanner,
    private readonly plan: GrpcMethodPlan,
    private readonly method: string,
    /** The ms left before the call's deadline (`Infinity` for none). */
    remainingMs: number,
  ) {
    const now = planner.clock.now();
    this.#state = { attempt: 1, previousDelayMs: 0, deadlineAt: now + remainingMs };
    const observer = planner.telemetry;
    this.#tel =
      observer === undefined
        ? undefined
        : new CallTelemetry(observer, { layer: 'grpc', client: planner.client, method }, planner.clock, planner.options.onHookError);
  }
  /** The attempt running or just finished, from 1. */
  get attempt(): number {
    return this.#state.attempt;
  }
  /** The budget hears of each attempt as it starts. */
  started(): void {
    this.#waiting = false;
    this.plan.policy.budget?.onAttempt(this.planner.clock.now(), this.#state.attempt > 1);
    if (this.#tel !== undefined) {
      this.#inFlight = true;
      this.#tel.attemptStart(this.#state.attempt);
    }
  }
  /** The call succeeded (status OK). */
  succeeded(): void {
    (this.plan.policy.budget as HintedRetryBudget | undefined)?.onSuccess(this.planner.clock.now(), this.#state.attempt > 1);
    this.#ended('success', 0);
  }
  /** Reports the attempt in flight as ended (telemetry only). */
  #ended(outcome: 'success' | 'failure' | 'aborted', code: number): void {
    if (this.#tel === undefined || !this.#inFlight) return;
    this.#inFlight = false;
    this.#tel.attemptEnd(this.#state.attempt, outcome, outcome === 'success' ? undefined : { code }, code);
  }
  /**
   * The attempt failed with `code` (and `pushback`, the raw `grpc-retry-pushback-ms` value): the
   * command to follow. On `retry`, the state moves to the next attempt.
   */
  failed(code: number, pushback: unknown): RetryCommand {
    this.#ended('failure', code);
    const verdict = grpcVerdict(this.plan, code, pushback);
    const command = decide(this.plan.policy, this.#state, verdict, this.planner.clock.now(), this.planner.random);
    const o = this.planner.options;
    if (command.kind === 'retry') {
      const event: GrpcRetryEvent = { method: this.method, attempt: this.#state.attempt, code, delayMs: command.delayMs, delaySource: command.delaySource === 'server-hint' ? 'pushback' : 'backoff' };
      this.#tel?.retry(this.#state.attempt, command.delayMs, event.delaySource, { code });
      this.#state = command.next;
      this.#waiting = true;
      callHook(o.onRetry, event, 'onRetry', o.onHookError);
    } else {
      this.gaveUp(code, command.reason, describeGiveUp(this.plan.policy, command));
    }
    return command;
  }
  /** Reports the end of the call without a retry (also for the commit rule). */
  gaveUp(code: number, reason: GrpcGiveUpEvent['reason'], message: string): void {
    // During a wait the state already names the attempt that will not start.
    const attempts = this.#waiting ? this.#state.attempt - 1 : this.#state.attempt;
    if (this.#tel !== undefined) {
      this.#ended(reason === 'aborted' ? 'aborted' : 'failure', code);
      this.#tel.giveUp(reason, attempts, { code, message }, this.plan.policy.budget, code);
    }
    const o = this.planner.options;
    if (o.onGiveUp === undefined) return;
    callHook(o.onGiveUp, { method: this.method, attempts, code, reason, message }, 'onGiveUp', o.onHookError);
  }
}
