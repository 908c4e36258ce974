import { MAX_DELAY_MS } from '../core/backoff/backoff.js';
import { DO_NOT_RETRY_VERDICT, FATAL, RETRYABLE, retryAfter, type Verdict } from '../core/classify/verdict.js';
import { decide, describeGiveUp, type HintedRetryBudget, type RetryCommand, type RetryState } from '../core/retry/decide.js';
import { callHook } from '../runtime/hooks.js';
import { CallTelemetry, type AttemptContext } from '../runtime/telemetry.js';
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

/** @internal DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE: answers about load, never accepts (adaptive throttling). */
export const LOAD_STATUSES: ReadonlySet<number> = /* @__PURE__ */ new Set([4, 8, 14]);

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
    /** The request URL, when the client has one (Connect): telemetry's server address. */
    url?: string,
  ) {
    const now = planner.clock.now();
    this.#state = { attempt: 1, previousDelayMs: 0, deadlineAt: now + remainingMs };
    const observer = planner.telemetry;
    this.#tel =
      observer === undefined
        ? undefined
        : new CallTelemetry(
            observer,
            url === undefined
              ? { layer: 'grpc', client: planner.client, method, name: planner.name ?? grpcServiceOf(method) }
              : { layer: 'grpc', client: planner.client, method, url, name: planner.name ?? grpcServiceOf(method) },
            planner.clock,
            planner.options.onHookError,
          );
  }
  /** The attempt running or just finished, from 1. */
  get attempt(): number {
    return this.#state.attempt;
  }
  /**
   * Asks the adaptive throttle (if any) whether the next attempt may be sent; on a refusal, reports
   * the give-up (reason `'throttled'`, with `code`: the last attempt's status, or UNAVAILABLE for a
   * first try) and returns false — the caller then ends the call without sending it.
   */
  admit(code: number): boolean {
    const throttle = this.planner.throttle;
    if (throttle === undefined || throttle.admit(this.planner.clock.now(), this.planner.random, this.#state.attempt > 1)) return true;
    this.gaveUp(code, 'throttled', 'adaptive throttling rejected the attempt locally');
    return false;
  }
  /**
   * The budget hears of each attempt as it starts. Returns the attempt's trace context when the
   * telemetry observer has one: its fields go into the attempt's metadata, and the attempt is
   * started inside it.
   */
  started(): AttemptContext | undefined {
    this.#waiting = false;
    this.plan.policy.budget?.onAttempt(this.planner.clock.now(), this.#state.attempt > 1);
    if (this.#tel === undefined) return undefined;
    this.#inFlight = true;
    return this.#tel.attemptStart(this.#state.attempt);
  }
  /** The call succeeded (status OK). */
  succeeded(): void {
    (this.plan.policy.budget as HintedRetryBudget | undefined)?.onSuccess(this.planner.clock.now(), this.#state.attempt > 1);
    this.planner.throttle?.onAnswer(this.planner.clock.now(), true);
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
    // Load-related statuses are rejections even when this method does not retry them.
    this.planner.throttle?.onAnswer(this.planner.clock.now(), verdict.kind === 'fatal' && !LOAD_STATUSES.has(code));
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
    // During a wait the state already names the attempt that will not start; a throttled attempt
    // was not sent either: the attempts are those before it.
    const attempts = this.#waiting || reason === 'throttled' ? this.#state.attempt - 1 : this.#state.attempt;
    if (this.#tel !== undefined) {
      this.#ended(reason === 'aborted' ? 'aborted' : 'failure', code);
      this.#tel.giveUp(reason, attempts, { code, message }, reason === 'throttled' ? this.planner.throttle : this.plan.policy.budget, code);
    }
    const o = this.planner.options;
    if (o.onGiveUp === undefined) return;
    callHook(o.onGiveUp, { method: this.method, attempts, code, reason, message }, 'onGiveUp', o.onHookError);
  }
}

/** @internal A method path's service (`/helloworld.Greeter/SayHello` → `helloworld.Greeter`): the default dependency name. */
export function grpcServiceOf(path: string): string {
  const end = path.lastIndexOf('/');
  return end > 1 ? path.slice(path.startsWith('/') ? 1 : 0, end) : path;
}
