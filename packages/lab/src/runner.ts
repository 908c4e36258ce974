import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { runScenario, scenarioFromSpec, type RunResult, type ScenarioSpec } from 'herdless/sim';

/** One simulation run to do: a scenario (as JSON data, so it can cross to a worker) and a seed. */
export interface Job {
  id: number;
  spec: ScenarioSpec;
  seed: number;
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
export async function runJobs(jobs: readonly Omit<Job, 'id'>[], options: RunnerOptions = {}): Promise<RunResult[]> {
  const total = jobs.length;
  const results = new Array<RunResult>(total);
  const workers = Math.min(options.workers ?? defaultWorkers(), total);
  if (workers <= 1) {
    jobs.forEach((job, i) => {
      results[i] = runScenario(scenarioFromSpec(job.spec), job.seed);
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
          worker.postMessage({ id, spec: jobs[id]!.spec, seed: jobs[id]!.seed } satisfies Job);
        };
        worker.on('message', (msg: { id: number; result: RunResult }) => {
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
