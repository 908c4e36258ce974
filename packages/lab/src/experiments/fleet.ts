import { fleetRow, type BudgetRow, type FleetOptions, type FleetPolicyName, type FleetTrace } from 'herdless/sim';
import { budgetCsv, budgetTable } from './budget.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';

/** A fleet-experiment run: which policies, which seeds, the fleet's shape. */
export interface FleetRun {
  policies: FleetPolicyName[];
  seeds: number[];
  /** Processes alive at once. */
  processes: number;
  /** Each process's life, ms. */
  lifetimeMs: number;
  /** The batched shared budgets' flush interval, ms. */
  flushIntervalMs: number;
}

/** The result: one row per policy, with the budget table's measures. */
export interface FleetResult {
  run: FleetRun;
  rows: BudgetRow[];
}

/** The defaults: 200 processes of 2 s each, every policy, seeds 0–19. */
export const FLEET_DEFAULTS = { processes: 200, lifetimeMs: 2000, flushIntervalMs: 100 } as const;

/** Runs every policy over every seed, in this thread (the whole table takes a few seconds). */
export function runFleetExperiment(run: FleetRun): FleetResult {
  const options: FleetOptions = { processes: run.processes, lifetimeMs: run.lifetimeMs, flushIntervalMs: run.flushIntervalMs };
  return { run, rows: run.policies.map((policy) => fleetRow(policy, run.seeds, options)) };
}

/** The budget table's columns: load during the outage, crashes after it, recovery, retry share. */
export function fleetTable(result: FleetResult): string {
  return budgetTable(result);
}

/**
 * The JSON contract (schemas/fleet.schema.json): `{"schemaVersion":1,"experiment":"fleet","seeds":[…],"processes":200,"lifetimeMs":2000,
 * "flushIntervalMs":100,"rows":[{"policy","load":{mean,min,max},"crashesAfter":{…},"backToNormal":{…},"retryShare":{…}}, …]}`
 * — the budget experiment's row shape (load as a ratio, back to normal in seconds, retry share as a fraction).
 */
export function fleetJson(result: FleetResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'fleet',
    seeds: result.run.seeds,
    processes: result.run.processes,
    lifetimeMs: result.run.lifetimeMs,
    flushIntervalMs: result.run.flushIntervalMs,
    rows: result.rows.map((r) => ({ policy: r.policy, load: r.load, crashesAfter: r.crashesAfter, backToNormal: r.backToNormal, retryShare: r.retryShare })),
  };
}

/** CSV: one row per policy (the budget CSV's columns). */
export function fleetCsv(result: FleetResult): string {
  return budgetCsv(result);
}

/** The figure's data as JSON: per-second traffic per policy for one seed. */
export function fleetTraceJson(trace: readonly FleetTrace[], run: Omit<FleetRun, 'policies'>): object {
  return { schemaVersion: LAB_JSON_SCHEMA_VERSION, experiment: 'fleet-trace', seed: run.seeds[0], processes: run.processes, lifetimeMs: run.lifetimeMs, flushIntervalMs: run.flushIntervalMs, perSecond: trace };
}

/** The same as CSV: `policy,second,new,arrivals,successes,retries`. */
export function fleetTraceCsv(trace: readonly FleetTrace[]): string {
  const lines = ['policy,second,new,arrivals,successes,retries'];
  for (const p of trace) p.arrivals.forEach((a, s) => lines.push(`"${p.policy}",${s},${p.fresh[s]},${a},${p.successes[s]},${p.retries[s]}`));
  return lines.join('\n');
}

const seconds = (ms: number): string => `${ms / 1000} s`;

/** The header line of the table. */
export function fleetTitle(run: Pick<FleetRun, 'processes' | 'lifetimeMs'>, seedList: string): string {
  return (
    `# fleet: ${run.processes} processes alive at once, each replaced after ${seconds(run.lifetimeMs)}, about 300 new requests/s in all, ` +
    `the downstream down from 5 s to 15 s, seeds ${seedList}`
  );
}
