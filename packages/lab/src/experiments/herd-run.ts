import { herdRow, type RunResult } from 'herdless/sim';
import { progressBar } from '../progress.js';
import { runJobs } from '../runner.js';
import type { HerdResult, HerdRun } from './herd.js';

/** Runs every policy over every seed (on worker threads) and folds the results into rows. */
export async function runHerdExperiment(run: HerdRun): Promise<HerdResult> {
  const jobs = run.policies.flatMap((policy) => run.seeds.map((seed) => ({ spec: { ...run.base, policy }, seed })));
  const bar = progressBar(run.experiment);
  let results: RunResult[];
  try {
    results = await runJobs(jobs, { ...(run.workers === undefined ? {} : { workers: run.workers }), onProgress: bar.update });
  } finally {
    bar.stop();
  }
  const n = run.seeds.length;
  const runs = run.policies.map((p, i) => ({ policy: p.name, results: results.slice(i * n, (i + 1) * n) }));
  return { run, rows: runs.map((r) => herdRow(r.policy, r.results)), runs };
}
