/**
 * Hedged HTTP requests report through telemetry as the retrying ones do: the call carries the
 * client, the request method, the URL and the dependency name (layer `'hedge'`), every attempt's end
 * its response status, the give-up the status returned; herdless/otel turns each hedged attempt into
 * an HTTP CLIENT span (OTel HTTP conventions: http.request.method, url.full, server.address,
 * server.port, http.response.status_code, http.request.resend_count) whose context the attempt's
 * request carries (W3C traceparent). Real loopback servers; the hedges are started by a 503
 * (non-fatal: at once) under a 10 s hedge delay, so no event depends on the machine's speed.
 */
import { context, propagation, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider, MetricReader, type DataPoint, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import axios from 'axios';
import type { TelemetryEvent } from 'herdless';
import { hedgingAdapter } from 'herdless/axios';
import { withHedging } from 'herdless/http';
import { otelTelemetry } from 'herdless/otel';
import { hedgingInterceptor } from 'herdless/undici';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let server: ScriptedServer;
const agents: Agent[] = [];
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await server.close();
});

const HEDGE_DELAY_MS = 10_000;

/** The three hedging clients, each sending one GET to `url` and returning the final status. */
const clients = {
  fetch: async (url: string, telemetry: object) => {
    const res = await withHedging(fetch, { delayMs: HEDGE_DELAY_MS, telemetry, name: 'inventory' })(url);
    await res.arrayBuffer();
    return res.status;
  },
  undici: async (url: string, telemetry: object) => {
    const agent = new Agent();
    agents.push(agent);
    const res = await request(url, { dispatcher: agent.compose(hedgingInterceptor({ delayMs: HEDGE_DELAY_MS, telemetry, name: 'inventory' })) });
    await res.body.arrayBuffer();
    return res.statusCode;
  },
  axios: async (url: string, telemetry: object) => {
    const res = await axios.get(url, { adapter: hedgingAdapter({ delayMs: HEDGE_DELAY_MS, telemetry, name: 'inventory' }), validateStatus: () => true, responseType: 'text' });
    return res.status;
  },
} as const;

/** The events, with the call reduced to its fields (the call object is shared by every event of a call). */
function flatten(events: TelemetryEvent[]): unknown[] {
  return events.map((e) => {
    switch (e.type) {
      case 'attempt-start':
        return ['attempt-start', e.attempt];
      case 'attempt-end':
        return ['attempt-end', e.attempt, e.outcome, e.status];
      case 'hedge':
        return ['hedge', e.attempt, e.trigger];
      case 'give-up':
        return ['give-up', e.reason, e.attempts, e.status];
      default:
        return [e.type];
    }
  });
}

describe.each(Object.keys(clients) as (keyof typeof clients)[])('%s hedging: the request and its statuses in telemetry', (client) => {
  it('a 503, then a hedge answering 200: the call carries client, method, URL and name; each attempt its status', async () => {
    server.script([{ status: 503, body: 'busy' }, { status: 200, body: 'ok' }]);
    const events: TelemetryEvent[] = [];
    const url = `${server.origin}/stock/42?fields=all`;
    expect(await clients[client](url, { onEvent: (e: TelemetryEvent) => void events.push(e) })).toBe(200);
    expect(flatten(events)).toEqual([
      ['attempt-start', 1],
      ['attempt-end', 1, 'failure', 503],
      ['hedge', 2, 'failure'],
      ['attempt-start', 2],
      ['attempt-end', 2, 'success', 200],
    ]);
    const call = events[0]!.type === 'attempt-start' ? events[0]!.call : undefined;
    expect(call).toEqual({ layer: 'hedge', client, method: 'GET', url, name: 'inventory' });
    expect(events.every((e) => 'call' in e && e.call === call)).toBe(true);
    expect(server.requests.map((r) => r.url)).toEqual(['/stock/42?fields=all', '/stock/42?fields=all']);
  });

  it('a POST without an idempotency key is sent once, unhedged, and still reported', async () => {
    server.script([{ status: 503, body: 'busy' }]);
    const events: TelemetryEvent[] = [];
    const onEvent = (e: TelemetryEvent): void => void events.push(e);
    const url = `${server.origin}/orders`;
    let status: number;
    if (client === 'fetch') status = (await withHedging(fetch, { delayMs: HEDGE_DELAY_MS, telemetry: { onEvent } })(url, { method: 'POST', body: 'x' })).status;
    else if (client === 'undici') {
      const agent = new Agent();
      agents.push(agent);
      const res = await request(url, { method: 'POST', body: 'x', dispatcher: agent.compose(hedgingInterceptor({ delayMs: HEDGE_DELAY_MS, telemetry: { onEvent } })) });
      await res.body.arrayBuffer();
      status = res.statusCode;
    } else {
      status = (await axios.post(url, 'x', { adapter: hedgingAdapter({ delayMs: HEDGE_DELAY_MS, telemetry: { onEvent } }), validateStatus: () => true })).status;
    }
    expect(status).toBe(503);
    expect(server.requests).toHaveLength(1);
    expect(flatten(events)).toEqual([
      ['attempt-start', 1],
      ['attempt-end', 1, 'failure', 503],
      ['give-up', 'fatal', 1, 503],
    ]);
    expect(events[0]!.type === 'attempt-start' && events[0]!.call).toEqual({ layer: 'hedge', client, method: 'POST', url, name: new URL(server.origin).host });
  });

  it('every attempt answers 503: the give-up carries the status returned', async () => {
    server.script([], { status: 503, body: 'busy' });
    const events: TelemetryEvent[] = [];
    expect(await clients[client](`${server.origin}/stock/7`, { onEvent: (e: TelemetryEvent) => void events.push(e) })).toBe(503);
    expect(flatten(events).slice(-2)).toEqual([
      ['attempt-end', 2, 'failure', 503],
      ['give-up', 'exhausted', 2, 503],
    ]);
  });
});

describe('withHedging(fetch) with herdless/otel: every hedged attempt is an HTTP CLIENT span', () => {
  let exporter: InMemorySpanExporter;
  let tracerProvider: BasicTracerProvider;
  let reader: TestReader;
  let meterProvider: MeterProvider;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    reader = new TestReader();
    meterProvider = new MeterProvider({ readers: [reader] });
  });
  afterEach(async () => {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  });

  it('the conventions’ attributes, the status per attempt, the traceparent on the wire, the duration metric', async () => {
    server.script([{ status: 503, body: 'busy' }, { status: 200, body: 'ok' }]);
    const otel = otelTelemetry({ tracerProvider, meterProvider });
    const url = `${server.origin}/stock/42`;
    const port = Number(new URL(server.origin).port);
    const res = await withHedging(fetch, { delayMs: HEDGE_DELAY_MS, telemetry: otel })(url);
    expect(await res.text()).toBe('ok');
    const spans = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.CLIENT)
      .sort((a, b) => Number(a.attributes['herdless.attempt']) - Number(b.attributes['herdless.attempt']));
    expect(spans.map((s) => s.name)).toEqual(['GET', 'GET']);
    expect(spans.map((s) => s.attributes)).toEqual([
      {
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': port,
        'url.scheme': 'http',
        'url.full': url,
        'http.request.resend_count': 0,
        'herdless.attempt': 1,
        'herdless.client': 'fetch',
        'herdless.name': `127.0.0.1:${port}`,
        'http.response.status_code': 503,
        'error.type': '503',
      },
      {
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': port,
        'url.scheme': 'http',
        'url.full': url,
        'http.request.resend_count': 1,
        'herdless.attempt': 2,
        'herdless.client': 'fetch',
        'herdless.name': `127.0.0.1:${port}`,
        'http.response.status_code': 200,
      },
    ]);
    // Each request carried its own attempt's span context.
    expect(server.requests.map((r) => r.headers.traceparent)).toEqual(spans.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`));
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const duration = metrics.find((m) => m.descriptor.name === 'http.client.request.duration')!;
    expect((duration.dataPoints as DataPoint<unknown>[]).map((p) => p.attributes['http.response.status_code']).sort()).toEqual([200, 503]);
    const hedges = metrics.find((m) => m.descriptor.name === 'herdless.hedges')!;
    expect((hedges.dataPoints as DataPoint<number>[]).map((p) => [p.value, p.attributes])).toEqual([
      [1, { 'herdless.layer': 'hedge', 'herdless.client': 'fetch', 'herdless.name': `127.0.0.1:${port}`, 'herdless.hedge.trigger': 'failure' }],
    ]);
  });

  it('a bare hedge() still makes no span: it sends no request of its own', async () => {
    const { hedge } = await import('herdless');
    const otel = otelTelemetry({ tracerProvider, meterProvider });
    expect(await hedge(() => 'value', { delayMs: 10, telemetry: otel })).toBe('value');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
