import type { RunResult } from 'herdless/sim';
import type { ArrivalBin } from '../charts/series.js';
import type { HerdRun } from '../experiments/herd.js';

/*
 * Messages between the lab page and its Web Worker. The worker runs the library's engine; the page
 * only draws. Results cross as plain data (structured clone).
 */

/** Page → worker: run every policy of `run` over its seeds. */
export interface RunRequest {
  type: 'run';
  id: number;
  run: Omit<HerdRun, 'workers'>;
}

/** Worker → page, after each finished run. */
export interface ProgressMessage {
  type: 'progress';
  id: number;
  done: number;
  total: number;
}

/** Worker → page: every run (in policy, then seed order) and the first seed's arrivals per 100 ms. */
export interface DoneMessage {
  type: 'done';
  id: number;
  runs: { policy: string; results: Omit<RunResult, 'perTick'>[] }[];
  bins: ArrivalBin[];
}

/** Worker → page: the run failed (a bug, or an option the form did not catch). */
export interface ErrorMessage {
  type: 'error';
  id: number;
  message: string;
}

export type WorkerMessage = ProgressMessage | DoneMessage | ErrorMessage;
