import { context, metrics, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type DataPoint, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, constantBackoff, consecutiveFailures, createRetry, finagleRetryBudget, hedge, isInvalidOptionError, retry, retryRatioBudget, retryThrottlingBudget } from 'herdless';
import { withRetry } from 'herdless/http';
import { otelTelemetry } from 'herdless/otel';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

/** A pull reader: the test collects when it wants to read. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let contextManager: AsyncLocalStorageContextManager;
beforeAll(() => {
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
});
afterAll(() => {
  context.disable();
});

let server: ScriptedServer;
let reader: TestReader;
let meterProvider: MeterProvider;
let exporter: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;
beforeEach(async () => {
  server = await startScriptedServer();
  reader = new TestReader();
  meterProvider = new MeterProvider({ readers: [reader] });
  exporter = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
});
afterEach(async () => {
  await server.close();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

/** Every data point of metric `name`, as [attributes, value]. */
async function points(name: string): Promise<Array<[Attributes, unknown]>> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  const out: Array<[Attributes, unknown]> = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue;
      for (const p of metric.dataPoints as DataPoint<unknown>[]) out.push([p.attributes, p.value]);
    }
  }
  return out;
}

/** The sum of a counter's points whose attributes include `where`. */
async function total(name: string, where: Attributes = {}): Promise<number> {
  let sum = 0;
  for (const [attributes, value] of await points(name)) {
    if (Object.entries(where).every(([k, v]) => attributes[k] === v)) sum += value as number;
  }
  return sum;
}

describe('herdless/otel with the OpenTelemetry SDK (a real loopback server)', () => {
  it('the scripted run — success; 503 twice then success; always 503 with maxAttempts 3 — counts what the server counted, and 7 client spans with resend_count 0,0,1,2,0,1,2', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider });
    expect(otel.enabled).toBe(true);
    const api = withRetry(fetch, { maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }), telemetry: otel });
    const s503 = { status: 503, body: 'busy' };
    const s200 = { status: 200, body: 'ok' };
    server.script([s200, s503, s503, s200, s503, s503, s503]);

    const tracer = tracerProvider.getTracer('test');
    const statuses = await tracer.startActiveSpan('caller', async (caller) => {
      const out: number[] = [];
      for (let call = 0; call < 3; call++) {
        const res = await api(`${server.origin}/items/${call}`);
        await res.text();
        out.push(res.status);
      }
      caller.end();
      return out;
    });
    expect(statuses).toEqual([200, 200, 503]);

    // The server's own counts.
    const requests = server.requests.length;
    const served503 = 5;
    expect(requests).toBe(7);
    const calls = 3;
    const gaveUp = statuses.filter((s) => s === 503).length;

    expect(await total('herdless.attempts')).toBe(requests);
    expect(await total('herdless.attempts', { 'herdless.outcome': 'failure', 'http.response.status_code': 503 })).toBe(served503);
    expect(await total('herdless.attempts', { 'herdless.outcome': 'success', 'http.response.status_code': 200 })).toBe(requests - served503);
    expect(await total('herdless.retries')).toBe(requests - calls);
    expect(await total('herdless.retries', { 'herdless.delay.source': 'backoff', 'herdless.layer': 'http', 'herdless.client': 'fetch' })).toBe(4);
    expect(await total('herdless.give_ups')).toBe(gaveUp);
    expect(await total('herdless.give_ups', { 'herdless.give_up.reason': 'exhausted' })).toBe(1);
    const delays = await points('herdless.retry.delay');
    expect(delays.map(([, v]) => (v as { count: number; sum: number }).count)).toEqual([4]);
    expect((delays[0]![1] as { sum: number }).sum).toBe(4);

    const spans = exporter.getFinishedSpans();
    const callerSpan = spans.find((s) => s.name === 'caller')!;
    const clientSpans = spans
      .filter((s) => s.name !== 'caller')
      .sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
    expect(clientSpans).toHaveLength(7);
    expect(clientSpans.map((s) => s.attributes['http.request.resend_count'])).toEqual([0, 0, 1, 2, 0, 1, 2]);
    expect(clientSpans.map((s) => s.attributes['http.response.status_code'])).toEqual([200, 503, 503, 200, 503, 503, 503]);
    for (const span of clientSpans as ReadableSpan[]) {
      expect(span.kind).toBe(2); // SpanKind.CLIENT
      expect(span.name).toBe('GET');
      expect(span.parentSpanContext?.spanId).toBe(callerSpan.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(callerSpan.spanContext().traceId);
      expect(span.attributes['http.request.method']).toBe('GET');
      expect(span.attributes['server.address']).toBe('127.0.0.1');
      expect(span.attributes['server.port']).toBe(Number(new URL(server.origin).port));
      expect(span.attributes['error.type']).toBe(span.attributes['http.response.status_code'] === 503 ? '503' : undefined);
    }
    expect(clientSpans.map((s) => s.attributes['url.full'])).toEqual([0, 1, 1, 1, 2, 2, 2].map((i) => `${server.origin}/items/${i}`));
    // The caller's span has the retries and the give-up as events.
    expect(callerSpan.events.map((e) => e.name)).toEqual(['herdless.retry', 'herdless.retry', 'herdless.retry', 'herdless.retry', 'herdless.give_up']);
  });

  it('a network failure is a span with error.type and no status; a Retry-After hint is a server-hint retry', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider });
    const api = withRetry(fetch, { maxAttempts: 3, backoff: constantBackoff(), telemetry: otel });
    server.script([{ reset: 'on-arrival' }, { status: 429, headers: { 'retry-after': '0' } }, { status: 200, body: 'ok' }]);
    const res = await api(`${server.origin}/x`);
    await res.text();
    expect(server.requests).toHaveLength(3);
    expect(await total('herdless.retries', { 'herdless.delay.source': 'backoff' })).toBe(1);
    expect(await total('herdless.retries', { 'herdless.delay.source': 'server-hint' })).toBe(1);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.attributes['http.response.status_code'])).toEqual([undefined, 429, 200]);
    expect(spans[0]!.attributes['error.type']).toBe('TypeError'); // fetch failed
    expect(spans[0]!.status.code).toBe(2); // ERROR
  });

  it('hedge(): hedges counted by trigger, the loser as an aborted attempt', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider });
    const clock = new ManualClock();
    const call = hedge(
      ({ attempt, signal }) =>
        new Promise((resolve, reject) => {
          const handle = clock.setTimeout(() => resolve(attempt), attempt === 1 ? 500 : 10);
          signal.addEventListener('abort', () => (clock.clearTimeout(handle), reject(signal.reason)));
        }),
      { delayMs: 50, clock, telemetry: otel },
    );
    await clock.advance(100);
    expect(await call).toBe(2);
    expect(await total('herdless.hedges', { 'herdless.layer': 'hedge', 'herdless.hedge.trigger': 'delay' })).toBe(1);
    expect(await total('herdless.attempts', { 'herdless.layer': 'hedge', 'herdless.outcome': 'aborted' })).toBe(1);
    expect(await total('herdless.attempts', { 'herdless.layer': 'hedge', 'herdless.outcome': 'success' })).toBe(1);
  });

  it('hedge() under a spent budget and a throttle: the refused hedges counted; the instruments that count hedged attempts say so', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider });
    const clock = new ManualClock();
    const budget = retryThrottlingBudget({ maxTokens: 2, tokenRatio: 0.1 });
    budget.onFailure(0);
    budget.onFailure(0); // no tokens left: every hedge is refused
    const call = hedge(() => new Promise((resolve) => clock.setTimeout(() => resolve('first'), 500)), { delayMs: 50, budget, clock, telemetry: otel });
    await clock.advance(600);
    expect(await call).toBe('first');
    expect(await total('herdless.budget.refusals', { 'herdless.layer': 'hedge', 'herdless.budget.kind': 'retry throttling' })).toBe(1);
    // A throttle that admits first tries only: the hedge is rejected locally, the first try goes on.
    const throttle = { name: 'adaptive throttling', admit: (_now: number, _rng: unknown, isRetry: boolean) => !isRetry, onAnswer: () => {} };
    const throttled = hedge(() => new Promise((resolve) => clock.setTimeout(() => resolve('first'), 500)), { delayMs: 50, throttle, clock, telemetry: otel });
    await clock.advance(600);
    expect(await throttled).toBe('first');
    expect(await total('herdless.throttle.rejections', { 'herdless.layer': 'hedge', 'herdless.retry': true })).toBe(1);
    expect(await total('herdless.hedges')).toBe(0);
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    const descriptions = new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.map((m) => [m.descriptor.name, m.descriptor.description] as const)));
    expect(Object.fromEntries(['herdless.calls', 'herdless.attempts', 'herdless.attempt.duration', 'herdless.budget.refusals', 'herdless.throttle.rejections'].map((name) => [name, descriptions.get(name)]))).toEqual({
      'herdless.calls': 'Logical calls, counted as their first attempt starts: herdless.attempts ÷ herdless.calls is the retry amplification (hedged attempts included).',
      'herdless.attempts': 'Attempts sent (first tries, retries and hedged attempts), by outcome.',
      'herdless.attempt.duration': 'How long each attempt took (first tries, retries and hedged attempts).',
      'herdless.budget.refusals': 'Retries and hedged attempts a retry budget refused.',
      'herdless.throttle.rejections': 'Attempts adaptive throttling rejected locally (first tries, retries and hedged attempts).',
    });
  });

  it('retry(), budgets and breakers: attempts, refusals, budget levels and breaker state', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider });
    const clock = new ManualClock();
    const budget = retryThrottlingBudget({ maxTokens: 4, tokenRatio: 0.1 });
    otel.observeBudget(budget, 'payments', clock);
    const ratio = retryRatioBudget({ ratio: 0.5 });
    otel.observeBudget(ratio, 'ratio', clock);
    const finagle = finagleRetryBudget();
    otel.observeBudget(finagle, 'finagle', clock);
    const withBudget = createRetry({ maxAttempts: 5, backoff: constantBackoff(), budget, clock, telemetry: otel });
    const failing = (): Promise<never> => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
    // 4 tokens: each failure costs 1; retries allowed while tokens > maxTokens / 2.
    await expect(withBudget(failing)).rejects.toMatchObject({ reason: 'budget' });
    expect(await total('herdless.attempts', { 'herdless.layer': 'retry', 'herdless.outcome': 'failure' })).toBe(2);
    expect(await total('herdless.budget.refusals', { 'herdless.budget.kind': 'retry throttling' })).toBe(1);
    expect(await total('herdless.give_ups', { 'herdless.give_up.reason': 'budget' })).toBe(1);
    expect(await points('herdless.budget.tokens')).toEqual([[{ 'herdless.budget.name': 'payments', 'herdless.budget.kind': 'retry throttling' }, 2]]);
    expect(await points('herdless.budget.retry_ratio')).toEqual([[{ 'herdless.budget.name': 'ratio', 'herdless.budget.kind': 'retry ratio' }, 0]]);
    expect((await points('herdless.budget.balance'))[0]![0]).toEqual({ 'herdless.budget.name': 'finagle', 'herdless.budget.kind': 'finagle' });

    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 1000, clock, telemetry: otel, name: 'db' });
    otel.observeBreaker(breaker);
    for (let i = 0; i < 2; i++) await expect(breaker.execute(failing)).rejects.toThrow('down');
    await expect(breaker.execute(() => 1)).rejects.toMatchObject({ code: 'ERR_HERDLESS_CIRCUIT_OPEN' });
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.name': 'db', 'herdless.breaker.to': 'open' })).toBe(1);
    expect(await total('herdless.breaker.rejections', { 'herdless.breaker.name': 'db' })).toBe(1);
    expect(await points('herdless.breaker.state')).toEqual([
      [{ 'herdless.breaker.name': 'db', 'herdless.breaker.state': 'closed' }, 0],
      [{ 'herdless.breaker.name': 'db', 'herdless.breaker.state': 'open' }, 1],
      [{ 'herdless.breaker.name': 'db', 'herdless.breaker.state': 'half-open' }, 0],
    ]);
    await clock.advance(1000);
    await breaker.execute(() => 1);
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.to': 'closed' })).toBe(1);
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.to': 'half-open' })).toBe(1);
    breaker.isolate();
    breaker.reset();
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.to': 'open', 'herdless.breaker.cause': 'isolate' })).toBe(1);
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.from': 'open', 'herdless.breaker.to': 'closed', 'herdless.breaker.cause': 'reset' })).toBe(1);
    expect(await total('herdless.breaker.transitions', { 'herdless.breaker.to': 'open' })).toBe(2);
    // retry() makes no spans (only HTTP attempts are client spans).
    expect(exporter.getFinishedSpans()).toEqual([]);
    await expect(retry(() => 1, { telemetry: otel })).resolves.toBe(1);
    expect(await total('herdless.attempts', { 'herdless.layer': 'retry', 'herdless.outcome': 'success' })).toBe(1);
  });

  it('with no provider registered it is disabled, and the layers skip it', async () => {
    // Nothing registered globally (the other tests pass their providers in): the API's own tracer
    // makes spans that record nothing, which is what otelTelemetry() detects.
    const probe = trace.getTracer('probe').startSpan('probe');
    expect(probe.isRecording()).toBe(false);
    probe.end();
    const otel = otelTelemetry();
    expect(otel.enabled).toBe(false);
    const onlyMetrics = otelTelemetry({ meterProvider, traces: false });
    expect(onlyMetrics.enabled).toBe(true);
    let seen = 0;
    const spy = { enabled: false, onEvent: () => void seen++ };
    await retry(() => 1, { telemetry: spy });
    await expect(retry(() => Promise.reject(new Error('x')), { telemetry: spy })).rejects.toThrow();
    expect(seen).toBe(0);
  });

  it('traces: false records metrics only: no spans, no span events', async () => {
    const otel = otelTelemetry({ meterProvider, tracerProvider, traces: false });
    const api = withRetry(fetch, { maxAttempts: 2, backoff: constantBackoff(), telemetry: otel });
    server.script([{ status: 503 }, { status: 200, body: 'ok' }]);
    await tracerProvider.getTracer('test').startActiveSpan('caller', async (caller) => {
      await (await api(`${server.origin}/`)).text();
      caller.end();
    });
    expect(await total('herdless.attempts')).toBe(2);
    expect(exporter.getFinishedSpans().map((s) => [s.name, s.events.length])).toEqual([['caller', 0]]);
  });

  it('the global providers, once registered, are what a new adapter uses', async () => {
    metrics.setGlobalMeterProvider(meterProvider);
    trace.setGlobalTracerProvider(tracerProvider);
    try {
      const otel = otelTelemetry();
      expect(otel.enabled).toBe(true);
      server.script([{ status: 200, body: 'ok' }]);
      await (await withRetry(fetch, { telemetry: otel })(`${server.origin}/`)).text();
      expect(await total('herdless.attempts', { 'herdless.outcome': 'success' })).toBe(1);
      expect(exporter.getFinishedSpans().map((s) => s.attributes['http.request.resend_count'])).toEqual([0]);
    } finally {
      metrics.disable();
      trace.disable();
    }
    expect(otelTelemetry().enabled).toBe(false);
  });

  it('bad options and registrations name the field and the value', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => otelTelemetry({ meterProvider: {} as never }), 'meterProvider'],
      [() => otelTelemetry({ tracerProvider: 1 as never }), 'tracerProvider'],
      [() => otelTelemetry({ traces: 'yes' as never }), 'traces'],
      [() => otelTelemetry({ meter: 1 } as never), 'meter'],
      [() => otelTelemetry({ meterProvider }).observeBudget({} as never, 'x'), 'budget'],
      [() => otelTelemetry({ meterProvider }).observeBudget(retryThrottlingBudget(), ''), 'name'],
      [() => otelTelemetry({ meterProvider }).observeBreaker({} as never), 'breaker'],
    ];
    for (const [make, field] of cases) {
      let error: unknown;
      try {
        make();
      } catch (e) {
        error = e;
      }
      expect(isInvalidOptionError(error), field).toBe(true);
      expect((error as { field: string }).field).toBe(field);
    }
  });
});
