import { formatFixed, herdScenario, scenarioToSpec, type HerdRow, type PolicySpec, type RunResult, type ScenarioSpec } from 'herdless/sim';
import { HERD_STRATEGIES, type HerdStrategy } from 'herdless/sim';
import { herdPolicySpec } from '../config.js';
import { seedText } from '../seeds.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';

// Where the lab's modules have always found it; it lives with the seed parser, free of the scenario schema.
export { seedText } from '../seeds.js';

/** Everything a herd-shaped run needs: shared settings, the policies to compare, the seeds. */
export interface HerdRun {
  /** `herd` for the article's preset, `scenario` for a config file. */
  experiment: 'herd' | 'scenario';
  name?: string;
  base: Omit<ScenarioSpec, 'policy'>;
  policies: PolicySpec[];
  seeds: number[];
  workers?: number;
}

/** The result of a herd-shaped run: one row per policy, and every run for `--per-seed`. */
export interface HerdResult {
  run: HerdRun;
  rows: HerdRow[];
  runs: { policy: string; results: RunResult[] }[];
}

/** The article's herd preset (1,000 clients, article server, 120 s) with a first-send spread in ms. */
export function herdBase(spreadMs: number): Omit<ScenarioSpec, 'policy'> {
  const { policy: _policy, ...base } = scenarioToSpec(herdScenario('immediate', { spreadMs }));
  return base;
}

/** The article's strategies as policy specs, in table order (or the subset named). */
export function herdPolicies(names: readonly HerdStrategy[] = HERD_STRATEGIES): PolicySpec[] {
  return names.map(herdPolicySpec);
}

const num = (x: number, digits: number, width: number): string => formatFixed(x, digits).padStart(width);

/** A count for a table note: a whole number as is, else one decimal (a mean over seeds). */
const count = (x: number): string => (Number.isInteger(x) ? String(x) : formatFixed(x, 1));

/**
 * The table in the article's layout: finish s as mean (min-max) with 2 decimals, requests with 0,
 * crashes' mean with 1, and a note when some runs did not finish by the horizon ("(3 unfinished)")
 * or some requests gave up ("(969 gave up)", the mean per run), with a footnote saying what that means.
 * The article's strategies never give up, so their table is the article's, digit for digit.
 */
export function herdTable(result: HerdResult): string {
  const width = Math.max(14, ...result.rows.map((r) => r.strategy.length));
  const lines = [
    `${'strategy'.padEnd(width)} ${'finish s (mean, min-max)'.padEnd(21)}   ${'requests (mean, min-max)'.padEnd(28)}   crashes`,
  ];
  for (const r of result.rows) {
    const line =
      `${r.strategy.padEnd(width)} ${num(r.finish.mean, 2, 6)} (${num(r.finish.min, 2, 6)}-${num(r.finish.max, 2, 6)})` +
      `   ${num(r.requests.mean, 0, 8)} (${num(r.requests.min, 0, 8)}-${num(r.requests.max, 0, 8)})` +
      `   ${num(r.crashes.mean, 1, 5)}`;
    const notes = [...(r.unfinished > 0 ? [`${r.unfinished} unfinished`] : []), ...(r.gaveUp.max > 0 ? [`${count(r.gaveUp.mean)} gave up`] : [])];
    lines.push(notes.length > 0 ? `${line} (${notes.join(', ')})` : line);
  }
  if (result.rows.some((r) => r.gaveUp.max > 0)) {
    lines.push('"gave up": requests per run (mean) that ran out of attempts or were refused a retry by the budget; finish is when the last request succeeded or gave up');
  }
  return lines.join('\n');
}

/** One line per run, `full jitter seed 0: finish 10.50 requests 6055 crashes 1` (+ ` unfinished`, ` gave up 969`). */
export function herdPerSeed(result: HerdResult): string {
  return result.runs
    .flatMap(({ policy, results }) =>
      results.map(
        (r) => `${policy} seed ${r.seed}: finish ${formatFixed(r.finishS, 2)} requests ${r.requests} crashes ${r.crashes}${r.finished ? '' : ' unfinished'}${r.gaveUp > 0 ? ` gave up ${r.gaveUp}` : ''}`,
      ),
    )
    .join('\n');
}

/**
 * The JSON contract: `{"experiment":"herd","spread":0,"seeds":[…],"rows":[{"strategy", "finish":{mean,min,max},
 * "requests":{…}, "crashes":{…}, "unfinished", "gaveUp":{…}}]}` — means unrounded, finish in seconds (when the
 * last request succeeded or gave up, or the horizon), spread in seconds. A config file's run says
 * `"experiment":"scenario"` and adds its `name`. `--per-seed` adds `"runs"`, each with `succeeded` and `gaveUp`.
 */
export function herdJson(result: HerdResult, perSeed: boolean): object {
  const { run } = result;
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: run.experiment,
    ...(run.experiment === 'scenario' ? { name: run.name } : {}),
    ...(run.base.arrivals.kind === 'together' ? { spread: run.base.arrivals.spreadMs / 1000 } : {}),
    seeds: run.seeds,
    rows: result.rows.map((r) => ({ strategy: r.strategy, finish: r.finish, requests: r.requests, crashes: r.crashes, unfinished: r.unfinished, gaveUp: r.gaveUp })),
    ...(perSeed
      ? {
          runs: result.runs.flatMap(({ policy, results }) =>
            results.map((r) => ({
              strategy: policy,
              seed: r.seed,
              finish: r.finishS,
              requests: r.requests,
              crashes: r.crashes,
              finished: r.finished,
              succeeded: r.succeeded,
              gaveUp: r.gaveUp,
            })),
          ),
        }
      : {}),
  };
}

/** CSV: one row per policy (or per run with `--per-seed`), with a header. */
export function herdCsv(result: HerdResult, perSeed: boolean): string {
  const q = (s: string): string => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  if (perSeed) {
    return [
      'strategy,seed,finish_s,requests,crashes,finished,succeeded,gave_up',
      ...result.runs.flatMap(({ policy, results }) =>
        results.map((r) => `${q(policy)},${r.seed},${r.finishS},${r.requests},${r.crashes},${r.finished},${r.succeeded},${r.gaveUp}`),
      ),
    ].join('\n');
  }
  return [
    'strategy,finish_s_mean,finish_s_min,finish_s_max,requests_mean,requests_min,requests_max,crashes_mean,crashes_min,crashes_max,unfinished,gave_up_mean,gave_up_min,gave_up_max',
    ...result.rows.map((r) =>
      [q(r.strategy), r.finish.mean, r.finish.min, r.finish.max, r.requests.mean, r.requests.min, r.requests.max, r.crashes.mean, r.crashes.min, r.crashes.max, r.unfinished, r.gaveUp.mean, r.gaveUp.min, r.gaveUp.max].join(','),
    ),
  ].join('\n');
}

/** The line the CLI prints above a herd table: `# herd: 1000 clients, first sends spread over 0 s, seeds 0-19`. */
export function describeRun(run: HerdRun): string {
  const a = run.base.arrivals;
  const arrivals = a.kind === 'together' ? `first sends spread over ${a.spreadMs / 1000} s` : `Poisson arrivals, ${a.ratePerSecond}/s per client`;
  const title = run.experiment === 'herd' ? 'herd' : `scenario "${run.name}"`;
  return `# ${title}: ${run.base.clients} ${run.base.clients === 1 ? 'client' : 'clients'}, ${arrivals}, seeds ${seedText(run.seeds)}`;
}
