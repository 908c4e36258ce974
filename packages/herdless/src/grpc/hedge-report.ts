import { isCircuitOpenError, type CircuitOpenError } from '../core/breaker/circuit-open-error.js';
import { isRetryError } from '../core/retry/errors.js';
import type { BreakerSettlement, CircuitBreaker } from '../runtime/breaker.js';
import { HEDGE_LOAD_FAILURE, HEDGE_REPORT, type HedgeEvent, type HedgeOptions } from '../runtime/hedge.js';
import { callHook } from '../runtime/hooks.js';
import { grpcServiceOf, LOAD_STATUSES } from './call-retry.js';
import type { GrpcGiveUpEvent, GrpcMethodPlan, GrpcRetryPlanner } from './interceptor-options.js';
import type { CallRetryBuffer } from './retry-buffer.js';

/** gRPC's DEADLINE_EXCEEDED and INTERNAL codes (the interceptors' own numbering is gRPC's). */
const DEADLINE_EXCEEDED = 4;
const INTERNAL = 13;
const UNAVAILABLE = 14;

/** @internal What a hedged call that adaptive throttling refused before its first attempt ends with (UNAVAILABLE), as a retried call does. */
export const THROTTLED_DETAILS = 'adaptive throttling rejected the call locally';

/**
 * @internal Whether `hedge()`'s give-up is adaptive throttling's refusal of the first attempt: the
 * call was never sent, and ends with UNAVAILABLE ({@link THROTTLED_DETAILS}).
 */
export function isThrottledUnsent(error: unknown): boolean {
  return isRetryError(error) && error.reason === 'throttled' && error.attempts === 0;
}

/** @internal Gives an attempt's breaker permit back, once: how the attempt ended. */
export type BreakerTicket = (settlement: BreakerSettlement) => void;

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
    private readonly url: string | undefined,
    /** The server name's breaker (the `breaker` option), which every attempt goes through. */
    private readonly breaker: CircuitBreaker | undefined,
  ) {}

  /**
   * Asks the breaker (if any) to admit the next attempt: the function that gives its permit back,
   * or the `CircuitOpenError` that refuses it — the attempt is then not sent, and `hedge()` stops
   * hedging (an open circuit, reason `'circuit-open'`); the call ends with UNAVAILABLE if nothing
   * else is in flight.
   */
  acquire(): BreakerTicket | CircuitOpenError | undefined {
    const breaker = this.breaker;
    if (breaker === undefined) return undefined;
    const permit = breaker.tryAcquire();
    if (isCircuitOpenError(permit)) return permit;
    let settled = false;
    return (settlement) => {
      if (settled) return;
      settled = true;
      try {
        breaker.settle(permit, settlement);
      } catch {
        // The breaker's own classifier threw: the permit was given back uncounted, and the call's
        // outcome must still reach the caller.
      }
    };
  }

  /** The status code of a failure, for the hooks: the attempt's gRPC code, UNAVAILABLE for an open circuit. */
  #codeOfFailure(error: unknown): number | undefined {
    return isCircuitOpenError(error) ? UNAVAILABLE : this.codeOf(error);
  }

  /**
   * Holds `size` more serialized bytes of the request for replay by the hedges (gRFC A6, "Memory
   * Management (Buffering)"). False when they do not fit `perRpcBufferLimit`, or the interceptor's
   * `retryBufferSize`: the call is then committed — a request that does not fit before the first
   * attempt is sent once, never hedged; a request stream that outgrows it goes on on one attempt.
   */
  hold(size: number): boolean {
    if (this.#overflow !== undefined) return false;
    this.#buffer ??= this.planner.buffers.call();
    if (this.#buffer.hold(size)) return true;
    const { perRpcBufferLimit, retryBufferSize } = this.planner.buffers;
    this.#overflow = `the request outgrew the retry buffer (perRpcBufferLimit ${perRpcBufferLimit}, retryBufferSize ${retryBufferSize} bytes): gRFC A6 commits the call to one attempt, and no hedge follows`;
    return false;
  }

  /** The request outgrew the retry buffer: no hedge may follow. */
  get overflowed(): boolean {
    return this.#overflow !== undefined;
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
    if (planner.throttle !== undefined) {
      // Asked before every attempt, the first included, as for a retried call; a load status the
      // method does not hedge on (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) is still a rejection.
      options.throttle = planner.throttle;
      options.random = planner.random;
      (options as { [HEDGE_LOAD_FAILURE]?: (error: unknown) => boolean })[HEDGE_LOAD_FAILURE] = (error) => LOAD_STATUSES.has(this.codeOf(error) ?? -1);
    }
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
    const code = isThrottledUnsent(error) ? UNAVAILABLE : given ? (this.#codeOfFailure(error.cause) ?? INTERNAL) : INTERNAL;
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

  /**
   * The request outgrew the retry buffer while no attempt was in flight (between a failure and the
   * hedge its pushback delays): no attempt can follow, so the last status (`code`) ends the call.
   */
  overflowEnded(code: number): void {
    this.release();
    this.#report({ method: this.method, attempts: this.attempts, code, reason: 'committed', message: this.#overflow!, hedged: true });
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
      message:
        this.#overflow === undefined
          ? `hedged attempt ${attempt} had committed the call (its response had begun): gRFC A6 sends no more hedges, and its status is the call's`
          : `hedged attempt ${attempt} had committed the call (${this.#overflow}); its status is the call's`,
      hedged: true,
    });
  }

  #report(event: GrpcGiveUpEvent): void {
    const o = this.planner.options;
    callHook(o.onGiveUp, event, 'onGiveUp', o.onHookError);
  }
}
