import { CONTENTION_CLIENTS, CONTENTION_STRATEGIES, formatFixed, runContention, type ContentionRow, type ContentionStrategy } from 'herdless/sim';
import type { ContentionPoint } from '../charts/specs.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';
import { seedText } from '../seeds.js';

/** The 2015 post's parameters, printed in the title and the JSON. */
export const CONTENTION_MODEL = Object.freeze({ baseMs: 5, capMs: 2000, hopMeanMs: 10, hopSdMs: 2 });

/** A contention run's settings. */
export interface ContentionSettings {
  strategies: readonly ContentionStrategy[];
  clients: readonly number[];
  seeds: readonly number[];
}

/** The table's result: its settings and one row per (clients, strategy) cell. */
export interface ContentionResult {
  settings: ContentionSettings;
  rows: ContentionRow[];
}

/** The default run: every strategy, 10–50 clients, seeds 0–99. */
export const CONTENTION_DEFAULTS: ContentionSettings = Object.freeze({
  strategies: CONTENTION_STRATEGIES,
  clients: CONTENTION_CLIENTS,
  seeds: Array.from({ length: 100 }, (_, i) => i),
});

/** Runs the contention table in this thread (2,500 short runs take well under a second). */
export function runContentionExperiment(settings: ContentionSettings = CONTENTION_DEFAULTS): ContentionResult {
  return { settings, rows: runContention(settings.strategies, settings.clients, settings.seeds) };
}

/** The header line of the table. */
export function contentionTitle(seeds: readonly number[]): string {
  const m = CONTENTION_MODEL;
  return (
    `# contention: each client updates one row once under optimistic concurrency (Brooker 2015); hops |N(${m.hopMeanMs}, ${m.hopSdMs})| ms, ` +
    `backoff base ${m.baseMs} ms, cap ${m.capMs} ms; seeds ${seedText(seeds)}`
  );
}

/**
 * Two blocks, the post's two charts as numbers: the mean time until every client has succeeded (ms),
 * then the mean calls (writes the server received), one row per client count, one column per strategy.
 */
export function contentionTable(result: ContentionResult): string {
  const { strategies, clients } = result.settings;
  const cell = (n: number, s: ContentionStrategy): ContentionRow => result.rows.find((r) => r.clients === n && r.strategy === s)!;
  const block = (title: string, value: (r: ContentionRow) => number): string[] => {
    const widths = strategies.map((s) => Math.max(s.length, ...clients.map((n) => formatFixed(value(cell(n, s)), 2).length)));
    return [
      title,
      `${'clients'.padStart(7)}   ${strategies.map((s, i) => s.padStart(widths[i]!)).join('   ')}`,
      ...clients.map((n) => `${String(n).padStart(7)}   ${strategies.map((s, i) => formatFixed(value(cell(n, s)), 2).padStart(widths[i]!)).join('   ')}`),
    ];
  };
  return [
    ...block('mean time until every client has succeeded, ms', (r) => r.timeMs.mean),
    '',
    ...block('mean calls (writes the server received)', (r) => r.calls.mean),
  ].join('\n');
}

/** CSV: exactly `clients,strategy,time_ms_mean,calls_mean`, 2 decimals (Python's `%.2f`), rows by clients then strategy. */
export function contentionCsv(result: ContentionResult): string {
  return [
    'clients,strategy,time_ms_mean,calls_mean',
    ...result.rows.map((r) => `${r.clients},${r.strategy},${formatFixed(r.timeMs.mean, 2)},${formatFixed(r.calls.mean, 2)}`),
  ].join('\n');
}

/** The JSON contract (schemas/contention.schema.json): the model's parameters, the seeds and every cell's mean, min and max. */
export function contentionJson(result: ContentionResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'contention',
    model: CONTENTION_MODEL,
    seeds: result.settings.seeds,
    rows: result.rows.map((r) => ({ clients: r.clients, strategy: r.strategy, timeMs: r.timeMs, calls: r.calls })),
  };
}

/** The figure's points (the 2015 post's two charts): each cell's mean time and mean calls, for the report and the page. */
export function contentionPoints(result: Pick<ContentionResult, 'rows'>): ContentionPoint[] {
  return result.rows.map((r) => ({ clients: r.clients, strategy: r.strategy, timeMs: r.timeMs.mean, calls: r.calls.mean }));
}
