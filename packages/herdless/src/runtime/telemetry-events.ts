import type { BreakerState } from '../core/breaker/events.js';
import type { GiveUpReason } from '../core/retry/errors.js';

// The shapes of what herdless reports: one discriminated union every layer emits through, so one
// observer (herdless/otel's) serves them all. The delivery is telemetry.ts; this file is types only.

/**
 * The layer that reported an event: `'retry'` (`retry()` / `createRetry()`), `'hedge'` (`hedge()`), `'http'` (the retrying
 * fetch, the undici interceptor, the axios adapter), `'breaker'`, `'server'` (load shedding) or
 * `'grpc'` (the gRPC interceptors).
 * @example
 * ```ts
 * const layer: TelemetryLayer = 'http';
 * ```
 */
export type TelemetryLayer = 'retry' | 'hedge' | 'http' | 'breaker' | 'server' | 'grpc';

/**
 * One logical call, the same object in every event of that call (compare it by identity to tie
 * an attempt's start to its end). HTTP layers fill in the request.
 * @example
 * ```ts
 * const spans = new WeakMap<TelemetryCall, Span>();
 * ```
 */
export interface TelemetryCall {
  readonly layer: TelemetryLayer;
  /** The client that made the call: `'fetch'`, `'undici'`, `'axios'`, `'grpc-js'`, `'connect'`; absent for `retry()`. */
  readonly client?: string;
  /** The request method, upper-cased (HTTP layers), or the gRPC method's path (`/package.Service/Method`). */
  readonly method?: string;
  /** The request URL (HTTP layers; Connect's, for the gRPC layer). */
  readonly url?: string;
  /**
   * The dependency the call goes to, so that two dependencies' retries are told apart: the `name`
   * option of the layer, else for HTTP the URL's host (`api.example.com:8443`), for gRPC the
   * service (`helloworld.Greeter`); absent for a `retry()` without `name`.
   */
  readonly name?: string;
}

/**
 * How an attempt carries its trace context, handed back by an observer's `attemptContext`: the
 * layer writes the headers `inject` gives into the attempt's request (HTTP headers, gRPC metadata)
 * and sends it inside `run`, so that whatever runs during the send (a client instrumentation, your
 * interceptors) sees the attempt as the active context.
 * @example
 * ```ts
 * const headers = new Headers();
 * scope.inject((name, value) => headers.set(name, value));
 * const response = await scope.run(() => fetch(url, { headers }));
 * ```
 */
export interface AttemptContext {
  /** Writes the attempt's propagation fields (e.g. W3C `traceparent`, `tracestate`, `baggage`) with `set`. */
  inject(set: (name: string, value: string) => void): void;
  /** Runs `send` (the attempt's request) inside the attempt's context and returns what it returns. */
  run<T>(send: () => T): T;
}

/**
 * How an attempt ended: `'success'` (a value; for HTTP a response the call accepts, a 404
 * included), `'failure'` (it threw or rejected, or for HTTP answered with a retried status such as
 * 503), `'timeout'` (`attemptTimeoutMs` or the deadline cut it short) or `'aborted'` (the caller's
 * signal).
 * @example
 * ```ts
 * const outcome: AttemptOutcome = 'failure';
 * ```
 */
export type AttemptOutcome = 'success' | 'failure' | 'timeout' | 'aborted';

/**
 * Where a retry's wait came from: the backoff, a server hint (`Retry-After`, `retry-after-ms`, an
 * error's `retryAfterMs`) or gRPC pushback (`grpc-retry-pushback-ms`, gRFC A6).
 * @example
 * ```ts
 * const source: DelaySource = 'server-hint';
 * ```
 */
export type DelaySource = 'backoff' | 'server-hint' | 'pushback';

/** An attempt is about to be sent. */
export interface AttemptStartEvent {
  readonly type: 'attempt-start';
  readonly call: TelemetryCall;
  /** From 1; `attempt - 1` is OTel's `http.request.resend_count`. */
  readonly attempt: number;
}

/** An attempt ended. */
export interface AttemptEndEvent {
  readonly type: 'attempt-end';
  readonly call: TelemetryCall;
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** From the attempt's start to its end, in ms on the layer's clock. */
  readonly durationMs: number;
  /** The response status: HTTP's (when a response arrived), or the gRPC status code. */
  readonly status?: number;
  /** What the attempt threw (outcomes other than `'success'`; for a retried status, its `HttpStatusError`). */
  readonly error?: unknown;
}

/** A failed attempt will be retried after `delayMs` ms. */
export interface RetryScheduledEvent {
  readonly type: 'retry';
  readonly call: TelemetryCall;
  /** The attempt that failed. */
  readonly attempt: number;
  /** The wait before the next attempt, in ms. */
  readonly delayMs: number;
  readonly delaySource: DelaySource;
  readonly error: unknown;
}

/** The call stopped without a result it accepts. */
export interface GiveUpTelemetryEvent {
  readonly type: 'give-up';
  readonly call: TelemetryCall;
  /** Why; `'committed'` is gRPC's commit rule (gRFC A6: no retry once the response has begun). */
  readonly reason: GiveUpReason | 'committed';
  /** Attempts sent, the first included. */
  readonly attempts: number;
  /** The status of the response returned with the give-up (HTTP layers), or the last gRPC status code. */
  readonly status?: number;
  readonly error: unknown;
}

/** A retry budget refused a retry (the call then gives up with reason `'budget'`). */
export interface BudgetRefusalEvent {
  readonly type: 'budget-refusal';
  readonly call: TelemetryCall;
  /** The budget's kind (its `name`), e.g. `'retry throttling'`. */
  readonly budget: string;
  /** The attempt whose retry was refused. */
  readonly attempt: number;
}

/**
 * Adaptive throttling rejected an attempt locally: the attempt was not sent. A retried call then
 * gives up with reason `'throttled'`; a hedged call whose hedge was rejected sends no more hedges,
 * and its attempts in flight go on (it gives up with `'throttled'` only if they all fail).
 */
export interface ThrottleRejectionEvent {
  readonly type: 'throttle-rejection';
  readonly call: TelemetryCall;
  /** The throttle's kind (its `name`), e.g. `'adaptive throttling'`. */
  readonly throttle: string;
  /** The attempt that was rejected (1: the first try). */
  readonly attempt: number;
}

/**
 * A hedged call sent one more attempt (`hedge()`): its first attempt had not answered after the hedge
 * delay (`trigger` `'delay'`), or an attempt failed with a non-fatal failure (`'failure'`: the next
 * hedge goes at once, or after the server's hint).
 */
export interface HedgeScheduledEvent {
  readonly type: 'hedge';
  readonly call: TelemetryCall;
  /** The hedge's attempt number, from 2. */
  readonly attempt: number;
  readonly trigger: 'delay' | 'failure';
  /** How long after the call's start it was sent, in ms on the layer's clock. */
  readonly afterMs: number;
}

/** A circuit breaker changed state. */
export interface BreakerStateEvent {
  readonly type: 'breaker-state';
  /** The breaker's `name` option (default `'default'`). */
  readonly breaker: string;
  readonly from: BreakerState;
  readonly to: BreakerState;
  /** When, in ms on the breaker's clock. */
  readonly at: number;
  /**
   * Set when a person or a program moved the breaker by hand, not its counts or timers:
   * `'isolate'` (forced open), `'release'` (the last isolation ended: half-open) or `'reset'`
   * (closed as new; `from` may then equal `to`).
   */
  readonly cause?: 'isolate' | 'release' | 'reset';
}

/** A circuit breaker refused a call (open, or half-open with its trial slots taken). */
export interface BreakerRejectionEvent {
  readonly type: 'breaker-rejection';
  readonly breaker: string;
  readonly state: BreakerState;
  /** True when the breaker refused because it is isolated (`isolate()`). */
  readonly isolated?: boolean;
}

/** A server shed a request (answered 503 without running its handler). */
export interface ShedEvent {
  readonly type: 'shed';
  readonly layer: TelemetryLayer;
  /** Why: `'queue-full'` (the in-flight limit reached and no room to queue), `'queue-timeout'`, or `'event-loop-delay'` (`maxEventLoopDelayMs`). */
  readonly reason: string;
  /** The request was itself a retry (its attempt header said ≥ 2). */
  readonly retry: boolean;
  /** The answer said "overloaded; don't retry" (`X-Herdless-Retry: no`). */
  readonly doNotRetry: boolean;
}

/**
 * Everything herdless reports, one discriminated union (`type`). Every layer reports through the
 * same shapes, so one observer (such as `herdless/otel`'s) serves them all.
 * @example
 * ```ts
 * const log: TelemetryObserver = { onEvent: (e: TelemetryEvent) => { if (e.type === 'give-up') console.warn(e.reason); } };
 * ```
 */
export type TelemetryEvent =
  | AttemptStartEvent
  | AttemptEndEvent
  | RetryScheduledEvent
  | GiveUpTelemetryEvent
  | BudgetRefusalEvent
  | ThrottleRejectionEvent
  | HedgeScheduledEvent
  | BreakerStateEvent
  | BreakerRejectionEvent
  | ShedEvent;

/**
 * Receives every event of the layers it is given to (the `telemetry` option of `retry()`,
 * `createRetry()`, `withRetry()`, `circuitBreaker()`, the undici and axios adapters). An observer:
 * called synchronously, never awaited; a throw or a rejected promise is reported to `onHookError`
 * (hook name `'telemetry'`) and changes nothing. Without an observer no event object is built.
 * @example
 * ```ts
 * const counts = new Map<string, number>();
 * const observer: TelemetryObserver = { onEvent: (e) => counts.set(e.type, (counts.get(e.type) ?? 0) + 1) };
 * await retry(op, { telemetry: observer });
 * ```
 */
export interface TelemetryObserver {
  onEvent(event: TelemetryEvent): unknown;
  /**
   * Called right after each `attempt-start` event of a layer that sends requests (HTTP and gRPC):
   * how the attempt carries its trace context, or `undefined` for nothing. `herdless/otel` returns
   * the attempt's span context (propagated with the registered propagator). A throw is reported
   * (`onHookError`, hook name `'telemetry'`) and the attempt goes out without a context.
   */
  attemptContext?(event: AttemptStartEvent): AttemptContext | undefined;
  /**
   * `false`: the observer records nothing (e.g. no OpenTelemetry provider is registered), so the
   * layers skip it — read once, when the layer's options are read. Default `true`.
   */
  readonly enabled?: boolean;
}
