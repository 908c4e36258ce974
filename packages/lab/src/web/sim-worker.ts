// The lab page's Web Worker: runs the library's own engine (herdless/sim) off the page's thread.
import { budgetMetrics, budgetTrace, runLayers, runScenario, scenarioFromSpec, type BudgetMetrics, type RunResult, type ScenarioSpec } from 'herdless/sim';
import { budgetRowOf } from '../experiments/budget.js';
import { runContentionExperiment, type ContentionSettings } from '../experiments/contention.js';
import { runHedgingExperiment, type HedgingRun } from '../experiments/hedging.js';
import { combinationName, metastableTrace, runMetastableExperiment, type MetastableSettings } from '../experiments/metastable.js';
import { seedText } from '../seeds.js';
import { arrivalBins, type ArrivalBin } from '../charts/series.js';
import type { PerSecondPoint, TokenPoint } from '../charts/specs.js';
import type { BudgetPageRun } from './form.js';
import type { DoneMessage, RunRequest, WorkerMessage } from './protocol.js';

/** The page's arrival chart bins runs by 100 ms, like the report's figures. */
const BIN_MS = 100;
/** Progress messages per run: enough for a smooth bar, few enough to cost nothing. */
const STEPS_PER_RUN = 50;

const scope = self as unknown as { onmessage: ((e: MessageEvent<RunRequest>) => void) | null; postMessage(message: WorkerMessage): void };

/** Runs one (scenario, seed), reporting its progress every 1/STEPS_PER_RUN of its ticks. */
function runOne(id: number, spec: ScenarioSpec, seed: number, perTick: boolean, done: number, total: number): RunResult {
  const ticks = Math.round(spec.horizonMs / spec.server.tickMs);
  const every = Math.max(1, Math.floor(ticks / STEPS_PER_RUN));
  const progress = (fraction: number): void => scope.postMessage({ type: 'progress', id, done, total, policy: spec.policy.name, seed, fraction });
  progress(0);
  return runScenario(scenarioFromSpec(spec), seed, {
    perTick,
    onTick: (t) => {
      if (t % every === 0) progress(t / ticks);
    },
  });
}

function herd(id: number, run: Extract<RunRequest, { experiment: 'herd' }>['run']): DoneMessage {
  const total = run.policies.length * run.seeds.length;
  let done = 0;
  const bins: ArrivalBin[] = [];
  const runs = run.policies.map((policy) => {
    const spec = { ...run.base, policy };
    const results = run.seeds.map((seed, i): Omit<RunResult, 'perTick'> => {
      const { perTick, ...result } = runOne(id, spec, seed, i === 0, done++, total);
      if (i === 0) bins.push(...arrivalBins(policy.name, { ...result, perTick: perTick! }, spec.server.tickMs, BIN_MS));
      return result;
    });
    return { policy: policy.name, results };
  });
  return { type: 'done', id, experiment: 'herd', runs, bins };
}

/** Sums a per-tick series into seconds. */
function perSecondOf(series: Int32Array, ticksPerSecond: number): number[] {
  const out: number[] = [];
  for (let t = 0; t < series.length; t += ticksPerSecond) out.push(series.subarray(t, t + ticksPerSecond).reduce((a, b) => a + b, 0));
  return out;
}

function budget(id: number, run: BudgetPageRun): DoneMessage {
  const total = run.policies.length * run.seeds.length;
  let done = 0;
  const perSecond: PerSecondPoint[] = [];
  const ticksPerSecond = Math.round(1000 / run.base.server.tickMs);
  const rows = run.policies.map((policy) => {
    const spec = { ...run.base, policy };
    const scenario = scenarioFromSpec(spec);
    const metrics: BudgetMetrics[] = run.seeds.map((seed, i) => {
      const result = runOne(id, spec, seed, true, done++, total);
      if (i === 0) {
        const fresh = perSecondOf(result.perTick!.fresh, ticksPerSecond);
        perSecondOf(result.perTick!.arrivals, ticksPerSecond).forEach((arrivals, second) => perSecond.push({ policy: policy.name, second, arrivals, fresh: fresh[second]! }));
      }
      return budgetMetrics(scenario, result);
    });
    return budgetRowOf(policy.name, metrics);
  });
  // The article's token figure: client 0 of the gRPC-throttled policy, first seed, same outage and rate.
  const trace = budgetTrace(run.seeds[0]!, [], { ratePerSecond: run.ratePerSecond, outage: run.outage });
  const tokens: TokenPoint[] = Array.from(trace.tokens, (value, tick) => ({ t: Number(((tick * run.base.server.tickMs) / 1000).toFixed(2)), tokens: value }));
  return { type: 'done', id, experiment: 'budget', rows, perSecond, tokens };
}

/** Progress as step `done` of `total` starts, described in words (`run 4 of 150: …`). */
function step(id: number, done: number, total: number, what: string): void {
  scope.postMessage({ type: 'progress', id, done, total, policy: '', seed: 0, fraction: 0, step: what });
}

/** Hedging: the lab's own loop over loads, policies and seeds, reporting each run as it starts. */
function hedging(id: number, run: HedgingRun): DoneMessage {
  const [p, n] = [run.policies.length, run.seeds.length];
  const total = run.loads.length * p * n;
  const what = (k: number): string => `run ${k + 1} of ${total}: ${run.policies[Math.floor(k / n) % p]} at ${Math.round(run.loads[Math.floor(k / (n * p))]! * 100)}% load, seed ${run.seeds[k % n]}`;
  let done = 0;
  step(id, 0, total, what(0));
  const { rows } = runHedgingExperiment(run, () => {
    if (++done < total) step(id, done, total, what(done));
  });
  return { type: 'done', id, experiment: 'hedging', rows };
}

/** Contention: the table cell by cell (each cell's runs are seeded alone, so the rows are the whole table's). */
function contention(id: number, run: ContentionSettings): DoneMessage {
  const cells = run.clients.flatMap((clients) => run.strategies.map((strategy) => ({ clients, strategy })));
  const rows = cells.flatMap(({ clients, strategy }, i) => {
    step(id, i, cells.length, `cell ${i + 1} of ${cells.length}: ${strategy}, ${clients} clients, seeds ${seedText(run.seeds)}`);
    return runContentionExperiment({ strategies: [strategy], clients: [clients], seeds: run.seeds }).rows;
  });
  return { type: 'done', id, experiment: 'contention', rows };
}

/** Metastable: combination by combination, each over the seeds, then the first seed's trace of each for the figures. */
function metastable(id: number, run: MetastableSettings): DoneMessage {
  const total = run.combinations.length;
  const rows = run.combinations.map((c, i) => {
    step(id, i, total, `combination ${i + 1} of ${total}: ${combinationName({ policy: c.policy.name, server: c.server })}, seeds ${seedText(run.seeds)}`);
    return runMetastableExperiment({ ...run, combinations: [c] }).rows[0]!;
  });
  return { type: 'done', id, experiment: 'metastable', rows, trace: metastableTrace(run, run.seeds[0]!) };
}

scope.onmessage = (event) => {
  const request = event.data;
  const { id } = request;
  void (async () => {
    try {
      if (request.experiment === 'herd') scope.postMessage(herd(id, request.run));
      else if (request.experiment === 'budget') scope.postMessage(budget(id, request.run));
      else if (request.experiment === 'hedging') scope.postMessage(hedging(id, request.run));
      else if (request.experiment === 'contention') scope.postMessage(contention(id, request.run));
      else if (request.experiment === 'metastable') scope.postMessage(metastable(id, request.run));
      else scope.postMessage({ type: 'done', id, experiment: 'layers', rows: await runLayers({ depth: request.run.depth, attempts: request.run.attempts }) });
    } catch (error) {
      scope.postMessage({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
    }
  })();
};
