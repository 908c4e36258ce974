import type { LayersRow } from 'herdless/sim';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';

/** The layers table: one row per policy, one column per service (calls that reached it). */
export function layersTable(rows: readonly LayersRow[]): string {
  const names = Object.keys(rows[0]!.calls);
  const width = Math.max(6, ...rows.map((r) => r.policy.length));
  const cols = names.map((n) => Math.max(n.length, ...rows.map((r) => String(r.calls[n]).length)));
  return [
    `${'policy'.padEnd(width)}   ${names.map((n, i) => n.padStart(cols[i]!)).join('   ')}`,
    ...rows.map((r) => `${r.policy.padEnd(width)}   ${names.map((n, i) => String(r.calls[n]).padStart(cols[i]!)).join('   ')}`),
  ].join('\n');
}

/** CSV: `policy,<service>,…`, one row per policy. */
export function layersCsv(rows: readonly LayersRow[]): string {
  const names = Object.keys(rows[0]!.calls);
  return [['policy', ...names].join(','), ...rows.map((r) => [r.policy, ...names.map((n) => r.calls[n])].join(','))].join('\n');
}

/** The JSON contract: `{"experiment":"layers","rows":[{"policy","calls":{service: count}}, …]}`. */
export function layersJson(rows: readonly LayersRow[]): object {
  return { schemaVersion: LAB_JSON_SCHEMA_VERSION, experiment: 'layers', rows };
}

/** The header line of the table. */
export function layersTitle(depth: number, attempts: number): string {
  return `# layers: ${depth === 1 ? '1 service' : `${depth} services in a chain`}, the last always failing; every caller makes up to ${attempts === 1 ? '1 attempt' : `${attempts} attempts`}`;
}
