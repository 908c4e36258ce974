import {
  context,
  createContextKey,
  createNoopMeter,
  metrics,
  propagation,
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
import type { AttemptContext, AttemptEndEvent, AttemptStartEvent, TelemetryCall, TelemetryEvent, TelemetryObserver } from '../runtime/telemetry.js';
import { parseOtelOptions, type OtelConfig, type OtelTelemetryOptions } from './options.js';
import { redactUrl } from './redact.js';
import { OTEL_SCOPE_VERSION } from './version.js';

/** The instrumentation scope of every meter and tracer this adapter makes. */
export const OTEL_SCOPE = 'herdless';

/**
 * Delay buckets in ms for `herdless.retry.delay` and `herdless.attempt.duration`: from a
 * retry at once to the one-minute `maxRetryAfterMs` default.
 */
const MS_BUCKETS = [0, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

/** `http.client.request.duration`'s buckets in seconds, as the OTel HTTP metrics conventions advise. */
const HTTP_DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * The suppress-tracing flag of `@opentelemetry/core` (`suppressTracing()`), made from its
 * well-known key: `createContextKey` is `Symbol.for(description)`, so this is the very key the SDK's
 * tracer and the HTTP instrumentations read, without depending on `@opentelemetry/core`.
 */
const SUPPRESS_TRACING_KEY = /* @__PURE__ */ createContextKey('OpenTelemetry SDK Context Key SUPPRESS_TRACING');

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
  /** The physical request's `http.client.request.duration` attributes, per attempt (HTTP layers). */
  readonly http: Map<number, Attributes>;
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

/** Sets `server.address` and `server.port` from an absolute URL (the scheme's port when none is given); returns the parsed URL, or `undefined` when it is not one. */
function addServer(attributes: Attributes, text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  attributes['server.address'] = url.hostname;
  attributes['server.port'] = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return url;
}

/** The RPC conventions' attributes of a gRPC attempt's span. */
function rpcAttributes(call: TelemetryCall): Attributes {
  const path = (call.method ?? '').replace(/^\//, '');
  const slash = path.lastIndexOf('/');
  const attributes: Attributes = { 'rpc.system': call.client === 'connect' ? 'connect_rpc' : 'grpc' };
  if (slash > 0) {
    attributes['rpc.service'] = path.slice(0, slash);
    attributes['rpc.method'] = path.slice(slash + 1);
  }
  if (call.url !== undefined) addServer(attributes, call.url);
  return attributes;
}

/**
 * Which conventions a call's attempts follow: `'http'` (the HTTP layers, and HTTP requests hedged by
 * `withHedging`, `hedgingInterceptor`, `hedgingAdapter`), `'rpc'` (the gRPC layers, and gRPC calls
 * hedged by a service config's `hedgingPolicy`), or `undefined` for the caller's own code
 * (`retry()`, a bare `hedge()`), which sends no request of its own.
 */
function protocolOf(call: TelemetryCall): 'http' | 'rpc' | undefined {
  switch (call.layer) {
    case 'http':
      return 'http';
    case 'grpc':
      return 'rpc';
    case 'hedge':
      if (call.client === undefined) return undefined;
      return call.client === 'grpc-js' || call.client === 'connect' ? 'rpc' : 'http';
    default:
      return undefined;
  }
}

function layerAttributes(call: TelemetryCall): Attributes {
  const attributes: Attributes = { 'herdless.layer': call.layer };
  if (call.client !== undefined) attributes['herdless.client'] = call.client;
  if (call.name !== undefined) attributes['herdless.name'] = call.name;
  return attributes;
}

/**
 * `error.type` of an ended attempt, or `undefined` for none. A cancellation the caller asked for
 * is no error (OTel HTTP span conventions: the status stays unset), whatever it threw.
 */
function errorType(event: AttemptEndEvent): string | undefined {
  if (event.outcome === 'aborted') return undefined;
  if (protocolOf(event.call) === 'rpc') return event.outcome === 'success' || event.status === undefined ? undefined : String(event.status);
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
  readonly #config: OtelConfig;
  readonly #calls = new WeakMap<TelemetryCall, CallSpans>();
  readonly #callCount: Counter;
  readonly #attempts: Counter;
  readonly #httpDuration: Histogram;
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
    this.#config = config;
    const meter = (config.meterProvider ?? metrics.getMeterProvider()).getMeter(OTEL_SCOPE, OTEL_SCOPE_VERSION);
    const tracerProvider = config.tracerProvider ?? trace.getTracerProvider();
    const tracing = config.traces && !isNoopTracerProvider(tracerProvider);
    this.#tracer = tracing ? tracerProvider.getTracer(OTEL_SCOPE, OTEL_SCOPE_VERSION) : undefined;
    this.enabled = tracing || !isNoopMeter(meter);

    this.#callCount = meter.createCounter('herdless.calls', {
      unit: '{call}',
      description: 'Logical calls, counted as their first attempt starts: herdless.attempts ÷ herdless.calls is the retry amplification (hedged attempts included).',
    });
    this.#httpDuration = meter.createHistogram('http.client.request.duration', {
      unit: 's',
      description: 'Duration of HTTP client requests: one per attempt, each a physical request (OTel HTTP metrics conventions).',
      advice: { explicitBucketBoundaries: HTTP_DURATION_BUCKETS_S },
    });
    this.#attempts = meter.createCounter('herdless.attempts', { unit: '{attempt}', description: 'Attempts sent (first tries, retries and hedged attempts), by outcome.' });
    this.#duration = meter.createHistogram('herdless.attempt.duration', {
      unit: 'ms',
      description: 'How long each attempt took (first tries, retries and hedged attempts).',
      advice: { explicitBucketBoundaries: MS_BUCKETS },
    });
    this.#retries = meter.createCounter('herdless.retries', { unit: '{retry}', description: 'Retries scheduled, by the source of their delay.' });
    this.#delay = meter.createHistogram('herdless.retry.delay', {
      unit: 'ms',
      description: 'The wait before each retry.',
      advice: { explicitBucketBoundaries: MS_BUCKETS },
    });
    this.#giveUps = meter.createCounter('herdless.give_ups', { unit: '{call}', description: 'Calls that stopped without a result they accept, by reason.' });
    this.#refusals = meter.createCounter('herdless.budget.refusals', { unit: '{retry}', description: 'Retries and hedged attempts a retry budget refused.' });
    this.#throttled = meter.createCounter('herdless.throttle.rejections', { unit: '{request}', description: 'Attempts adaptive throttling rejected locally (first tries, retries and hedged attempts).' });
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
        if (event.attempt === 1) this.#callCount.add(1, layerAttributes(event.call));
        if (protocolOf(event.call) !== undefined) this.#startAttempt(event);
        return;
      case 'attempt-end': {
        const attributes = layerAttributes(event.call);
        attributes['herdless.outcome'] = event.outcome;
        if (event.status !== undefined) attributes[protocolOf(event.call) === 'rpc' ? 'rpc.grpc.status_code' : 'http.response.status_code'] = event.status;
        this.#attempts.add(1, attributes);
        this.#duration.record(event.durationMs, attributes);
        this.#endAttempt(event);
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

  /**
   * An attempt of a layer that sends requests: its CLIENT span (HTTP or RPC conventions), a child of
   * the caller's span, and for HTTP the attributes its `http.client.request.duration` is recorded with.
   */
  #startAttempt(event: AttemptStartEvent): void {
    const call = event.call;
    const tracer = this.#tracer;
    const http = protocolOf(call) === 'http';
    if (tracer === undefined && !http) return;
    let entry = this.#calls.get(call);
    if (entry === undefined) {
      entry = { parent: context.active(), spans: new Map(), http: new Map() };
      this.#calls.set(call, entry);
    }
    const attributes = http ? this.#httpAttributes(call) : rpcAttributes(call);
    if (http) entry.http.set(event.attempt, { ...attributes });
    if (tracer === undefined) return;
    let name: string;
    if (http) {
      attributes['http.request.resend_count'] = event.attempt - 1;
      if (call.url !== undefined) attributes['url.full'] = this.#redact(call.url);
      name = attributes['http.request.method'] === '_OTHER' ? 'HTTP' : String(attributes['http.request.method']);
    } else {
      name = (call.method ?? '').replace(/^\//, '') || 'grpc';
    }
    attributes['herdless.attempt'] = event.attempt;
    if (call.client !== undefined) attributes['herdless.client'] = call.client;
    if (call.name !== undefined) attributes['herdless.name'] = call.name;
    entry.spans.set(event.attempt, tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, entry.parent));
  }

  /** The HTTP conventions' request attributes shared by the span and the duration metric. */
  #httpAttributes(call: TelemetryCall): Attributes {
    const method = call.method ?? 'GET';
    const known = KNOWN_METHODS.has(method);
    const attributes: Attributes = { 'http.request.method': known ? method : '_OTHER' };
    if (!known) attributes['http.request.method_original'] = method;
    if (call.url !== undefined) {
      const url = addServer(attributes, call.url);
      if (url !== undefined) attributes['url.scheme'] = url.protocol.slice(0, -1);
    }
    return attributes;
  }

  /** `url.full` as recorded: credentials and the listed query values redacted, then the user's hook. */
  #redact(url: string): string {
    const redacted = redactUrl(url, this.#config.redacted);
    const hook = this.#config.redactUrl;
    if (hook === undefined) return redacted;
    try {
      return String(hook(redacted));
    } catch {
      // Never leak what the hook was meant to hide: drop the query and the fragment.
      return redacted.replace(/[?#].*$/s, '');
    }
  }

  /**
   * The attempt's trace context: its span's, injected with the registered propagator; the send
   * runs in it, with other instrumentations suppressed unless `suppressInstrumentation` is false.
   */
  attemptContext(event: AttemptStartEvent): AttemptContext | undefined {
    const entry = this.#calls.get(event.call);
    const span = entry?.spans.get(event.attempt);
    if (span === undefined) return undefined;
    const traced = trace.setSpan(entry!.parent, span);
    const running = this.#config.suppressInstrumentation ? traced.setValue(SUPPRESS_TRACING_KEY, true) : traced;
    return {
      inject: (set) => propagation.inject(traced, undefined, { set: (_carrier, key, value) => set(key, value) }),
      run: (send) => context.with(running, send),
    };
  }

  #endAttempt(event: AttemptEndEvent): void {
    const entry = this.#calls.get(event.call);
    if (entry === undefined) return;
    const type = errorType(event);
    const http = entry.http.get(event.attempt);
    if (http !== undefined) {
      entry.http.delete(event.attempt);
      if (event.status !== undefined) http['http.response.status_code'] = event.status;
      if (type !== undefined) http['error.type'] = type;
      this.#httpDuration.record(event.durationMs / 1000, http);
    }
    const span = entry.spans.get(event.attempt);
    if (span === undefined) return;
    entry.spans.delete(event.attempt);
    if (event.status !== undefined) span.setAttribute(protocolOf(event.call) === 'rpc' ? 'rpc.grpc.status_code' : 'http.response.status_code', event.status);
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
 * Metrics (meter `herdless`, version {@link OTEL_SCOPE_VERSION}; units per the OTel conventions, UCUM):
 * | instrument | kind | unit | attributes |
 * |---|---|---|---|
 * | `herdless.calls` | counter | `{call}` | `herdless.layer`, `herdless.client`, `herdless.name` (logical calls, counted as their first attempt starts) |
 * | `herdless.attempts` | counter | `{attempt}` | the same, `herdless.outcome`, `http.response.status_code` (gRPC: `rpc.grpc.status_code`) |
 * | `herdless.attempt.duration` | histogram | `ms` | the same |
 * | `http.client.request.duration` | histogram | `s` | HTTP attempts, by the OTel HTTP metrics conventions |
 * | `herdless.retries` | counter | `{retry}` | `herdless.layer`, `herdless.client`, `herdless.name`, `herdless.delay.source` (`backoff`, `server-hint`, `pushback`) |
 * | `herdless.retry.delay` | histogram | `ms` | the same |
 * | `herdless.give_ups` | counter | `{call}` | `herdless.layer`, `herdless.client`, `herdless.name`, `herdless.give_up.reason` |
 * | `herdless.budget.refusals` | counter | `{retry}` | `herdless.layer`, `herdless.client`, `herdless.name`, `herdless.budget.kind` |
 * | `herdless.throttle.rejections` | counter | `{request}` | `herdless.layer`, `herdless.throttle.kind`, `herdless.retry` |
 * | `herdless.budget.tokens`, `.retry_ratio`, `.balance` | gauge | `{token}`, `1`, `{retry}` | `herdless.budget.name`, `herdless.budget.kind` (see `observeBudget`) |
 * | `herdless.breaker.state` | gauge | `1` | `herdless.breaker.name`, `herdless.breaker.state` (see `observeBreaker`) |
 * | `herdless.breaker.transitions` | counter | `{transition}` | `herdless.breaker.name`, `.from`, `.to` |
 * | `herdless.breaker.rejections` | counter | `{call}` | `herdless.breaker.name`, `herdless.breaker.state` |
 * | `herdless.server.shed` | counter | `{request}` | `herdless.layer`, `herdless.shed.reason`, `herdless.retry`, `herdless.do_not_retry` |
 *
 * Retry amplification is `herdless.attempts ÷ herdless.calls` per `herdless.name`; with
 * `herdless.layer` = `hedge`, the same ratio is hedging's load amplification.
 *
 * Traces (OTel HTTP and RPC semantic conventions): every attempt of an HTTP layer (the retrying
 * fetch, the undici interceptor, the axios adapter, and their hedging forms `withHedging`,
 * `hedgingInterceptor`, `hedgingAdapter`, whose calls are the layer `'hedge'`) or a gRPC
 * interceptor (retried or hedged) is its own `CLIENT` span,
 * a child of the span that was active when the call started, with `http.request.resend_count` (0
 * on the first try, then 1, 2…) or the `rpc.*` attributes. The attempt's request carries that
 * span's context (the registered propagator's fields, e.g. W3C `traceparent`, in the headers or
 * the gRPC metadata) and is sent inside it; other instrumentations' spans for the same request
 * (`@opentelemetry/instrumentation-undici`, `-http`) are suppressed unless
 * `suppressInstrumentation` is `false`, so each physical request has one CLIENT span. A failed
 * attempt has `error.type` and an error status; one the caller aborted has neither. `url.full` has
 * no credentials and the values of `DEFAULT_REDACTED_QUERY_PARAMETERS` are `REDACTED`.
 * Retries and give-ups are also span events (`herdless.retry`, `herdless.give_up`) on the active
 * span.
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
