import { HEDGING_POLICIES, formatFixed } from 'herdless/sim';
import { hedgingSpec, type HedgingPoint } from '../charts/hedging.js';
import { DEFAULT_HEDGING_RUN, hedgingCsv, hedgingPoints, hedgingJson, hedgingTable, hedgingTitle, runHedgingExperiment, type HedgingResult } from '../experiments/hedging.js';
import { defineExperiment, defineFigure, resultOf } from './registry.js';

/** Hedging against a tail-latency server, offered load swept 10%–100%. */
export const hedgingExperiment = defineExperiment<HedgingResult>({
  id: 'hedging',
  title: 'Hedging: cutting the tail without starting a herd',
  explanation:
    'A client calls a service of 10 replicas, each one worker with a FIFO queue; 98% of requests take about 4 ms, 2% take about 60 ms ' +
    '(two lognormal modes: the independent slow requests hedging exists for). Offered load is swept from 10% to 100% of capacity (Poisson). ' +
    'The clients run hedge()’s own policy objects: no hedging; a second attempt on another replica after a fixed 10 ms; after the p95 of ' +
    'the latencies the client has seen (latencyPercentile); and each of those under retryRatioBudget({ ratio: 0.1 }). A cancelled attempt ' +
    'still in its queue costs nothing; one already in service runs to the end. At low load hedging cuts the p99 several-fold for a few ' +
    'percent more requests. As load grows, queueing makes every first attempt slower than a fixed delay, so unbudgeted fixed-delay hedging ' +
    'sends a second copy of nearly every call — attempts per call head to 2 — and past the crossover its p99 is worse than not hedging. ' +
    'The budget caps the extra attempts at about 11% of requests, and its p99 stays at or below no hedging’s.',
  command: 'npm run lab -- hedging',
  seeds: '0-2',
  run: () => Promise.resolve(runHedgingExperiment(DEFAULT_HEDGING_RUN)),
  table: (result) => `${hedgingTitle(result.run, '0-2')}\n${hedgingTable(result)}`,
  json: hedgingJson,
  csv: hedgingCsv,
});

const hedgingFigure = defineFigure<HedgingPoint>({
  id: 'hedging-load',
  section: 'hedging',
  title: 'Latency and attempts per call against offered load, per client (means over seeds 0-2; latency on a log scale)',
  explanation: hedgingFigureText,
  command: 'npm run lab -- hedging --figure-data',
  data: (results) => hedgingPoints(resultOf<HedgingResult>(results, 'hedging')),
  spec: (points, size) => hedgingSpec(points, HEDGING_POLICIES, size),
});

/** The figure's paragraph, quoting the figure's own points. */
export function hedgingFigureText(points: readonly HedgingPoint[]): string {
  const at = (policy: string, loadPct: number, metric: string): number =>
    points.find((p) => p.policy === policy && p.loadPct === loadPct && p.metric === metric)?.value ?? NaN;
  const loads = [...new Set(points.map((p) => p.loadPct))].sort((a, b) => a - b);
  const low = loads[0]!;
  const high = loads[loads.length - 1]!;
  const cross = loads.find((l) => at('fixed delay', l, 'p99 (ms)') > at('no hedging', l, 'p99 (ms)'));
  const ms = (x: number): string => formatFixed(x, 0);
  return (
    `At ${low}% load a fixed 10 ms hedge takes the p99 from ${ms(at('no hedging', low, 'p99 (ms)'))} ms to ${ms(at('fixed delay', low, 'p99 (ms)'))} ms ` +
    `for ${formatFixed((at('fixed delay', low, 'attempts per call') - 1) * 100, 1)}% more requests. ` +
    (cross === undefined ? '' : `From ${cross}% load the unbudgeted fixed delay is worse than not hedging: `) +
    `at ${high}% it sends ${formatFixed(at('fixed delay', high, 'attempts per call'), 2)} attempts per call and its p99 is ${ms(at('fixed delay', high, 'p99 (ms)'))} ms ` +
    `against ${ms(at('no hedging', high, 'p99 (ms)'))} ms without hedging, while under the budget it sends ${formatFixed(at('fixed delay + budget', high, 'attempts per call'), 3)} ` +
    `and its p99 is ${ms(at('fixed delay + budget', high, 'p99 (ms)'))} ms. The p95 delay follows the queueing up, so it hedges about 5–10% of calls at every load ` +
    `even without a budget.`
  );
}

/** The hedging section's figures. */
export const HEDGING_FIGURES = [hedgingFigure];
