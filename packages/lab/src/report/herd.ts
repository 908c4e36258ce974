import { ARTICLE_SERVER, formatFixed, herdBackoff, runScenario, scenarioFromSpec, type HerdStrategy } from 'herdless/sim';
import { arrivalBins, summaryRows, waitPoints, type ArrivalBin } from '../charts/series.js';
import { arrivalsSpec, summarySpec, waitsSpec } from '../charts/specs.js';
import { herdPolicySpec } from '../config.js';
import { describeRun, herdBase, herdCsv, herdJson, herdPolicies, herdTable, type HerdResult } from '../experiments/herd.js';
import { runHerdExperiment } from '../experiments/herd-run.js';
import { defineExperiment, defineFigure, resultOf, type LabResults } from './registry.js';

/** The seeds of the herd tables. */
const SEEDS = Array.from({ length: 20 }, (_, i) => i);
/** The arrival figures show this much of a run, s. */
const WINDOW_S = 30;
const BIN_MS = 100;

function herdExperimentFor(id: string, spreadS: number, title: string, explanation: string) {
  return defineExperiment<HerdResult>({
    id,
    title,
    explanation,
    command: spreadS === 0 ? 'npm run lab -- herd' : `npm run lab -- herd --spread ${spreadS}`,
    seeds: '0-19',
    run: (settings) =>
      runHerdExperiment({ experiment: 'herd', base: herdBase(spreadS * 1000), policies: herdPolicies(), seeds: SEEDS, ...settings }),
    table: (result) => `${describeRun(result.run)}\n${herdTable(result)}`,
    json: (result) => herdJson(result, true),
    csv: (result) => herdCsv(result, false),
  });
}

/** 1,000 clients fail together: the article's first table. */
export const herdExperiment = herdExperimentFor(
  'herd',
  0,
  '1,000 clients fail together',
  'All 1,000 clients send at t = 0 to a server that is starting up for 1 s (every request fails), then serves 5 requests per 10 ms ' +
    'and crashes for 1 s whenever more than 100 requests arrived in the last 100 ms. Each client retries with no attempt cap until ' +
    'it succeeds or 120 s pass. The table gives, over seeds 0–19, when the last client succeeded (120 s when some never did), ' +
    'how many requests reached the server, and how often it crashed. Without jitter no run finishes; with any of the three jitters every run does.',
);

/** The same herd with first sends spread over 0.9 s: the article's variant. */
export const herdSpreadExperiment = herdExperimentFor(
  'herd-spread',
  0.9,
  'The same herd with first sends spread over 0–0.9 s',
  'The same server and clients, but each client’s first send is uniform over the first 0.9 s. Fixed 1 s now finishes, after ' +
    'crashing the server about a dozen times; exponential backoff without jitter still never does. A spread at the start does not ' +
    'widen by itself when everyone waits the same: only jitter widens it on every return.',
);

/** Seed 0 of one strategy of a herd experiment, with per-tick series, as 100 ms bins. */
function binsOf(result: HerdResult, strategy: HerdStrategy, seed = 0): ArrivalBin[] {
  const spec = { ...result.run.base, policy: herdPolicySpec(strategy) };
  const run = runScenario(scenarioFromSpec(spec), seed, { perTick: true });
  return arrivalBins(strategy, run, spec.server.tickMs, BIN_MS);
}

/** The article server's capacity per 100 ms bin: 50. */
const CAPACITY_PER_BIN = (ARTICLE_SERVER.capacityPerTick * BIN_MS) / ARTICLE_SERVER.tickMs;

/** Where the bars of a series stand, as `0.2, 0.6, 1.4 s`. */
function barTimes(rows: readonly ArrivalBin[], series: string, atLeast: number): string {
  return rows
    .filter((r) => r.series === series && r.arrivals >= atLeast && r.t < WINDOW_S)
    .map((r) => formatFixed(r.t, 1))
    .join(', ');
}

const arrivalsFigure = defineFigure<ArrivalBin>({
  id: 'herd-arrivals',
  section: 'herd',
  title: 'Arrivals per 100 ms, seed 0: exponential backoff without jitter vs full jitter',
  explanation: (rows) => {
    const wall = rows.filter((r) => r.series === 'exponential' && r.arrivals > 0);
    const after = rows.filter((r) => r.series === 'full jitter' && r.t >= 2);
    const peak = Math.max(...after.map((r) => r.arrivals));
    return (
      `Without jitter the waits only double, so the 1,000 requests come back as one bar every time ` +
      `(${wall.every((r) => r.arrivals === 1000) ? 'every bar is 1,000' : 'bars of up to 1,000'}: at ${barTimes(rows, 'exponential', 1)} s within the first ${WINDOW_S} s, ` +
      `then every 10 s until the run is cut at 120 s). Full jitter draws each wait uniformly between 0 and the same exponential value: ` +
      `after the crash at start-up the arrivals spread out to the capacity line (the dashed red line, 50 per 100 ms; from 2 s on no bin exceeds ${peak}) ` +
      `and every client has succeeded by ${formatFixed(Math.max(...rows.filter((r) => r.series === 'full jitter').map((r) => r.t2)), 1)} s.`
    );
  },
  command: 'npm run lab -- herd --strategies "exponential,full jitter" --seeds 0 --bins 100',
  data: (results: LabResults) => {
    const herd = resultOf<HerdResult>(results, 'herd');
    return [...binsOf(herd, 'exponential'), ...binsOf(herd, 'full jitter')];
  },
  spec: (rows, size) =>
    arrivalsSpec(
      rows,
      [
        { series: 'exponential', title: 'exponential backoff, no jitter' },
        { series: 'full jitter', title: 'full jitter', yMax: 200 },
      ],
      { capacity: CAPACITY_PER_BIN, binMs: BIN_MS, windowS: WINDOW_S, ...size },
    ),
});

const JITTERS = ['full jitter', 'equal jitter', 'decorrelated'] as const;

const waitsFigure = defineFigure({
  id: 'backoff-waits',
  section: 'herd',
  title: 'Waits per failure count for 40 clients: full, equal and decorrelated jitter',
  explanation:
    'Each dot is one client’s wait after its n-th failure, drawn by the library’s own backoff objects (the herd strategies: ' +
    '200 ms × 2^(n−1) capped at 10 s; decorrelated from a 100 ms base); the dashed line is the wait without jitter. Full jitter ' +
    'spreads each wait from 0 up to the dashed value, so short waits occur at every count. Equal jitter always waits at least half ' +
    'of it. Decorrelated jitter draws from the previous wait rather than the count, so clients at the same count are spread widest.',
  command: 'npm run lab -- waits --strategies "full jitter,equal jitter,decorrelated" --clients 40 --failures 10 --seeds 0',
  data: () =>
    waitPoints(
      JITTERS.map((s) => ({ label: s, backoff: herdBackoff(s) })),
      herdBackoff('exponential'),
      { clients: 40, failures: 10, seed: 0 },
    ),
  spec: (rows, size) => waitsSpec(rows, JITTERS, size),
});

const summaryFigure = defineFigure({
  id: 'herd-summary',
  section: 'herd',
  title: 'Finish time and total requests per strategy, seeds 0–19 (mean, min–max)',
  explanation:
    'The table as a picture: the dot is the mean over 20 seeds, the bar spans the smallest and largest run. Immediate retry, fixed 1 s ' +
    'and exponential backoff without jitter never finish (red: cut at 120 s) and send the most requests — twelve million for immediate ' +
    'retries (note the log scale). The three jitters finish in 10–19 s with 6,000–8,500 requests; decorrelated jitter sends about a ' +
    'third more than the other two.',
  command: 'npm run lab -- herd --seeds 0-19 --format csv',
  data: (results) => summaryRows(resultOf<HerdResult>(results, 'herd')),
  spec: (rows, size) => summarySpec(rows, { horizonS: 120, ...size }),
});

const spreadFigure = defineFigure<ArrivalBin>({
  id: 'herd-spread-arrivals',
  section: 'herd-spread',
  title: 'Arrivals per 100 ms with first sends spread over 0–0.9 s, seed 0: fixed 1 s vs exponential',
  explanation: (rows) => {
    const fixedEnd = Math.max(...rows.filter((r) => r.series === 'fixed 1s').map((r) => r.t2));
    return (
      'Both keep the 0.9 s-wide block of the first sends and bring it back whole: the same wait for everyone never widens it. ' +
      `Fixed 1 s returns every second and crashes the server each time, but some requests succeed on every return, the block thins ` +
      `and falls under the crash limit; the last client succeeds at ${formatFixed(fixedEnd, 1)} s. Without jitter, exponential backoff ` +
      'brings the block back ever later and crashes the server on each return until the run is cut at 120 s.'
    );
  },
  command: 'npm run lab -- herd --spread 0.9 --strategies "fixed 1s,exponential" --seeds 0 --bins 100',
  data: (results) => {
    const spread = resultOf<HerdResult>(results, 'herd-spread');
    return [...binsOf(spread, 'fixed 1s'), ...binsOf(spread, 'exponential')];
  },
  spec: (rows, size) =>
    arrivalsSpec(
      rows,
      [
        { series: 'fixed 1s', title: 'fixed 1 s' },
        { series: 'exponential', title: 'exponential backoff, no jitter' },
      ],
      { capacity: CAPACITY_PER_BIN, binMs: BIN_MS, windowS: WINDOW_S, ...size },
    ),
});

/** The herd experiment's figures, in the article's order. */
export const HERD_FIGURES = [arrivalsFigure, waitsFigure, summaryFigure, spreadFigure];
