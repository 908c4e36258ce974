import { isInvalidOptionError } from 'herdless';
import { parseGrpcServiceConfig } from 'herdless/grpc';
import { budgetScenario, type ClientPolicy, type ScenarioSpec } from 'herdless/sim';
import { readJsonFile } from '../json-file.js';
import { closestName } from '../closest.js';
import { describePath, userPath } from '../paths.js';
import { progressBar } from '../progress.js';
import { runBudgetJobs } from '../runner.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';
import { budgetRowOf, type BudgetResult, type BudgetRun } from './budget.js';
import { policySpecOf } from './policy-spec.js';

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
  const json = readJsonFile(path.path, where);
  checkServiceConfigShape(json, where);
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

/** The top-level keys of a gRPC service config that carry retries (gRFC A6). */
const SERVICE_CONFIG_KEYS = ['methodConfig', 'retryPolicy', 'retryThrottling'];
/** The fields of a bare retry policy, which `parseGrpcServiceConfig` also takes at the top level. */
const RETRY_POLICY_KEYS = ['maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes'];

/**
 * Refuses a file with none of a service config's retry keys at its top level. gRPC reads `{}` or a
 * file of unknown keys as a valid config that never retries, so the lab would add a row of a policy
 * nobody wrote: most likely the wrong file was given (a lab scenario, meant for `--config`).
 */
function checkServiceConfigShape(json: unknown, where: string): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return; // the parser names the type
  const keys = Object.keys(json);
  if (keys.some((k) => SERVICE_CONFIG_KEYS.includes(k) || RETRY_POLICY_KEYS.includes(k))) return;
  const found = keys.length === 0 ? 'an empty object' : `${keys.slice(0, 5).map((k) => quote(k, 40)).join(', ')}${keys.length > 5 ? ', …' : ''}`;
  const misspelt = keys.map((k) => [k, closestName(k, [...SERVICE_CONFIG_KEYS, ...RETRY_POLICY_KEYS])] as const).find(([, near]) => near !== undefined);
  const hint = ['clients', 'server', 'policies'].every((k) => keys.includes(k))
    ? ' (a lab scenario: give it to --config)'
    : misspelt === undefined
      ? ''
      : ` (${quote(misspelt[0], 40)}: did you mean ${misspelt[1]!}?)`;
  throw new UsageError(`${where}: not a gRPC service config: expected ${SERVICE_CONFIG_KEYS.join(', ')} or a bare retry policy's fields (maxAttempts, …) at the top level, found ${found}${hint}`);
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
  return { run, rows: run.policies.map((policy, i) => budgetRowOf(policy.name, metrics.slice(i * n, (i + 1) * n))) };
}
