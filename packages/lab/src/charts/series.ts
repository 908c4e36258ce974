import { type Backoff } from 'herdless';
import { PyRandom } from 'herdless/sim';
import type { RunResult } from 'herdless/sim';
import type { HerdResult } from '../experiments/herd.js';

/*
 * The data behind the lab's charts: plain rows (JSON- and CSV-ready) built from the engine's
 * results or from the library's backoff objects. Pure, so the report (Node) and the lab page (a
 * browser worker) build the very same rows.
 */

/** Requests that reached the server in one time bin of one run. */
export interface ArrivalBin {
  /** The run's label, e.g. `exponential`. */
  series: string;
  /** Bin start, s. */
  t: number;
  /** Bin end, s. */
  t2: number;
  arrivals: number;
}

/**
 * Sums a run's per-tick arrivals into bins of `binMs` (100 ms for the article's figures), up to
 * the tick at which the run ended. `binMs` must be a whole number of ticks.
 * @throws RangeError when the run has no per-tick series or `binMs` is not a multiple of `tickMs`.
 */
export function arrivalBins(series: string, run: RunResult, tickMs: number, binMs = 100): ArrivalBin[] {
  if (!run.perTick) throw new RangeError('arrivalBins: the run has no per-tick series (run it with perTick: true)');
  const ticksPerBin = binMs / tickMs;
  if (!Number.isInteger(ticksPerBin) || ticksPerBin < 1) throw new RangeError(`arrivalBins: binMs ${binMs} is not a whole number of ${tickMs} ms ticks`);
  const arrivals = run.perTick.arrivals;
  const bins: ArrivalBin[] = [];
  for (let start = 0; start < run.ticks; start += ticksPerBin) {
    let sum = 0;
    for (let t = start; t < Math.min(start + ticksPerBin, run.ticks); t++) sum += arrivals[t]!;
    const b = start / ticksPerBin;
    bins.push({ series, t: (b * binMs) / 1000, t2: ((b + 1) * binMs) / 1000, arrivals: sum });
  }
  return bins;
}

/** One drawn wait: client `client`'s wait after its `failure`-th failure. */
export interface WaitPoint {
  strategy: string;
  client: number;
  /** 1 after the first failure, 2 after the second, … */
  failure: number;
  /** The drawn wait, s. */
  waitS: number;
  /** The wait without jitter for the same failure count, s (the dashed line). */
  noJitterS: number;
}

/** How to draw {@link waitPoints}. */
export interface WaitDraw {
  /** Clients per strategy. Article: 40. */
  clients: number;
  /** Failure counts 1..failures. */
  failures: number;
  /** Seed of the generator (one per strategy, so each panel stands on its own). */
  seed: number;
}

/**
 * Each client's successive waits, drawn with the library's own backoff objects: for each strategy
 * one `PyRandom(seed)`, clients in order, failure counts 1..N, each wait fed back as the previous
 * one (decorrelated jitter reads it). `reference` gives the dashed no-jitter value.
 */
export function waitPoints(strategies: readonly { label: string; backoff: Backoff }[], reference: Backoff, draw: WaitDraw): WaitPoint[] {
  const points: WaitPoint[] = [];
  const none = new PyRandom(0); // the reference has no jitter; it never draws
  for (const { label, backoff } of strategies) {
    const rng = new PyRandom(draw.seed);
    for (let client = 0; client < draw.clients; client++) {
      let previous = 0;
      for (let failure = 1; failure <= draw.failures; failure++) {
        previous = backoff.delay(failure, previous, rng);
        points.push({ strategy: label, client, failure, waitS: previous / 1000, noJitterS: reference.delay(failure, 0, none) / 1000 });
      }
    }
  }
  return points;
}

/** One bar of the per-strategy summary: a metric's mean and range over the seeds. */
export interface SummaryRow {
  strategy: string;
  /** `finish s` or `requests`. */
  metric: 'finish s' | 'requests';
  mean: number;
  min: number;
  max: number;
  /** Runs that had not finished at the horizon. */
  unfinished: number;
  /** Seeds in the summary. */
  runs: number;
}

/** The herd table as chart rows: finish time and total requests per strategy (mean, min, max). */
export function summaryRows(result: HerdResult): SummaryRow[] {
  const runs = result.run.seeds.length;
  return result.rows.flatMap((r) => [
    { strategy: r.strategy, metric: 'finish s' as const, ...r.finish, unfinished: r.unfinished, runs },
    { strategy: r.strategy, metric: 'requests' as const, ...r.requests, unfinished: r.unfinished, runs },
  ]);
}

/** One run of the lab page's per-seed chart. */
export interface SeedRow {
  strategy: string;
  seed: number;
  finishS: number;
  requests: number;
  crashes: number;
  finished: boolean;
}

/** Every run of a herd-shaped result, one row each. */
export function seedRows(result: HerdResult): SeedRow[] {
  return result.runs.flatMap(({ policy, results }) =>
    results.map((r) => ({ strategy: policy, seed: r.seed, finishS: r.finishS, requests: r.requests, crashes: r.crashes, finished: r.finished })),
  );
}

/** Rows as CSV with a header from the first row's keys (strings quoted when needed). */
export function rowsToCsv(rows: readonly object[]): string {
  if (rows.length === 0) return '';
  const keys = Object.keys(rows[0]!);
  const cell = (v: unknown): string => {
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [keys.join(','), ...rows.map((r) => keys.map((k) => cell((r as Record<string, unknown>)[k])).join(','))].join('\n');
}
