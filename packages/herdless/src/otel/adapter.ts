import {
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  type ObservableResult,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { RetryBudget } from '../core/budget/budget.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Clock } from '../core/time.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { systemClock } from '../runtime/system-clock.js';
import type { AttemptEndEvent, AttemptStartEvent, TelemetryCall, TelemetryEvent, TelemetryObserver } from '../runtime/telemetry.js';
import { parseOtelOptions, type OtelTelemetryOptions } from './options.js';

/** The instrumentation scope of every meter and tracer this adapter makes. */
export const OTEL_SCOPE = 'herdless';

/**
 * Delay buckets in ms for `herdless.retry.delay` and `herdless.attempt.duration`: from a
 * retry at once to the one-minute `maxRetryAfterMs` default.
 */
const MS_BUCKETS = [0, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;

/** RFC 9110 methods and PATCH: any other is `_OTHER` (OTel HTTP semantic conventions, `http.request.method`). */
const KNOWN_METHODS: ReadonlySet<string> = /* @__PURE__ */ new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * The observer {@link otelTelemetry} returns: pass it as the `telemetry` option of `retry()`,
 * `createRetry()`, `withRetry()`, `circuitBreaker()`, the undici interceptor or the axios adapter,
 * and register budgets and breakers whose level and state should be observed.
 * @example
 * ```ts
 * const otel: OtelTelemetry = otelTelemetry();
 * const api = withRetry(fetch, { telemetry: otel });
 * ```
 */
export interface OtelTelemetry extends TelemetryObserver {
  /**
   * `false` when neither a meter provider nor a tracer provider was registered when the adapter
   * was made: the layers then skip it, and it costs nothing.
   */
  readonly enabled: boolean;
  /**
   * Observes a budget's level: `herdless.budget.tokens` (retry throttling's tokens, the AWS
   * quota's available capacity), `herdless.budget.retry_ratio` (a retry ratio budget's retries ÷
   * requests in its window), `herdless.budget.balance` (Finagle's retries that could be granted).
   * A budget with no level is accepted and observes nothing. Returns the function that stops it.
   *
   * @param name the `herdless.budget.name` attribute (e.g. the target service).
   * @param clock the clock the budget is driven with (windowed budgets read it). Default `systemClock`.
   * @throws InvalidOptionError for a budget that is not a RetryBudget, or an empty name.
   */
  observeBudget(budget: RetryBudget, name: string, clock?: Clock): () => void;
  /**
   * Observes a breaker's state as `herdless.breaker.state`: 1 for the current state, 0 for the
   * other two (attribute `herdless.breaker.state`), named by the breaker's `name`. Returns the
   * function that stops it.
   * @throws InvalidOptionError for anything but a CircuitBreaker.
   */
  observeBreaker(breaker: CircuitBreaker): () => void;
}

interface CallSpans {
  /** The caller's context when the call's first attempt started: every attempt's span is its child. */
  readonly parent: Context;
  readonly spans: Map<number, Span>;
}

/** True for the API's no-op meter: nothing registered, nothing recorded. */
function isNoopMeter(meter: Meter): boolean {
  return meter.constructor === createNoopMeter().constructor;
}

/** True for the API's no-op tracer provider, also behind the global proxy. */
function isNoopTracerProvider(provider: TracerProvider): boolean {
  const noop = new ProxyTracerProvider().getDelegate().constructor;
  const actual = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return actual.constructor === noop;
}

function layerAttributes(call: TelemetryCall): Attributes {
  const attributes: Attributes = { 'herdless.layer': call.layer };
  if (call.client !== undefined) attributes['herdless.client'] = call.client;
  return attributes;
}

function errorType(event: AttemptEndEvent): string | undefined {
  if (event.status !== undefined && event.status >= 400) return String(event.status);
  if (event.outcome === 'success') return undefined;
  if (event.outcome === 'timeout') return 'timeout';
  const error = event.error;
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return '_OTHER';
}

class OtelAdapter implements OtelTelemetry {
  readonly enabled: boolean;
  readonly #tracer: Tracer | undefined;
  readonly #calls = new WeakMap<TelemetryCall, CallSpans>();
  readonly #attempts: Counter;
  readonly #duration: Histogram;
  readonly #retries: Counter;
  readonly #delay: Histogram;
  readonly #giveUps: Counter;
  readonly #refusals: Counter;
  readonly #throttled: Counter;
  readonly #hedges: Counter;
  readonly #transitions: Counter;
  readonly #rejections: Counter;
  readonly #shed: Counter;
  readonly #budgets = new Set<{ budget: RetryBudget; name: string; clock: Clock }>();
  readonly #breakers = new Set<CircuitBreaker>();

  constructor(options: OtelTelemetryOptions | undefined) {
    const config = parseOtelOptions(options);
    const meter = (config.meterProvider ?? metrics.getMeterProvider()).getMeter(OTEL_SCOPE);
    const tracerProvider = config.tracerProvider ?? trace.getTracerProvider();
    const tracing = config.traces && !isNoopTracerProvider(tracerProvider);
    this.#tracer = tracing ? tracerProvider.getTracer(OTEL_SCOPE) : undefined;
    this.enabled = tracing || !isNoopMeter(meter);

    this.#attempts = meter.createCounter('herdless.attempts', { unit: '{attempt}', description: 'Attempts sent (first tries and retries), by outcome.' });
    this.#duration = meter.createHistogram('herdless.attempt.duration', {
      unit: 'ms',
      description: 'How long each attempt took.',
      advice: { explicitBucketBoundaries: MS_BUCKETS },
    });
    this.#retries = meter.createCounter('herdless.retries', { unit: '{retry}', description: 'Retries scheduled, by the source of their delay.' });
    this.#delay = meter.createHistogram('herdless.retry.delay', {
      unit: 'ms',
      description: 'The wait before each retry.',
      advice: { explicitBucketBoundaries: MS_BUCKETS },
    });
    this.#giveUps = meter.createCounter('herdless.give_ups', { unit: '{call}', description: 'Calls that stopped without a result they accept, by reason.' });
    this.#refusals = meter.createCounter('herdless.budget.refusals', { unit: '{retry}', description: 'Retries a retry budget refused.' });
    this.#throttled = meter.createCounter('herdless.throttle.rejections', { unit: '{request}', description: 'Attempts adaptive throttling rejected locally (first tries and retries).' });
    this.#hedges = meter.createCounter('herdless.hedges', { unit: '{attempt}', description: 'Hedged attempts sent (beyond the first of a call), by trigger.' });
    this.#transitions = meter.createCounter('herdless.breaker.transitions', { unit: '{transition}', description: 'Circuit breaker state changes.' });
    this.#rejections = meter.createCounter('herdless.breaker.rejections', { unit: '{call}', description: 'Calls a circuit breaker refused.' });
    this.#shed = meter.createCounter('herdless.server.shed', { unit: '{request}', description: 'Requests a server shed (503 without running the handler).' });

    const tokens = meter.createObservableGauge('herdless.budget.tokens', { unit: '{token}', description: "A token budget's tokens (retry throttling; the AWS retry quota's capacity)." });
    const ratio = meter.createObservableGauge('herdless.budget.retry_ratio', { unit: '1', description: "A retry ratio budget's retries ÷ requests in its window." });
    const balance = meter.createObservableGauge('herdless.budget.balance', { unit: '{retry}', description: "Retries a Finagle budget could grant now." });
    tokens.addCallback((result) => this.#observeBudgets(result, 'tokens'));
    ratio.addCallback((result) => this.#observeBudgets(result, 'ratio'));
    balance.addCallback((result) => this.#observeBudgets(result, 'balance'));
    const state = meter.createObservableGauge('herdless.breaker.state', { unit: '1', description: 'Circuit breaker state: 1 for the current state, 0 for the others.' });
    state.addCallback((result) => {
      for (const breaker of this.#breakers) {
        const now = breaker.state;
        for (const s of BREAKER_STATES) result.observe(s === now ? 1 : 0, { 'herdless.breaker.name': breaker.name, 'herdless.breaker.state': s });
      }
    });
  }

  #observeBudgets(result: ObservableResult, measure: 'tokens' | 'ratio' | 'balance'): void {
    for (const { budget, name, clock } of this.#budgets) {
      const value = budgetLevel(budget, measure, clock);
      if (value !== undefined) result.observe(value, { 'herdless.budget.name': name, 'herdless.budget.kind': budget.name });
    }
  }

  onEvent(event: TelemetryEvent): void {
    switch (event.type) {
      case 'attempt-start':
        if (this.#tracer !== undefined && event.call.layer === 'http') this.#startSpan(this.#tracer, event);
        return;
      case 'attempt-end': {
        const attributes = layerAttributes(event.call);
        attributes['herdless.outcome'] = event.outcome;
        if (event.status !== undefined) attributes[event.call.layer === 'grpc' ? 'rpc.grpc.status_code' : 'http.response.status_code'] = event.status;
        this.#attempts.add(1, attributes);
        this.#duration.record(event.durationMs, attributes);
        this.#endSpan(event);
        return;
      }
      case 'retry': {
        const attributes = layerAttributes(event.call);
        attributes['herdless.delay.source'] = event.delaySource;
        this.#retries.add(1, attributes);
        this.#delay.record(event.delayMs, attributes);
        if (this.#tracer !== undefined) trace.getActiveSpan()?.addEvent('herdless.retry', { 'herdless.attempt': event.attempt, 'herdless.delay_ms': event.delayMs, 'herdless.delay.source': event.delaySource });
        return;
      }
      case 'give-up': {
        const attributes = layerAttributes(event.call);
        attributes['herdless.give_up.reason'] = event.reason;
        this.#giveUps.add(1, attributes);
        if (this.#tracer !== undefined) trace.getActiveSpan()?.addEvent('herdless.give_up', { 'herdless.give_up.reason': event.reason, 'herdless.attempts': event.attempts });
        return;
      }
      case 'budget-refusal':
        this.#refusals.add(1, { ...layerAttributes(event.call), 'herdless.budget.kind': event.budget });
        return;
      case 'throttle-rejection':
        this.#throttled.add(1, { ...layerAttributes(event.call), 'herdless.throttle.kind': event.throttle, 'herdless.retry': event.attempt > 1 });
        return;
      case 'breaker-state':
        this.#transitions.add(
          1,
          event.cause === undefined
            ? { 'herdless.breaker.name': event.breaker, 'herdless.breaker.from': event.from, 'herdless.breaker.to': event.to }
            : { 'herdless.breaker.name': event.breaker, 'herdless.breaker.from': event.from, 'herdless.breaker.to': event.to, 'herdless.breaker.cause': event.cause },
        );
        return;
      case 'breaker-rejection':
        this.#rejections.add(1, { 'herdless.breaker.name': event.breaker, 'herdless.breaker.state': event.state });
        return;
      case 'hedge':
        this.#hedges.add(1, { ...layerAttributes(event.call), 'herdless.hedge.trigger': event.trigger });
        if (this.#tracer !== undefined) trace.getActiveSpan()?.addEvent('herdless.hedge', { 'herdless.attempt': event.attempt, 'herdless.hedge.trigger': event.trigger });
        return;
      case 'shed':
        this.#shed.add(1, { 'herdless.layer': event.layer, 'herdless.shed.reason': event.reason, 'herdless.retry': event.retry, 'herdless.do_not_retry': event.doNotRetry });
        return;
    }
  }

  /** An HTTP client span per attempt (OTel HTTP semantic conventions), a child of the caller's span. */
  #startSpan(tracer: Tracer, event: AttemptStartEvent): void {
    const call = event.call;
    let entry = this.#calls.get(call);
    if (entry === undefined) {
      entry = { parent: context.active(), spans: new Map() };
      this.#calls.set(call, entry);
    }
    const method = call.method ?? 'GET';
    const known = KNOWN_METHODS.has(method);
    const attributes: Attributes = {
      'http.request.method': known ? method : '_OTHER',
      'http.request.resend_count': event.attempt - 1,
    };
    if (!known) attributes['http.request.method_original'] = method;
    if (call.url !== undefined) {
      attributes['url.full'] = call.url;
      try {
        const url = new URL(call.url);
        attributes['server.address'] = url.hostname;
        attributes['server.port'] = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
      } catch {
        // Not an absolute URL: url.full alone.
      }
    }
    if (call.client !== undefined) attributes['herdless.client'] = call.client;
    const span = tracer.startSpan(known ? method : 'HTTP', { kind: SpanKind.CLIENT, attributes }, entry.parent);
    entry.spans.set(event.attempt, span);
  }

  #endSpan(event: AttemptEndEvent): void {
    const entry = this.#calls.get(event.call);
    const span = entry?.spans.get(event.attempt);
    if (span === undefined) return;
    entry!.spans.delete(event.attempt);
    if (event.status !== undefined) span.setAttribute('http.response.status_code', event.status);
    const type = errorType(event);
    if (type !== undefined) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  observeBudget(budget: RetryBudget, name: string, clock: Clock = systemClock): () => void {
    if (typeof budget !== 'object' || budget === null || typeof budget.allowRetry !== 'function') {
      throw new InvalidOptionError('otelTelemetry.observeBudget', 'budget', budget, 'must be a RetryBudget');
    }
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError('otelTelemetry.observeBudget', 'name', name, 'must be a non-empty string');
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
      throw new InvalidOptionError('otelTelemetry.observeBudget', 'clock', clock, 'must be a Clock ({ now(): number })');
    }
    const entry = { budget, name, clock };
    this.#budgets.add(entry);
    return () => void this.#budgets.delete(entry);
  }

  observeBreaker(breaker: CircuitBreaker): () => void {
    if (typeof breaker !== 'object' || breaker === null || typeof (breaker as CircuitBreaker).execute !== 'function' || typeof breaker.name !== 'string') {
      throw new InvalidOptionError('otelTelemetry.observeBreaker', 'breaker', breaker, 'must be a CircuitBreaker');
    }
    this.#breakers.add(breaker);
    return () => void this.#breakers.delete(breaker);
  }
}

/** A budget's level for one gauge, or `undefined` when the budget has none of that kind. */
function budgetLevel(budget: RetryBudget, measure: 'tokens' | 'ratio' | 'balance', clock: Clock): number | undefined {
  const b = budget as unknown as Record<string, unknown>;
  switch (measure) {
    case 'tokens':
      if (budget.name === 'retry throttling' && typeof b.tokens === 'number') return b.tokens;
      if (budget.name === 'aws retry quota' && typeof b.available === 'number') return b.available;
      return undefined;
    case 'ratio': {
      if (typeof b.requestsInWindow !== 'function' || typeof b.retriesInWindow !== 'function') return undefined;
      const now = clock.now();
      const requests = (b.requestsInWindow as (now: number) => number).call(budget, now);
      const retries = (b.retriesInWindow as (now: number) => number).call(budget, now);
      return requests === 0 ? 0 : retries / requests;
    }
    case 'balance':
      return typeof b.balance === 'function' ? (b.balance as (now: number) => number).call(budget, clock.now()) : undefined;
  }
}

/**
 * An OpenTelemetry adapter for herdless's telemetry events, on `@opentelemetry/api` only (the SDK
 * is yours). Give it as the `telemetry` option of any layer.
 *
 * Metrics (meter `herdless`; units per the OTel conventions, UCUM):
 * | instrument | kind | unit | attributes |
 * |---|---|---|---|
 * | `herdless.attempts` | counter | `{attempt}` | `herdless.layer`, `herdless.client`, `herdless.outcome`, `http.response.status_code` (gRPC: `rpc.grpc.status_code`) |
 * | `herdless.attempt.duration` | histogram | `ms` | the same |
 * | `herdless.retries` | counter | `{retry}` | `herdless.layer`, `herdless.client`, `herdless.delay.source` (`backoff`, `server-hint`, `pushback`) |
 * | `herdless.retry.delay` | histogram | `ms` | the same |
 * | `herdless.give_ups` | counter | `{call}` | `herdless.layer`, `herdless.client`, `herdless.give_up.reason` |
 * | `herdless.budget.refusals` | counter | `{retry}` | `herdless.layer`, `herdless.budget.kind` |
 * | `herdless.throttle.rejections` | counter | `{request}` | `herdless.layer`, `herdless.throttle.kind`, `herdless.retry` |
 * | `herdless.budget.tokens`, `.retry_ratio`, `.balance` | gauge | `{token}`, `1`, `{retry}` | `herdless.budget.name`, `herdless.budget.kind` (see `observeBudget`) |
 * | `herdless.breaker.state` | gauge | `1` | `herdless.breaker.name`, `herdless.breaker.state` (see `observeBreaker`) |
 * | `herdless.breaker.transitions` | counter | `{transition}` | `herdless.breaker.name`, `.from`, `.to` |
 * | `herdless.breaker.rejections` | counter | `{call}` | `herdless.breaker.name`, `herdless.breaker.state` |
 * | `herdless.server.shed` | counter | `{request}` | `herdless.layer`, `herdless.shed.reason`, `herdless.retry`, `herdless.do_not_retry` |
 *
 * Traces (OTel HTTP semantic conventions): every attempt of an HTTP layer (the retrying fetch, the
 * undici interceptor, the axios adapter) is its own `CLIENT` span named by the method, a child of
 * the span that was active when the call started, with `http.request.method`, `url.full`,
 * `server.address`, `server.port`, `http.request.resend_count` (0 on the first try, then 1, 2…),
 * `http.response.status_code`, and `error.type` (the status for ≥ 400, else the error's code or
 * name, or `timeout`) with an error status. Retries and give-ups are also span events
 * (`herdless.retry`, `herdless.give_up`) on the active span.
 *
 * With no provider registered (and none passed) the adapter is `enabled: false` and every layer
 * skips it: it costs nothing. Make it after the SDK is registered (as instrumentations are).
 *
 * @throws InvalidOptionError for an invalid option (names the field and the value).
 * @example
 * ```ts
 * import { otelTelemetry } from 'herdless/otel';
 * const otel = otelTelemetry(); // after the OpenTelemetry SDK has started
 * const budget = retryThrottlingBudget();
 * otel.observeBudget(budget, 'payments');
 * const api = withRetry(fetch, { budget, telemetry: otel });
 * ```
 */
export function otelTelemetry(options?: OtelTelemetryOptions): OtelTelemetry {
  return new OtelAdapter(options);
}
