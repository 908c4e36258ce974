// OpenTelemetry: the retrying fetch reports every attempt, retry and give-up as metrics and spans.
// A server answers 503, 503, 200 for the first call and always 503 for the second; the metrics
// then count exactly what the server saw. (A real service exports to a collector; this example
// reads the metrics and spans in memory to print them.)
import { createServer } from 'node:http';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { withRetry } from 'herdless/http';
import { otelTelemetry } from 'herdless/otel';

/** A pull reader: collects when asked. */
class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

let requests = 0;
const server = createServer((req, res) => {
  requests += 1;
  const ok = req.url === '/flaky' && requests === 3;
  res.writeHead(ok ? 200 : 503).end(ok ? 'ok' : 'busy');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const telemetry = otelTelemetry({ meterProvider, tracerProvider });
const api = withRetry(fetch, { maxAttempts: 3, backoff: { delay: () => 10 }, telemetry });
for (const path of ['/flaky', '/down']) {
  const res = await api(base + path);
  await res.text();
  console.log(`GET ${path}: ${res.status}`);
}

const { resourceMetrics } = await reader.collect();
const sums = new Map();
for (const scope of resourceMetrics.scopeMetrics) {
  for (const metric of scope.metrics) {
    for (const point of metric.dataPoints) {
      const value = typeof point.value === 'number' ? point.value : point.value.count;
      sums.set(metric.descriptor.name, (sums.get(metric.descriptor.name) ?? 0) + value);
    }
  }
}
console.log(`server saw ${requests} requests; herdless.attempts ${sums.get('herdless.attempts')}, herdless.retries ${sums.get('herdless.retries')}, herdless.give_ups ${sums.get('herdless.give_ups')}`);
const finished = spans.getFinishedSpans();
console.log(`${finished.length} spans: resend_count ${finished.map((s) => s.attributes['http.request.resend_count']).join(', ')}; statuses ${finished.map((s) => s.attributes['http.response.status_code']).join(', ')}`);
server.close();
await meterProvider.shutdown();
await tracerProvider.shutdown();
