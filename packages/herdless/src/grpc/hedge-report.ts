import { isRetryError } from '../core/retry/errors.js';
import { HEDGE_REPORT, type HedgeEvent, type HedgeOptions } from '../runtime/hedge.js';
import { callHook } from '../runtime/hooks.js';
import { grpcServiceOf } from './call-retry.js';
import type { GrpcGiveUpEvent, GrpcMethodPlan, GrpcRetryPlanner } from './interceptor-options.js';
import type { CallRetryBuffer } from './retry-buffer.js';

/** gRPC's DEADLINE_EXCEEDED and INTERNAL codes (the interceptors' own numbering is gRPC's). */
const DEADLINE_EXCEEDED = 4;
const INTERNAL = 13;

/**
 * @internal One hedged gRPC call's reporting, shared by the grpc-js and Connect interceptors: the
 * options that run it through `hedge()` (the method's `hedgingPolicy`, under the `retryThrottling`
 * bucket) with the interceptor's `onHedge` hook and its telemetry describing the call as the
 * retrying path does (layer `'hedge'`, the client, the method's path, the dependency's name), and
 * the `onGiveUp` reports at the call's end.
 */
export class GrpcHedgeReporter {
  /** The status of the attempt that failed last (what a `'failure'` hedge answers); the layer sets it. */
  lastCode: number | undefined;
  /** The highest attempt number started. */
  attempts = 0;
  /** Why the call was committed before its first attempt (the request outgrew the retry buffer): it is then sent once. */
  #overflow: string | undefined;
  /** The request's bytes held for replay, until the call commits or ends. */
  #buffer: CallRetryBuffer | undefined;

  constructor(
    private readonly planner: GrpcRetryPlanner,
    private readonly plan: GrpcMethodPlan,
    private readonly method: string,
    /** How a failed attempt's status reads: its gRPC code, or `undefined` for a failure without one. */
    private readonly codeOf: (error: unknown) => number | undefined,
    /** The request URL (Connect): the telemetry call's server address. */
    private readonly url?: string,
  ) {}

  /**
   * Holds the request (`size` serialized bytes) for replay by the hedges (gRFC A6, "Memory
   * Management (Buffering)"): a request that does not fit `perRpcBufferLimit`, or the interceptor's
   * `retryBufferSize`, commits the call before it starts — it is sent once, never hedged.
   */
  hold(size: number): void {
    this.release();
    const buffer = this.planner.buffers.call();
    if (buffer.hold(size)) {
      this.#buffer = buffer;
      return;
    }
    const { perRpcBufferLimit, retryBufferSize } = this.planner.buffers;
    this.#overflow = `the request outgrew the retry buffer (perRpcBufferLimit ${perRpcBufferLimit}, retryBufferSize ${retryBufferSize} bytes): gRFC A6 commits the call, which is sent once, unhedged`;
  }

  /** The call committed or ended: the request leaves the buffer (no attempt will be sent again). */
  release(): void {
    this.#buffer?.releaseAll();
    this.#buffer = undefined;
  }

  /** The options of this call's `hedge()`. */
  options(signal: AbortSignal): HedgeOptions {
    const { policy, nonFatal } = this.plan.hedging!;
    const planner = this.planner;
    const o = planner.options;
    const options: HedgeOptions = {
      maxAttempts: this.#overflow === undefined ? policy.maxAttempts : 1,
      delayMs: policy.hedgingDelayMs,
      budget: this.plan.policy.budget,
      retryable: (error) => {
        const code = this.codeOf(error);
        return code !== undefined && nonFatal.has(code);
      },
      maxRetryAfterMs: this.plan.policy.maxRetryAfterMs,
      clock: planner.clock,
      telemetry: planner.telemetry,
      onHookError: o.onHookError,
      signal,
    };
    if (o.onHedge !== undefined) options.onHedge = (event: HedgeEvent) => this.#hedged(event);
    if (planner.telemetry !== undefined) {
      const name = planner.name ?? grpcServiceOf(this.method);
      const call = this.url === undefined ? { layer: 'hedge' as const, client: planner.client, method: this.method, name } : { layer: 'hedge' as const, client: planner.client, method: this.method, url: this.url, name };
      (options as { [HEDGE_REPORT]?: unknown })[HEDGE_REPORT] = { call, status: (outcome: unknown) => this.codeOf(outcome) };
    }
    return options;
  }

  #hedged(event: HedgeEvent): void {
    const o = this.planner.options;
    const report = { method: this.method, attempt: event.attempt, trigger: event.trigger, afterMs: event.afterMs };
    callHook(o.onHedge, event.trigger === 'failure' && this.lastCode !== undefined ? { ...report, code: this.lastCode } : report, 'onHedge', o.onHookError);
  }

  /**
   * The hedged call ended without committing: every attempt failed (`error` is `hedge()`'s
   * `HedgeError`), or — `abortedCode` given — the caller cancelled it or its deadline passed (the
   * code the call ends with: CANCELLED, DEADLINE_EXCEEDED). Returns the status code the call ends with.
   */
  gaveUp(error: unknown, abortedCode: number | undefined): number {
    this.release();
    if (abortedCode !== undefined) {
      const deadline = abortedCode === DEADLINE_EXCEEDED;
      this.#report({
        method: this.method,
        attempts: this.attempts,
        code: abortedCode,
        reason: deadline ? 'deadline' : 'aborted',
        message: deadline ? "the call's deadline passed before a hedged attempt committed" : 'the caller cancelled the hedged call',
        hedged: true,
      });
      return abortedCode;
    }
    const given = isRetryError(error);
    const code = given ? (this.codeOf(error.cause) ?? INTERNAL) : INTERNAL;
    if (this.#overflow !== undefined && given && error.reason !== 'fatal') {
      this.#report({ method: this.method, attempts: error.attempts, code, reason: 'committed', message: this.#overflow, hedged: true });
      return code;
    }
    this.#report({
      method: this.method,
      attempts: given ? error.attempts : this.attempts,
      code,
      reason: given ? error.reason : 'fatal',
      message: error instanceof Error ? error.message : String(error),
      hedged: true,
    });
    return code;
  }

  /** The committed attempt ended with `code`, not OK: reported as a retried call's is (reason `'committed'`). */
  committedFailed(code: number, attempt: number, cancelled: boolean): void {
    if (cancelled) {
      this.#report({ method: this.method, attempts: this.attempts, code, reason: 'aborted', message: 'the caller cancelled the hedged call after it had committed', hedged: true });
      return;
    }
    this.#report({
      method: this.method,
      attempts: this.attempts,
      code,
      reason: 'committed',
      message: `hedged attempt ${attempt} had committed the call (its response had begun): gRFC A6 sends no more hedges, and its status is the call's`,
      hedged: true,
    });
  }

  #report(event: GrpcGiveUpEvent): void {
    const o = this.planner.options;
    callHook(o.onGiveUp, event, 'onGiveUp', o.onHookError);
  }
}
