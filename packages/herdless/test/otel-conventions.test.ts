/**
 * herdless/otel and the OTel semantic conventions: url.full redaction (table), the user's redaction
 * hook, http.client.request.duration in seconds, the instrumentation scope's name and version, and
 * the `name` option's validation.
 */
import { readFileSync } from 'node:fs';
import { MeterProvider, MetricReader, type DataPoint, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ManualClock, createRetry, retry, type TelemetryCall } from 'herdless';
import { connectRetryInterceptor } from 'herdless/connect';
import { grpcRetryInterceptor } from 'herdless/grpc-js';
import { withRetry } from 'herdless/http';
import { DEFAULT_REDACTED_QUERY_PARAMETERS, OTEL_SCOPE, OTEL_SCOPE_VERSION, otelTelemetry, type OtelTelemetryOptions } from 'herdless/otel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invalidOption } from './support/invalid-option.js';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

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

/** The url.full one attempt's span records for `url`. */
function recordedUrl(url: string, options: OtelTelemetryOptions = {}): unknown {
  exporter.reset();
  const otel = otelTelemetry({ tracerProvider, meterProvider, ...options });
  const call: TelemetryCall = { layer: 'http', client: 'fetch', method: 'GET', url };
  otel.onEvent({ type: 'attempt-start', call, attempt: 1 });
  otel.onEvent({ type: 'attempt-end', call, attempt: 1, outcome: 'success', durationMs: 1, status: 200 });
  const [span] = exporter.getFinishedSpans();
  return span!.attributes['url.full'];
}

describe('url.full: no credentials, the conventions’ query values REDACTED', () => {
  const table: Array<{ url: string; recorded: string }> = [
    { url: 'https://api.example.com/items?id=7', recorded: 'https://api.example.com/items?id=7' },
    { url: 'https://user:pa55@api.example.com/items', recorded: 'https://REDACTED:REDACTED@api.example.com/items' },
    { url: 'https://token@api.example.com/', recorded: 'https://REDACTED@api.example.com/' },
    { url: 'https://s3.amazonaws.com/b/k?AWSAccessKeyId=AKIA&Expires=1&Signature=abc%2B', recorded: 'https://s3.amazonaws.com/b/k?AWSAccessKeyId=REDACTED&Expires=1&Signature=REDACTED' },
    { url: 'https://acct.blob.core.windows.net/c/b?sv=2020&sig=abc', recorded: 'https://acct.blob.core.windows.net/c/b?sv=2020&sig=REDACTED' },
    { url: 'https://storage.googleapis.com/b/o?X-Goog-Signature=ff00&X-Goog-Date=1', recorded: 'https://storage.googleapis.com/b/o?X-Goog-Signature=REDACTED&X-Goog-Date=1' },
    { url: 'https://x.test/p?sig=1&sig=2#frag', recorded: 'https://x.test/p?sig=REDACTED&sig=REDACTED#frag' },
    // Names compare exactly, after percent-decoding; a name without a value has none to hide.
    { url: 'https://x.test/p?SIG=1&si%67=2&sig', recorded: 'https://x.test/p?SIG=1&si%67=REDACTED&sig' },
    { url: 'https://u:p@x.test/p?Signature=s&keep=%ZZ', recorded: 'https://REDACTED:REDACTED@x.test/p?Signature=REDACTED&keep=%ZZ' },
    // A fragment's ?sig= is not a query.
    { url: 'https://x.test/p#?sig=1', recorded: 'https://x.test/p#?sig=1' },
    // A second `?` is part of the query.
    { url: 'https://x.test/p?a=1?&sig=2#f?sig=3', recorded: 'https://x.test/p?a=1?&sig=REDACTED#f?sig=3' },
  ];
  for (const { url, recorded } of table) {
    it(`${url} → ${recorded}`, () => {
      expect(recordedUrl(url)).toBe(recorded);
    });
  }

  it('redactQueryParameters replaces the list (spread the default to add to it); redactUrl runs after, and a throwing hook drops the query', () => {
    expect(recordedUrl('https://x.test/p?token=t&sig=s', { redactQueryParameters: [...DEFAULT_REDACTED_QUERY_PARAMETERS, 'token'] })).toBe('https://x.test/p?token=REDACTED&sig=REDACTED');
    expect(recordedUrl('https://x.test/p?token=t&sig=s', { redactQueryParameters: ['token'] })).toBe('https://x.test/p?token=REDACTED&sig=s');
    expect(recordedUrl('https://u:p@x.test/acct/42?sig=s', { redactUrl: (u) => u.replace(/\/acct\/\d+/, '/acct/{id}') })).toBe('https://REDACTED:REDACTED@x.test/acct/{id}?sig=REDACTED');
    expect(
      recordedUrl('https://x.test/p?secret=1#f', {
        redactUrl: () => {
          throw new Error('bug');
        },
      }),
    ).toBe('https://x.test/p');
  });

  it('the options are checked: field and value named', () => {
    expect(invalidOption(() => otelTelemetry({ redactQueryParameters: 'sig' as never }))).toMatchObject({ field: 'redactQueryParameters', value: 'sig' });
    expect(invalidOption(() => otelTelemetry({ redactQueryParameters: [''] }))).toMatchObject({ field: 'redactQueryParameters' });
    expect(invalidOption(() => otelTelemetry({ redactUrl: 'x' as never }))).toMatchObject({ field: 'redactUrl', value: 'x' });
    expect(invalidOption(() => otelTelemetry({ suppressInstrumentation: 1 as never }))).toMatchObject({ field: 'suppressInstrumentation', value: 1 });
  });
});

describe('metrics by the conventions', () => {
  it('http.client.request.duration is in seconds, with the request attributes; herdless.* carry the scope name and version', async () => {
    const clock = new ManualClock();
    const otel = otelTelemetry({ meterProvider });
    const fetchFn = async (): Promise<Response> => {
      await clock.advance(250);
      return new Response('busy', { status: 503 });
    };
    const api = withRetry(fetchFn as typeof fetch, { clock, maxAttempts: 1, telemetry: otel, name: 'inventory' });
    await (await api('https://inventory.internal:8443/stock')).text();
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === OTEL_SCOPE)!;
    expect(scope.scope.version).toBe(OTEL_SCOPE_VERSION);
    const duration = scope.metrics.find((m) => m.descriptor.name === 'http.client.request.duration')!;
    expect(duration.descriptor.unit).toBe('s');
    const [point] = duration.dataPoints as DataPoint<{ sum: number; count: number }>[];
    expect(point!.value.sum).toBe(0.25);
    expect(point!.value.count).toBe(1);
    expect(point!.attributes).toEqual({
      'http.request.method': 'GET',
      'server.address': 'inventory.internal',
      'server.port': 8443,
      'url.scheme': 'https',
      'http.response.status_code': 503,
      'error.type': '503',
    });
    const calls = scope.metrics.find((m) => m.descriptor.name === 'herdless.calls')!;
    expect((calls.dataPoints[0] as DataPoint<number>).attributes).toEqual({ 'herdless.layer': 'http', 'herdless.client': 'fetch', 'herdless.name': 'inventory' });
  });

  it('the scope version is the package’s', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(OTEL_SCOPE_VERSION).toBe(pkg.version);
  });

  it('retry(op, { name }) names every event of the call; the name is checked', async () => {
    const seen: Array<string | undefined> = [];
    const telemetry = { onEvent: (e: { call?: TelemetryCall }) => void seen.push(e.call?.name) };
    let n = 0;
    await retry(
      async () => {
        if (++n < 2) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
        return 'ok';
      },
      { name: 'ledger', telemetry, random: { random: () => 0 } },
    );
    expect(seen).toEqual(['ledger', 'ledger', 'ledger', 'ledger', 'ledger']);
    for (const bad of ['', 'x'.repeat(129), 'a\nb', 7]) {
      expect(invalidOption(() => createRetry({ name: bad as never }))).toMatchObject({ field: 'name', value: bad });
      expect(invalidOption(() => withRetry(fetch, { name: bad as never }))).toMatchObject({ field: 'name', value: bad });
      expect(invalidOption(() => grpcRetryInterceptor({ maxAttempts: 2, name: bad as never }))).toMatchObject({ field: 'name', value: bad });
      expect(invalidOption(() => connectRetryInterceptor({ maxAttempts: 2, name: bad as never }))).toMatchObject({ field: 'name', value: bad });
    }
  });
});

describe('TelemetryObserver.attemptContext: the hand-off any observer can use', () => {
  it('inject writes into each attempt’s headers and run wraps its send; a throw is reported and the attempt goes out bare', async () => {
    const seen: Array<string | null> = [];
    const running: boolean[] = [];
    let inRun = false;
    const fetchFn = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      seen.push(new Headers(init?.headers).get('x-trace'));
      running.push(inRun);
      return new Response('busy', { status: seen.length < 3 ? 503 : 200 });
    };
    const hookErrors: Array<[unknown, string]> = [];
    const api = withRetry(fetchFn as typeof fetch, {
      random: { random: () => 0 },
      onHookError: (error, hook) => void hookErrors.push([error, hook]),
      telemetry: {
        onEvent: () => undefined,
        attemptContext: (event) => {
          if (event.attempt === 2) throw new Error('observer bug');
          return {
            inject: (set) => set('x-trace', `attempt-${event.attempt}`),
            run: (send) => {
              inRun = true;
              try {
                return send();
              } finally {
                inRun = false;
              }
            },
          };
        },
      },
    });
    expect((await api('https://svc.test/')).status).toBe(200);
    expect(seen).toEqual(['attempt-1', null, 'attempt-3']);
    // fetch is called synchronously inside run (no body factory to await first).
    expect(running).toEqual([true, false, true]);
    expect(hookErrors.map(([e, hook]) => [(e as Error).message, hook])).toEqual([['observer bug', 'telemetry']]);
  });
});
