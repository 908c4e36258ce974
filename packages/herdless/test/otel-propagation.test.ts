/**
 * herdless/otel on the wire: with the W3C propagator and a caller's span, every attempt's request
 * carries a traceparent whose span is that attempt's CLIENT span (a child of the caller's), for
 * fetch, undici, axios, grpc-js and Connect, against real loopback servers; beside
 * @opentelemetry/instrumentation-undici (fetch, undici) and -http (axios) there is exactly one
 * CLIENT span per physical request; a caller's abort is no error.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { constantBackoff } from 'herdless';
import { connectRetryInterceptor } from 'herdless/connect';
import { grpcRetryInterceptor } from 'herdless/grpc-js';
import { withRetry } from 'herdless/http';
import { otelTelemetry } from 'herdless/otel';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FlakyService, startConnectServer } from './support/connect-server.js';
import { FlakyClient, startFlakyServer, type FlakyClientInstance, type Outcome } from './support/grpc-server.js';
import { httpClients } from './support/http-clients.js';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});

let exporter: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
});
afterEach(async () => {
  await tracerProvider.shutdown();
});

/** The CLIENT spans, in the order of their attempts. */
function clientSpans(): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter((s) => s.kind === SpanKind.CLIENT)
    .sort((a, b) => Number(a.attributes['herdless.attempt'] ?? 0) - Number(b.attributes['herdless.attempt'] ?? 0));
}

/** Runs `fn` in a caller span; returns the caller's span id and trace id. */
async function asCaller(fn: () => Promise<unknown>): Promise<{ traceId: string; spanId: string }> {
  return tracerProvider.getTracer('test').startActiveSpan('caller', async (span) => {
    try {
      await fn();
    } finally {
      span.end();
    }
    return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
  });
}

/** The wire's traceparents against the attempts' spans: one each, in order, all children of the caller. */
function expectAttemptsOnTheWire(wire: readonly string[], caller: { traceId: string; spanId: string }, attempts: number): void {
  const spans = clientSpans();
  expect(spans).toHaveLength(attempts);
  expect(wire).toHaveLength(attempts);
  spans.forEach((span, i) => {
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.spanContext().traceId).toBe(caller.traceId);
    expect(span.instrumentationScope.name).toBe('herdless');
    expect(wire[i]).toBe(`00-${caller.traceId}-${span.spanContext().spanId}-01`);
  });
  // Three attempts, three different spans on the wire.
  expect(new Set(wire).size).toBe(attempts);
}

describe('HTTP attempts carry their own span context (W3C traceparent)', () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
  });

  for (const driver of httpClients(() => server.origin)) {
    it(`${driver.name}: 503, 503, 200 — three requests, each with its attempt's span as traceparent, the caller's span as parent`, async () => {
      const otel = otelTelemetry({ tracerProvider });
      const client = driver.make({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }), telemetry: otel });
      server.script([{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
      // A stale traceparent from the caller's own headers is replaced, not sent twice.
      const caller = await asCaller(async () => {
        const outcome = await client.send({ path: '/items/1', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
        expect(outcome.status).toBe(200);
      });
      await client.close();
      expectAttemptsOnTheWire(
        server.requests.map((r) => String(r.headers.traceparent)),
        caller,
        3,
      );
      expect(clientSpans().map((s) => s.attributes['http.request.resend_count'])).toEqual([0, 1, 2]);
    });
  }

  for (const driver of httpClients(() => server.origin)) {
    it(`${driver.name}: beforeAttempt's headers and the attempt's traceparent travel together on every attempt`, async () => {
      const otel = otelTelemetry({ tracerProvider });
      const client = driver.make({
        maxAttempts: 2,
        backoff: constantBackoff({ delayMs: 1 }),
        telemetry: otel,
        beforeAttempt: ({ attempt }) => ({ headers: { authorization: `Bearer t${attempt}` } }),
      });
      server.script([{ status: 503 }, { status: 200, body: 'ok' }]);
      const caller = await asCaller(async () => {
        expect((await client.send({ path: '/items/1' })).status).toBe(200);
      });
      await client.close();
      expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2']);
      expectAttemptsOnTheWire(
        server.requests.map((r) => String(r.headers.traceparent)),
        caller,
        2,
      );
    });
  }

  for (const driver of httpClients(() => server.origin)) {
    const which = driver.name === 'axios' ? '@opentelemetry/instrumentation-http' : '@opentelemetry/instrumentation-undici';
    it(`${driver.name} beside ${which}: one CLIENT span per physical request (herdless’s), and the wire names it`, async () => {
      const instrumentation = driver.name === 'axios' ? new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }) : new UndiciInstrumentation();
      instrumentation.setTracerProvider(tracerProvider);
      instrumentation.enable();
      // instrumentation-http patches node:http as it is required: require it once it listens.
      if (driver.name === 'axios') createRequire(import.meta.url)('node:http');
      try {
        const client = driver.make({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }), telemetry: otelTelemetry({ tracerProvider }) });
        server.script([{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
        const caller = await asCaller(async () => {
          expect((await client.send({ path: '/items/2' })).status).toBe(200);
        });
        await client.close();
        expectAttemptsOnTheWire(
          server.requests.map((r) => String(r.headers.traceparent)),
          caller,
          3,
        );
        // The control: without herdless's spans the instrumentation makes one span per request (it
        // is live, so the count above is herdless suppressing it, not the instrumentation missing).
        exporter.reset();
        const plain = driver.make({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }), telemetry: otelTelemetry({ tracerProvider, traces: false }) });
        server.script([{ status: 503 }, { status: 200, body: 'ok' }]);
        const second = await asCaller(async () => {
          expect((await plain.send({ path: '/items/3' })).status).toBe(200);
        });
        await plain.close();
        const spans = clientSpans();
        expect(spans).toHaveLength(2);
        expect(spans.every((s) => s.instrumentationScope.name === which)).toBe(true);
        expect(server.requests.slice(3).map((r) => String(r.headers.traceparent).split('-')[1])).toEqual([second.traceId, second.traceId]);
      } finally {
        instrumentation.disable();
      }
    });
  }

  it("a caller's abort: the attempt's span has no error.type and its status stays unset", async () => {
    const otel = otelTelemetry({ tracerProvider });
    const api = withRetry(fetch, { maxAttempts: 3, backoff: constantBackoff({ delayMs: 1 }), telemetry: otel });
    server.script([{ status: 503 }, { hang: true }]);
    const controller = new AbortController();
    await asCaller(async () => {
      const call = api(`${server.origin}/slow`, { signal: controller.signal });
      await server.waitForRequests(2);
      controller.abort(new DOMException('the user left', 'AbortError'));
      await expect(call).rejects.toThrow('the user left');
    });
    const spans = clientSpans();
    expect(spans).toHaveLength(2);
    expect(spans[0]!.attributes['error.type']).toBe('503');
    expect(spans[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[1]!.attributes['error.type']).toBeUndefined();
    expect(spans[1]!.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe('gRPC attempts carry their own span context in the metadata', () => {
  const UNAVAILABLE = grpc.status.UNAVAILABLE;
  const script: Outcome[] = [{ code: UNAVAILABLE }, { code: UNAVAILABLE }, { ok: true }];

  it('grpc-js: UNAVAILABLE, UNAVAILABLE, OK — three calls on the wire, each with its attempt span', async () => {
    const server = await startFlakyServer();
    const target = `127.0.0.1:${server.port}`;
    const interceptor = grpcRetryInterceptor({ target, maxAttempts: 3, random: { random: () => 0 }, telemetry: otelTelemetry({ tracerProvider }) });
    const client = new FlakyClient(target, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [interceptor] }) as FlakyClientInstance;
    try {
      const caller = await asCaller(
        () => new Promise<void>((resolve, reject) => client.unary({ id: 'g1', script }, {}, (error) => (error === null ? resolve() : reject(error)))),
      );
      expectAttemptsOnTheWire(
        server.arrivals.map((a) => a.traceparent ?? ''),
        caller,
        3,
      );
      const spans = clientSpans();
      expect(spans.map((s) => s.name)).toEqual(['test.Flaky/Unary', 'test.Flaky/Unary', 'test.Flaky/Unary']);
      expect(spans.map((s) => s.attributes['rpc.grpc.status_code'])).toEqual([14, 14, 0]);
      expect(spans[0]!.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'test.Flaky', 'rpc.method': 'Unary', 'herdless.name': 'test.Flaky' });
    } finally {
      client.close();
      await server.close();
    }
  });

  it('Connect (gRPC protocol): the same, through the request headers', async () => {
    const server = await startConnectServer();
    const interceptor = connectRetryInterceptor({ maxAttempts: 3, random: { random: () => 0 }, telemetry: otelTelemetry({ tracerProvider }) });
    const sessionManager = new Http2SessionManager(server.baseUrl);
    const transport = createGrpcTransport({ baseUrl: server.baseUrl, httpVersion: '2', sessionManager, interceptors: [interceptor] } as never);
    const client = createClient(FlakyService, transport) as unknown as { unary(req: { value: string }): Promise<unknown> };
    try {
      const caller = await asCaller(() => client.unary({ value: JSON.stringify({ id: 'c1', script }) }));
      expectAttemptsOnTheWire(
        server.arrivals.map((a) => a.traceparent ?? ''),
        caller,
        3,
      );
      expect(clientSpans()[0]!.attributes).toMatchObject({ 'rpc.system': 'connect_rpc', 'server.address': '127.0.0.1', 'server.port': Number(new URL(server.baseUrl).port) });
    } finally {
      sessionManager.abort();
      await server.close();
    }
  });
});

// The tracer is not a global: nothing here may leak into other files' spans.
afterAll(() => {
  expect(trace.getTracerProvider()).toBeDefined();
});
