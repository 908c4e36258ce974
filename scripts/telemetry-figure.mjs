// The live lab's outage, drawn from exported metrics alone: the budget experiment's clients (10,
// Poisson 30/s each, the server's downstream down from 5 s to 15 s) run with herdless/otel on an
// in-memory metric reader scraped once a second; per second, the requests sent (herdless.attempts),
// the logical calls (herdless.calls), their ratio (the retry amplification) and the budget refusals
// are read from the scrapes, and printed beside what the lab server itself counted.
//
//   npx tsc -b packages/herdless packages/lab && node scripts/telemetry-figure.mjs ["4 attempts"] [horizon s] [clients]
import { performance } from 'node:perf_hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { otelTelemetry } from 'herdless/otel';
import { budgetScenario } from 'herdless/sim';
import { runLive } from '../packages/lab/dist/live/fleet.js';
import { startServerProcess } from '../packages/lab/dist/live/target.js';

const policyName = process.argv[2] ?? '4 attempts';
const horizonMs = Number(process.argv[3] ?? 25) * 1000;
const clients = Number(process.argv[4] ?? 10);

class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

/** One scrape: the cumulative sums of the counters, for the lab server's dependency name. */
async function scrape(reader) {
  const { resourceMetrics } = await reader.collect();
  const out = { attempts: 0, calls: 0, refusals: 0 };
  const key = { 'herdless.attempts': 'attempts', 'herdless.calls': 'calls', 'herdless.budget.refusals': 'refusals' };
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const k = key[metric.descriptor.name];
      if (k === undefined) continue;
      for (const p of metric.dataPoints) if (p.attributes['herdless.name'] === 'lab server') out[k] += p.value;
    }
  }
  return out;
}

const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const otel = otelTelemetry({ meterProvider, traces: false });
const scenario = budgetScenario(policyName, { clients, horizonMs });
const server = await startServerProcess(['--startup', '0', '--outage', '5-15']);
const scrapes = [{ atMs: 0, ...(await scrape(reader)) }];
let result;
try {
  result = await runLive({
    target: { url: server.url, labServer: server.url },
    clients,
    arrivals: { kind: 'poisson', ratePerSecond: 30 },
    policy: scenario.policy,
    horizonMs,
    seed: 0,
    stopWhenIdle: false,
    tickMs: scenario.server.tickMs,
    telemetry: otel,
    // About once a second, on the run's clock: the scrape a Prometheus server would make.
    // The scrape's time is when its numbers were read, on the same clock.
    onProgress: (elapsedMs) => {
      const called = performance.now();
      void scrape(reader).then((s) => scrapes.push({ atMs: elapsedMs + (performance.now() - called), ...s }));
    },
  });
  scrapes.push({ atMs: horizonMs, ...(await scrape(reader)) });
} finally {
  await server.stop();
  await meterProvider.shutdown();
}

// The server's own count (per 100 ms window from its time 0) and the fleet's (per 10 ms tick), over a span.
const stats = result.server;
const serverBetween = (fromMs, toMs) => {
  let n = 0;
  for (let i = 0; i < stats.arrivals.length; i++) {
    const start = (stats.firstWindow + i) * stats.windowMs;
    if (start >= fromMs && start < toMs) n += stats.arrivals[i];
  }
  return n;
};
const fleetBetween = (fromMs, toMs) => {
  let n = 0;
  const tick = scenario.server.tickMs;
  for (let t = 0; t < result.perTick.arrivals.length; t++) if (t * tick >= fromMs && t * tick < toMs) n += result.perTick.arrivals[t];
  return n;
};

const rows = [];
for (let i = 1; i < scrapes.length; i++) {
  const a = scrapes[i - 1];
  const b = scrapes[i];
  const seconds = (b.atMs - a.atMs) / 1000;
  if (seconds <= 0) continue;
  const attempts = b.attempts - a.attempts;
  const calls = b.calls - a.calls;
  rows.push({
    from: a.atMs / 1000,
    to: b.atMs / 1000,
    attempts: attempts / seconds,
    calls: calls / seconds,
    amplification: calls === 0 ? NaN : attempts / calls,
    refusals: (b.refusals - a.refusals) / seconds,
    server: serverBetween(a.atMs, b.atMs) / seconds,
    fleet: fleetBetween(a.atMs, b.atMs) / seconds,
  });
}

const bar = (n, scale) => '█'.repeat(Math.round(n / scale));
console.log(`policy: ${policyName}; ${clients} clients, Poisson 30/s each; outage 5–15 s; horizon ${horizonMs / 1000} s`);
console.log('from the metrics (each scrape minus the one before) | counted by the fleet and the server');
console.log('   t (s)      attempts/s  calls/s  amplif.  refusals/s | fleet sent/s  server arrivals/s   attempts/s (metrics), one █ = 25');
for (const r of rows) {
  console.log(
    `${r.from.toFixed(1).padStart(5)}–${r.to.toFixed(1).padEnd(5)}${r.attempts.toFixed(0).padStart(12)}${r.calls.toFixed(0).padStart(9)}${(Number.isNaN(r.amplification) ? '' : r.amplification.toFixed(2)).padStart(9)}${r.refusals.toFixed(0).padStart(12)} |${r.fleet.toFixed(0).padStart(13)}${r.server.toFixed(0).padStart(19)}   ${bar(r.attempts, 25)}`,
  );
}
console.log(`send lateness p50 ${result.lateness.p50.toFixed(1)} ms, p99 ${result.lateness.p99.toFixed(1)} ms (above 5 ms: the client machine, not the policy, shaped the run)`);
const last = scrapes.at(-1);
console.log(`totals: attempts ${last.attempts} (metrics) vs ${stats.totals.arrivals} (server) and ${result.requests} (fleet); calls ${last.calls}; amplification ${(last.attempts / last.calls).toFixed(3)}; budget refusals ${last.refusals} (metrics) vs ${result.budgetRefusals} (fleet)`);
