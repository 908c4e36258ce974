import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { budgetMetrics, runScenario, scenarioFromSpec, type BudgetMetrics, type RunResult, type ScenarioSpec } from 'herdless/sim';

/**
 * One simulation run to do: a scenario (as JSON data, so it can cross to a worker) and a seed.
 * `measure: 'budget'` returns the budget table's metrics of the run instead of the run itself, so
 * its per-tick series never cross between threads.
 */
export interface Job {
  id: number;
  spec: ScenarioSpec;
  seed: number;
  measure?: 'budget';
}

/** Does one job, in the calling thread (the worker threads call this too). */
export function runJob(job: Omit<Job, 'id'>): RunResult | BudgetMetrics {
  const scenario = scenarioFromSpec(job.spec);
  if (job.measure === 'budget') return budgetMetrics(scenario, runScenario(scenario, job.seed, { perTick: true }));
  return runScenario(scenario, job.seed);
}

/** How to run a batch of jobs. */
export interface RunnerOptions {
  /** Worker threads; 0 runs every job in this thread. Default: the machine's cores (at most 8). */
  workers?: number;
  /** Called after each finished job with (done, total). */
  onProgress?: (done: number, total: number) => void;
}

/** The default worker count: one per core, at most 8. */
export function defaultWorkers(): number {
  return Math.min(8, availableParallelism());
}

/**
 * Runs every job and returns the results in job order. Runs are independent and deterministic,
 * so spreading them over worker threads changes the wall time, never a number.
 */
export function runJobs(jobs: readonly Omit<Job, 'id' | 'measure'>[], options: RunnerOptions = {}): Promise<RunResult[]> {
  return runPool<RunResult>(jobs, options);
}

/** Runs budget jobs and returns each run's budget metrics, in job order (see {@link runJobs}). */
export function runBudgetJobs(jobs: readonly Omit<Job, 'id' | 'measure'>[], options: RunnerOptions = {}): Promise<BudgetMetrics[]> {
  return runPool<BudgetMetrics>(
    jobs.map((job) => ({ ...job, measure: 'budget' as const })),
    options,
  );
}

async function runPool<R>(jobs: readonly Omit<Job, 'id'>[], options: RunnerOptions): Promise<R[]> {
  const total = jobs.length;
  const results = new Array<R>(total);
  const workers = Math.min(options.workers ?? defaultWorkers(), total);
  if (workers <= 1) {
    jobs.forEach((job, i) => {
      results[i] = runJob(job) as R;
      options.onProgress?.(i + 1, total);
    });
    return results;
  }
  let next = 0;
  let done = 0;
  const url = new URL('./worker.js', import.meta.url);
  await Promise.all(
    Array.from({ length: workers }, () => {
      const worker = new Worker(url);
      return new Promise<void>((resolve, reject) => {
        const feed = (): void => {
          if (next >= total) {
            void worker.terminate().then(() => resolve());
            return;
          }
          const id = next++;
          worker.postMessage({ ...jobs[id]!, id } satisfies Job);
        };
        worker.on('message', (msg: { id: number; result: R }) => {
          results[msg.id] = msg.result;
          options.onProgress?.(++done, total);
          feed();
        });
        worker.on('error', reject);
        feed();
      });
    }),
  );
  return results;
}
