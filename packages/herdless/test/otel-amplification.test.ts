/**
 * Cause or symptom, from the metrics alone: the retry amplification query of docs/telemetry.md
 * (attempts ÷ calls of one dependency over a window) and the budget refusals, run against the
 * SDK's in-memory metric reader through a scripted outage, agree with what the servers counted.
 */
import { MeterProvider, MetricReader, type DataPoint, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { constantBackoff, retryThrottlingBudget } from 'herdless';
import { withRetry } from 'herdless/http';
import { otelTelemetry } from 'herdless/otel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer, type Step } from './support/scripted-server.js';

/** A pull reader (cumulative temporality, as a Prometheus scrape sees counters). */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One scrape: every counter's cumulative value, summed by `herdless.name`. */
type Scrape = Map<string, Map<string, number>>;

async function scrape(reader: TestReader): Promise<Scrape> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  const out: Scrape = new Map();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const byName = out.get(metric.descriptor.name) ?? new Map<string, number>();
      for (const p of metric.dataPoints as DataPoint<unknown>[]) {
        if (typeof p.value !== 'number') continue;
        const name = String(p.attributes['herdless.name'] ?? '');
        byName.set(name, (byName.get(name) ?? 0) + p.value);
      }
      out.set(metric.descriptor.name, byName);
    }
  }
  return out;
}

/** increase(metric[window]) by herdless.name: the later scrape minus the earlier one. */
function increase(before: Scrape, after: Scrape, metric: string, name: string): number {
  return (after.get(metric)?.get(name) ?? 0) - (before.get(metric)?.get(name) ?? 0);
}

/**
 * The docs' query, `sum by (herdless_name) (increase(herdless_attempts_total[w])) / sum by
 * (herdless_name) (increase(herdless_calls_total[w]))`, on two scrapes.
 */
function amplification(before: Scrape, after: Scrape, name: string): number {
  return increase(before, after, 'herdless.attempts', name) / increase(before, after, 'herdless.calls', name);
}

let payments: ScriptedServer;
let search: ScriptedServer;
let reader: TestReader;
let meterProvider: MeterProvider;
beforeEach(async () => {
  payments = await startScriptedServer();
  search = await startScriptedServer();
  reader = new TestReader();
  meterProvider = new MeterProvider({ readers: [reader] });
});
afterEach(async () => {
  await payments.close();
  await search.close();
  await meterProvider.shutdown();
});

describe('retry amplification and budget refusals from the exported metrics', () => {
  it('healthy, outage, recovery: per-window attempts ÷ calls matches the servers’ counts (within 1%), refusals match the budget give-ups, and the healthy dependency stays at 1', async () => {
    const otel = otelTelemetry({ meterProvider });
    const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    let budgetGiveUps = 0;
    const paymentsApi = withRetry(fetch, {
      name: 'payments',
      maxAttempts: 4,
      backoff: constantBackoff({ delayMs: 1 }),
      budget,
      telemetry: otel,
      onGiveUp: (e) => {
        if (e.reason === 'budget') budgetGiveUps++;
      },
    });
    // The other dependency: by default named by its host (127.0.0.1:<port>).
    const searchApi = withRetry(fetch, { maxAttempts: 4, backoff: constantBackoff({ delayMs: 1 }), telemetry: otel });
    const searchName = new URL(search.origin).host;

    const ok: Step = { status: 200, body: 'ok' };
    const down: Step = { status: 503, body: 'down' };
    /** `calls` calls to each dependency, 8 at a time; returns what the servers counted meanwhile. */
    const phase = async (calls: number): Promise<{ payments: number; search: number }> => {
      const p0 = payments.requests.length;
      const s0 = search.requests.length;
      for (let i = 0; i < calls; i += 8) {
        const batch: Promise<unknown>[] = [];
        for (let j = i; j < Math.min(calls, i + 8); j++) {
          batch.push(paymentsApi(`${payments.origin}/pay/${j}`).then((r) => r.text()));
          batch.push(searchApi(`${search.origin}/q/${j}`).then((r) => r.text()));
        }
        await Promise.all(batch);
      }
      return { payments: payments.requests.length - p0, search: search.requests.length - s0 };
    };

    search.script([], ok);
    payments.script([], ok);
    const t0 = await scrape(reader);
    const healthy = await phase(40);
    const t1 = await scrape(reader);
    payments.script([], down);
    const outage = await phase(80);
    const t2 = await scrape(reader);
    // Recovery: the first requests still fail, then the dependency answers again.
    payments.script([down, down, down, down, down, down], ok);
    const recovery = await phase(40);
    const t3 = await scrape(reader);

    const windows = [
      { from: t0, to: t1, calls: 40, counted: healthy },
      { from: t1, to: t2, calls: 80, counted: outage },
      { from: t2, to: t3, calls: 40, counted: recovery },
    ];
    for (const w of windows) {
      // What the servers saw, per call made: the amplification as the backend feels it.
      const served = w.counted.payments / w.calls;
      expect(Math.abs(amplification(w.from, w.to, 'payments') - served) / served).toBeLessThanOrEqual(0.01);
      expect(amplification(w.from, w.to, searchName)).toBe(w.counted.search / w.calls);
      expect(w.counted.search).toBe(w.calls);
    }
    // Healthy: no retries. Outage: retries, held back by the budget (so well under maxAttempts).
    expect(amplification(t0, t1, 'payments')).toBe(1);
    const during = amplification(t1, t2, 'payments');
    expect(during).toBeGreaterThan(1);
    expect(during).toBeLessThan(2);
    // Budget refusals: one query away, and the same count the calls' give-ups report.
    expect(increase(t0, t3, 'herdless.budget.refusals', 'payments')).toBe(budgetGiveUps);
    expect(budgetGiveUps).toBeGreaterThan(0);
    expect(increase(t0, t3, 'herdless.budget.refusals', searchName)).toBe(0);
  });
});
