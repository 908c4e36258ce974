import {
  HEDGING_LOADS,
  HEDGING_POLICIES,
  HEDGING_SERVER,
  HEDGING_SETTINGS,
  formatFixed,
  hedgingCrossover,
  hedgingRow,
  meanServiceMs,
  runHedging,
  type HedgingPolicyName,
  type HedgingRow,
  type HedgingSettings,
} from 'herdless/sim';
import type { HedgingPoint } from '../charts/hedging.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';

/** A hedging-experiment run: policies, offered loads (fractions of capacity), seeds and settings. */
export interface HedgingRun {
  policies: readonly HedgingPolicyName[];
  loads: readonly number[];
  seeds: readonly number[];
  settings: HedgingSettings;
  /** Arrivals per run, ms. */
  durationMs: number;
}

/** The result: one row per (load, policy), loads ascending, policies in the run's order. */
export interface HedgingResult {
  run: HedgingRun;
  rows: HedgingRow[];
}

/** The report's run: every policy, 10%…100%, seeds 0-2, 20 s of arrivals each. */
export const DEFAULT_HEDGING_RUN: HedgingRun = {
  policies: HEDGING_POLICIES,
  loads: HEDGING_LOADS,
  seeds: [0, 1, 2],
  settings: HEDGING_SETTINGS,
  durationMs: 20_000,
};

/** Runs every (load, policy, seed) in this thread: the model is small (about 0.15 s per run). */
export function runHedgingExperiment(run: HedgingRun, onRun?: () => void): HedgingResult {
  const rows: HedgingRow[] = [];
  for (const load of run.loads) {
    for (const policy of run.policies) {
      const metrics = run.seeds.map((seed) => {
        const m = runHedging({ policy, load, seed, durationMs: run.durationMs, settings: run.settings });
        onRun?.();
        return m;
      });
      rows.push(hedgingRow(policy, load, metrics));
    }
  }
  return { run, rows };
}

const f = (x: number, d: number): string => formatFixed(x, d);
const pct = (load: number): string => `${f(load * 100, 0)}%`;

/**
 * A policy's name as the output shows it: the percentile policies name the percentile they ran
 * (`p99 delay + budget` under `--percentile 99`), so a row never claims a p95 it did not use. Under
 * the default percentile (95) every name is {@link HEDGING_POLICIES}' own, so the default table, JSON
 * and CSV keep their names.
 */
export function hedgingLabel(policy: HedgingPolicyName, percentile: number): string {
  return policy.startsWith('p95 ') ? `p${percentile}${policy.slice('p95'.length)}` : policy;
}

/** The names {@link hedgingLabel} gives the run's policies, in the run's order (the figure's legend order). */
export function hedgingLabels(run: Pick<HedgingRun, 'policies' | 'settings'>): string[] {
  return run.policies.map((policy) => hedgingLabel(policy, run.settings.percentile));
}

/** The crossover lines under the table: where each hedging policy's p99 first exceeds no hedging's. */
export function hedgingCrossovers(result: HedgingResult): { policy: string; load: number | undefined }[] {
  const policies = [...new Set(result.rows.map((r) => r.policy))].filter((p) => p !== 'no hedging');
  if (!result.rows.some((r) => r.policy === 'no hedging')) return [];
  return policies.map((policy) => ({ policy: hedgingLabel(policy, result.run.settings.percentile), load: hedgingCrossover(result.rows, policy) }));
}

/** The table: one line per load and policy — p50, p99, p99.9 (ms, mean over seeds), attempts and work per call. */
export function hedgingTable(result: HedgingResult): string {
  const label = (policy: HedgingPolicyName): string => hedgingLabel(policy, result.run.settings.percentile);
  const width = Math.max(6, ...result.rows.map((r) => label(r.policy).length));
  const head = `${'load'.padStart(4)}   ${'policy'.padEnd(width)}   ${'p50 ms'.padStart(7)}   ${'p99 ms'.padStart(7)}   ${'p99.9 ms'.padStart(8)}   attempts/call   work/call`;
  const lines = result.rows.map((r) =>
    [
      pct(r.load).padStart(4),
      label(r.policy).padEnd(width),
      f(r.p50.mean, 1).padStart(7),
      f(r.p99.mean, 1).padStart(7),
      f(r.p999.mean, 1).padStart(8),
      `${f(r.amplification.mean, 3)}x`.padStart(13),
      `${f(r.work.mean, 3)}x`.padStart(9),
    ].join('   '),
  );
  const crossings = hedgingCrossovers(result).map(({ policy, load }) =>
    load === undefined ? `# ${policy}: p99 at or below no hedging's at every load` : `# ${policy}: p99 above no hedging's from ${pct(load)} load`,
  );
  return [head, ...lines, ...crossings].join('\n');
}

/**
 * The JSON contract: `{"schemaVersion","experiment":"hedging","seeds":[…],"settings":{maxAttempts,
 * delayMs,percentile,budgetRatio},"durationMs","rows":[{"policy","load","p50":{mean,min,max},"p99":{…},
 * "p999":{…},"amplification":{…},"work":{…}}, …],"crossovers":[{"policy","load"|null}]}` — latencies
 * in ms, load as a fraction of capacity, amplification as attempts per call, work as service time per
 * call over the no-hedging mean. A policy is named as {@link hedgingLabel} names it (`p99 delay`
 * under percentile 99; the default 95 keeps `p95 delay`).
 */
export function hedgingJson(result: HedgingResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'hedging',
    seeds: result.run.seeds,
    settings: result.run.settings,
    durationMs: result.run.durationMs,
    server: HEDGING_SERVER,
    rows: result.rows.map((row) => ({ ...row, policy: hedgingLabel(row.policy, result.run.settings.percentile) })),
    crossovers: hedgingCrossovers(result).map(({ policy, load }) => ({ policy, load: load ?? null })),
  };
}

/** CSV: one row per (load, policy), the policy named as {@link hedgingLabel} names it. */
export function hedgingCsv(result: HedgingResult): string {
  const cols = ['p50', 'p99', 'p999', 'amplification', 'work'] as const;
  return [
    ['load', 'policy', ...cols.flatMap((c) => [`${c}_mean`, `${c}_min`, `${c}_max`])].join(','),
    ...result.rows.map((r) => [r.load, hedgingLabel(r.policy, result.run.settings.percentile), ...cols.flatMap((c) => [r[c].mean, r[c].min, r[c].max])].join(',')),
  ].join('\n');
}

/** The header line of the table. */
export function hedgingTitle(run: HedgingRun, seedList: string): string {
  const s = HEDGING_SERVER;
  const capacity = (s.replicas * 1000) / meanServiceMs(s);
  return (
    `# hedging: ${s.replicas} replicas (FIFO queue each), ${f((1 - s.slowShare) * 100, 0)}% of requests ~${s.fastMedianMs} ms, ${f(s.slowShare * 100, 0)}% ~${s.slowMedianMs} ms ` +
    `(capacity ${f(capacity, 0)}/s); maxAttempts ${run.settings.maxAttempts}, fixed delay ${run.settings.delayMs} ms, p${run.settings.percentile} delay, ` +
    `budget: retryRatioBudget ${run.settings.budgetRatio}; ${f(run.durationMs / 1000, 0)} s of Poisson arrivals per run, seeds ${seedList}`
  );
}

/** The points of the report's hedging figure: per row, its p50, p99, p99.9 and attempts per call (means over seeds); policies named as {@link hedgingLabel} names them. */
export function hedgingPoints(result: HedgingResult): HedgingPoint[] {
  return result.rows.flatMap((r) => {
    const loadPct = Math.round(r.load * 100);
    const policy = hedgingLabel(r.policy, result.run.settings.percentile);
    return [
      { policy, loadPct, metric: 'p50 (ms)', value: r.p50.mean },
      { policy, loadPct, metric: 'p99 (ms)', value: r.p99.mean },
      { policy, loadPct, metric: 'p99.9 (ms)', value: r.p999.mean },
      { policy, loadPct, metric: 'attempts per call', value: r.amplification.mean },
    ];
  });
}
