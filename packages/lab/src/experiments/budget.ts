import { isInvalidOptionError, parseGrpcServiceConfig } from 'herdless';
import {
  BUDGET_POLICIES,
  budgetScenario,
  formatFixed,
  type BudgetPolicyName,
  type BudgetRow,
  type BudgetTrace,
  type ClientPolicy,
  type PolicySpec,
  type ScenarioSpec,
  scenarioFromSpec,
  summarize,
} from 'herdless/sim';
import { runBudgetJobs } from '../runner.js';
import { progressBar } from '../progress.js';
import { describePath, readUserFile, userPath } from '../paths.js';
import { UsageError } from '../usage-error.js';

/** A budget-experiment run: which policies, which seeds, and the scenario (default: the article's). */
export interface BudgetRun {
  policies: ClientPolicy[];
  seeds: number[];
  /** A scenario file's settings instead of the article's (it must have an outage). */
  base?: Omit<ScenarioSpec, 'policy'>;
  name?: string;
  /** Worker threads (0 = this thread); undefined = the runner's default. */
  workers?: number;
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
 * cap, clamped backoffs, …). A relative `file` is resolved against the folder the command was started from.
 * @throws UsageError naming the file (with its absolute path) and the JSON path of the problem.
 */
export function grpcPolicy(file: string): { policy: ClientPolicy; warnings: string[] } {
  const path = userPath('--grpc-service-config', file);
  const where = describePath(path);
  const text = readUserFile(path);
  try {
    const config = parseGrpcServiceConfig(text);
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
    if (isInvalidOptionError(error)) throw new UsageError(`${where}: ${error.field} ${error.requirement}, got ${JSON.stringify(error.value) ?? String(error.value)}`);
    throw error;
  }
}

/**
 * A policy object as data, so that it can cross to a worker thread: its backoff's and its budget's
 * `toJSON()` (every backoff and budget of the library has one; the budget is asked of client 0,
 * since all clients build theirs alike).
 * @throws TypeError for a budget without `toJSON()` (one of the user's own, not the library's).
 */
export function policySpecOf(policy: ClientPolicy): PolicySpec {
  const budget = policy.budget?.(0);
  if (budget && typeof (budget as { toJSON?: unknown }).toJSON !== 'function') throw new TypeError(`policy ${JSON.stringify(policy.name)}: its budget has no toJSON(), so it cannot run on a worker thread`);
  return {
    name: policy.name,
    backoff: policy.backoff.toJSON(),
    maxAttempts: Number.isFinite(policy.maxAttempts) ? policy.maxAttempts : null,
    ...(budget ? { budget: (budget as unknown as { toJSON(): NonNullable<PolicySpec['budget']> }).toJSON() } : {}),
  };
}

/** The article's budget scenario without its policy: 10 clients, Poisson arrivals, the outage at 5–15 s, 40 s. */
function articleBase(): Omit<ScenarioSpec, 'policy'> {
  const { policy: _policy, ...base } = budgetScenario('no retry');
  return base;
}

/**
 * Runs every policy over every seed, on worker threads unless `run.workers` is 0 (runs are
 * independent and deterministic: the thread count changes the wall time, never a number).
 */
export async function runBudgetExperiment(run: BudgetRun): Promise<BudgetResult> {
  const base = run.base ?? articleBase();
  const jobs = run.policies.flatMap((policy) => {
    const spec = { ...base, policy: policySpecOf(policy) };
    return run.seeds.map((seed) => ({ spec, seed }));
  });
  const bar = progressBar('budget');
  let metrics: Awaited<ReturnType<typeof runBudgetJobs>>;
  try {
    metrics = await runBudgetJobs(jobs, { ...(run.workers === undefined ? {} : { workers: run.workers }), onProgress: bar.update });
  } finally {
    bar.stop();
  }
  const n = run.seeds.length;
  const rows = run.policies.map((policy, i): BudgetRow => {
    const m = metrics.slice(i * n, (i + 1) * n);
    return {
      policy: policy.name,
      load: summarize(m.map((x) => x.load)),
      crashesAfter: summarize(m.map((x) => x.crashesAfter)),
      backToNormal: summarize(m.map((x) => x.backToNormal)),
      retryShare: summarize(m.map((x) => x.retryShare)),
    };
  });
  return { run, rows };
}

/** The policies of a scenario file, as the library's policy objects. */
export function configPolicies(base: Omit<ScenarioSpec, 'policy'>, policies: readonly PolicySpec[]): ClientPolicy[] {
  return policies.map((policy) => scenarioFromSpec({ ...base, policy }).policy);
}

const f = (x: number, d: number): string => formatFixed(x, d);

/** The article's table plus the retry share of arrivals during the outage. */
export function budgetTable(result: BudgetResult): string {
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
    experiment: 'budget',
    seeds: result.run.seeds,
    rows: result.rows.map((r) => ({ policy: r.policy, load: r.load, crashesAfter: r.crashesAfter, backToNormal: r.backToNormal, retryShare: r.retryShare })),
  };
}

/** CSV: one row per policy. */
export function budgetCsv(result: BudgetResult): string {
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
