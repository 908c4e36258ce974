import type { BudgetRow, ContentionRow, HedgingRow, LayersRow, MetastableRow, RunResult } from 'herdless/sim';
import type { ArrivalBin } from '../charts/series.js';
import type { PerSecondPoint, TokenPoint } from '../charts/specs.js';
import type { ContentionSettings } from '../experiments/contention.js';
import type { HedgingRun } from '../experiments/hedging.js';
import type { HerdRun } from '../experiments/herd.js';
import type { MetastableSecond, MetastableSettings } from '../experiments/metastable.js';
import type { BudgetPageRun, LayersPageRun } from './form.js';

/*
 * Messages between the lab page and its Web Worker. The worker runs the library's engine; the page
 * only draws. Results cross as plain data (structured clone). Every message carries the id of the
 * run it belongs to, so that the page drops messages of a run it replaced or cancelled.
 */

/** Page → worker: run one experiment. */
export type RunRequest =
  | { type: 'run'; id: number; experiment: 'herd'; run: Omit<HerdRun, 'workers'> }
  | { type: 'run'; id: number; experiment: 'budget'; run: BudgetPageRun }
  | { type: 'run'; id: number; experiment: 'layers'; run: LayersPageRun }
  | { type: 'run'; id: number; experiment: 'hedging'; run: HedgingRun }
  | { type: 'run'; id: number; experiment: 'contention'; run: ContentionSettings }
  | { type: 'run'; id: number; experiment: 'metastable'; run: MetastableSettings };

/** Worker → page, while a run goes: `done` of `total` runs finished, and how far the current one is. */
export interface ProgressMessage {
  type: 'progress';
  id: number;
  done: number;
  total: number;
  /** The run under way: its policy and seed, and the share of its ticks simulated (0–1). */
  policy: string;
  seed: number;
  fraction: number;
  /**
   * The step under way in words, for the experiments whose runs are too short to report within
   * (hedging: a run; contention: a cell of seeds; metastable: a combination over its seeds). When
   * given, the status shows it instead of the policy, seed and fraction.
   */
  step?: string;
}

/** Worker → page, herd: every run (in policy, then seed order) and the first seed's arrivals per 100 ms. */
export interface HerdDone {
  type: 'done';
  id: number;
  experiment: 'herd';
  runs: { policy: string; results: Omit<RunResult, 'perTick'>[] }[];
  bins: ArrivalBin[];
}

/** Worker → page, budget: the table's rows, the first seed's arrivals per second, and client 0's tokens under gRPC throttling. */
export interface BudgetDone {
  type: 'done';
  id: number;
  experiment: 'budget';
  rows: BudgetRow[];
  perSecond: PerSecondPoint[];
  tokens: TokenPoint[];
}

/** Worker → page, layers: the calls reaching each service under both policies. */
export interface LayersDone {
  type: 'done';
  id: number;
  experiment: 'layers';
  rows: LayersRow[];
}

/** Worker → page, hedging: one row per (load, policy). */
export interface HedgingDone {
  type: 'done';
  id: number;
  experiment: 'hedging';
  rows: HedgingRow[];
}

/** Worker → page, contention: one row per (clients, strategy). */
export interface ContentionDone {
  type: 'done';
  id: number;
  experiment: 'contention';
  rows: ContentionRow[];
}

/** Worker → page, metastable: one row per combination, and the first seed's per-second series of each (the figures). */
export interface MetastableDone {
  type: 'done';
  id: number;
  experiment: 'metastable';
  rows: MetastableRow[];
  trace: MetastableSecond[];
}

export type DoneMessage = HerdDone | BudgetDone | LayersDone | HedgingDone | ContentionDone | MetastableDone;

/** Worker → page: the run failed (a bug, or an option the form did not catch). */
export interface ErrorMessage {
  type: 'error';
  id: number;
  message: string;
}

export type WorkerMessage = ProgressMessage | DoneMessage | ErrorMessage;
