import { isInvalidOptionError, parseGrpcServiceConfig } from 'herdless';
import {
  BUDGET_POLICIES,
  budgetRow,
  budgetScenario,
  formatFixed,
  type BudgetPolicyName,
  type BudgetRow,
  type BudgetTrace,
  type ClientPolicy,
  type PolicySpec,
  type Scenario,
  type ScenarioSpec,
  scenarioFromSpec,
} from 'herdless/sim';
import { readJsonFile } from '../json-file.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';

/** A budget-experiment run: which policies, which seeds, and the scenario (default: the article's). */
export interface BudgetRun {
  policies: ClientPolicy[];
  seeds: number[];
  /** A scenario file's settings instead of the article's (it must have an outage). */
  base?: Omit<ScenarioSpec, 'policy'>;
  name?: string;
}

/** The result: one row per policy. */
export interface BudgetResult {
  run: BudgetRun;
  rows: BudgetRow[];
}

/** The article's policies (or the subset named), as the library's policy objects. */
export function budgetPolicies(names: readonly BudgetPolicyName[] = BUDGET_POLICIES): ClientPolicy[] {
  return names.map((n) => budgetScenario(n).policy);
}

/**
 * A policy from a gRPC service config file (gRFC A6 JSON): its retryPolicy (maxAttempts capped at 5,
 * backoffs, ±20% jitter) and, if present, its retryThrottling as one token bucket per client. Every
 * failure in the lab's model is the server being down or over capacity — gRPC's UNAVAILABLE — so a
 * policy whose retryableStatusCodes leave UNAVAILABLE out retries nothing here; so does a config in
 * which no retryPolicy applies. Both are reported as warnings, with the parser's own (the maxAttempts
 * cap, clamped backoffs, …).
 * @throws UsageError naming the file and the JSON path of the problem.
 */
export function grpcPolicy(file: string): { policy: ClientPolicy; warnings: string[] } {
  const where = `--grpc-service-config ${JSON.stringify(file)}`;
  const json = readJsonFile(file, where);
  try {
    const config = parseGrpcServiceConfig(json);
    const warnings = config.warnings.map((w) => `${where}: ${w}`);
    const { backoff } = config.retryOptions;
    let maxAttempts = config.retryOptions.maxAttempts;
    if (config.retryPolicy === undefined) {
      warnings.push(`${where}: no retryPolicy applies, so gRPC would not retry (maxAttempts 1)`);
    } else if (!config.retryPolicy.retryableStatusCodes.includes('UNAVAILABLE')) {
      warnings.push(
        `${where}: retryableStatusCodes (${config.retryPolicy.retryableStatusCodes.join(', ')}) leave out UNAVAILABLE, the only failure of the lab's server, so nothing is retried`,
      );
      maxAttempts = 1;
    }
    const createBudget = config.createBudget;
    const policy: ClientPolicy = { name: 'gRPC service config', backoff, maxAttempts, ...(createBudget ? { budget: () => createBudget() } : {}) };
    return { policy, warnings };
  } catch (error) {
    if (isInvalidOptionError(error)) throw new UsageError(`${where}: ${error.field} ${error.requirement}, got ${quote(error.value)}`);
    throw error;
  }
}

/** Runs every policy over every seed (in this thread: the whole table takes well under a second). */
export function runBudgetExperiment(run: BudgetRun): BudgetResult {
  const base = run.base;
  const scenario = (policy: ClientPolicy): Scenario => (base ? { ...scenarioFromSpec({ ...base, policy: PLACEHOLDER }), policy } : budgetScenario(policy));
  return { run, rows: run.policies.map((policy) => budgetRow(scenario(policy), run.seeds)) };
}

/** The policies of a scenario file, as the library's policy objects. */
export function configPolicies(base: Omit<ScenarioSpec, 'policy'>, policies: readonly PolicySpec[]): ClientPolicy[] {
  return policies.map((policy) => scenarioFromSpec({ ...base, policy }).policy);
}

const PLACEHOLDER: PolicySpec = { name: '-', backoff: { kind: 'constant', delayMs: 0 }, maxAttempts: 1 };

const f = (x: number, d: number): string => formatFixed(x, d);

/** The article's table plus the retry share of arrivals during the outage. */
export function budgetTable(result: Pick<BudgetResult, 'rows'>): string {
  const width = Math.max(6, ...result.rows.map((r) => r.policy.length));
  // The article's layout is 18 wide; a load of 10x or more (a policy of your own) widens the column.
  const loads = result.rows.map((r) => `${f(r.load.mean, 2)}x (${f(r.load.min, 2)}-${f(r.load.max, 2)})`);
  const loadWidth = Math.max(18, ...loads.map((cell) => cell.length));
  const head = `${'policy'.padEnd(width)}   ${'load during outage'.padEnd(loadWidth)}   ${'crashes after'.padEnd(13)}   ${'back to normal at'.padEnd(17)}   retries during outage`;
  const lines = result.rows.map((r, i) =>
    [
      r.policy.padEnd(width),
      loads[i]!.padEnd(loadWidth),
      f(r.crashesAfter.mean, 1).padStart(5).padEnd(13),
      `${f(r.backToNormal.mean, 1).padStart(4)} s (${f(r.backToNormal.min, 0)}-${f(r.backToNormal.max, 0)})`.padEnd(17),
      `${f(r.retryShare.mean * 100, 1).padStart(4)}% (${f(r.retryShare.min * 100, 1)}-${f(r.retryShare.max * 100, 1)})`,
    ].join('   '),
  );
  return [head, ...lines].join('\n');
}

/**
 * The JSON contract: `{"experiment":"budget","seeds":[…],"rows":[{"policy", "load":{mean,min,max},
 * "crashesAfter":{…}, "backToNormal":{…}, "retryShare":{…}}, …]}` — load as a ratio, back to normal in
 * seconds, retry share as a fraction; means unrounded.
 */
export function budgetJson(result: BudgetResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'budget',
    seeds: result.run.seeds,
    rows: result.rows.map((r) => ({ policy: r.policy, load: r.load, crashesAfter: r.crashesAfter, backToNormal: r.backToNormal, retryShare: r.retryShare })),
  };
}

/** CSV: one row per policy. */
export function budgetCsv(result: Pick<BudgetResult, 'rows'>): string {
  const q = (s: string): string => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const cols = ['load', 'crashesAfter', 'backToNormal', 'retryShare'] as const;
  return [
    ['policy', ...cols.flatMap((c) => [`${c}_mean`, `${c}_min`, `${c}_max`])].join(','),
    ...result.rows.map((r) => [q(r.policy), ...cols.flatMap((c) => [r[c].mean, r[c].min, r[c].max])].join(',')),
  ].join('\n');
}

/**
 * The article's two figures as data, for one seed: client 0's tokens per tick under gRPC
 * throttling, and per-second new requests, arrivals and successes per policy (CSV blocks).
 */
export function budgetTraceJson(trace: BudgetTrace, tickMs = 10): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'budget-trace',
    tokens: Array.from(trace.tokens, (tokens, tick) => ({ tick, timeS: (tick * tickMs) / 1000, tokens })),
    perSecond: trace.perSecond,
  };
}

/** The same as CSV: two blocks separated by a blank line. */
export function budgetTraceCsv(trace: BudgetTrace, tickMs = 10): string {
  const tokens = ['tick,time_s,tokens', ...Array.from(trace.tokens, (v, t) => `${t},${formatFixed((t * tickMs) / 1000, 2)},${v}`)];
  const perSecond = ['policy,second,new,arrivals,successes,retries'];
  for (const p of trace.perSecond) {
    p.arrivals.forEach((a, s) => perSecond.push(`"${p.policy}",${s},${p.fresh[s]},${a},${p.successes[s]},${p.retries[s]}`));
  }
  return `${tokens.join('\n')}\n\n${perSecond.join('\n')}`;
}

/** The header line of the article's budget table for these seeds. */
export function budgetTitle(seedList: string): string {
  return `# budget: 10 clients, about 300 new requests/s in all, the downstream down from 5 s to 15 s, seeds ${seedList}`;
}
