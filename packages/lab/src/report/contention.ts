import { formatFixed, type ContentionStrategy } from 'herdless/sim';
import { contentionSpec, type ContentionPoint } from '../charts/specs.js';
import { CONTENTION_DEFAULTS, contentionCsv, contentionPoints, contentionJson, contentionTable, contentionTitle, runContentionExperiment, type ContentionResult } from '../experiments/contention.js';
import { defineExperiment, defineFigure, resultOf } from './registry.js';

/** Clients contending for one row: Brooker's 2015 model, beside the herd's ranking. */
export const contentionExperiment = defineExperiment<ContentionResult>({
  id: 'contention',
  title: 'Contention: how the server fails decides which jitter wins',
  explanation:
    'The herd above fails by capacity: a server that serves 500 requests a second and crashes when flooded. There the three jitters ' +
    'finish close together and decorrelated jitter sends about 30% more requests. M. Brooker’s “Exponential Backoff And Jitter” ' +
    '(AWS, 2015) simulates another failure: N clients each update one row once under optimistic concurrency, so a write fails only ' +
    'because another client wrote first. Every message takes |N(10, 2)| ms; a client reads the version, writes with it, and after ' +
    'a failed write backs off (base 5 ms, cap 2 s) before reading again. As the article puts it, Brooker found full jitter doing ' +
    'the least work and equal jitter worse in both time and work: “if the assumption changes (contention or capacity), so does the ' +
    'ranking”. The table is the mean over 100 runs per cell (run r seeded with r, CPython’s generator), equal to an independent ' +
    'CPython implementation (scripts/contention-reference.py) to the printed digits.',
  command: 'npm run lab -- contention',
  seeds: '0-99',
  run: () => Promise.resolve(runContentionExperiment()),
  table: (result) => `${contentionTitle(result.settings.seeds)}\n${contentionTable(result)}`,
  json: contentionJson,
  csv: contentionCsv,
});

/** Which strategy has the smallest value at a client count. */
function least(points: readonly ContentionPoint[], clients: number, field: 'timeMs' | 'calls'): ContentionPoint {
  return points.filter((p) => p.clients === clients).reduce((a, b) => (b[field] < a[field] ? b : a));
}

const contentionFigure = defineFigure<ContentionPoint>({
  id: 'contention-means',
  section: 'contention',
  title: 'Mean time and mean calls against the number of clients, seeds 0–99 (the 2015 post’s two charts)',
  explanation: (points) => {
    const at = (clients: number, s: ContentionStrategy) => points.find((p) => p.clients === clients && p.strategy === s)!;
    const counts = [...new Set(points.map((p) => p.clients))];
    const fewest = counts.filter((n) => least(points, n, 'calls').strategy === 'full jitter');
    const top = counts[counts.length - 1]!;
    const equalSlowest = counts.every((n) => at(n, 'equal jitter').timeMs > at(n, 'full jitter').timeMs && at(n, 'equal jitter').timeMs > at(n, 'decorrelated').timeMs);
    return (
      `Full jitter makes the fewest calls at ${fewest.join(', ')} clients of ${counts.join(', ')} ` +
      `(${formatFixed(at(top, 'full jitter').calls, 2)} at ${top} against ${formatFixed(at(top, 'decorrelated').calls, 2)} for decorrelated, ` +
      `${formatFixed(at(top, 'equal jitter').calls, 2)} for equal jitter and ${formatFixed(at(top, 'exponential').calls, 2)} without jitter). ` +
      `${equalSlowest ? 'Equal jitter is the slowest of the three jitters at every count' : 'Equal jitter is not the slowest jitter at every count'} ` +
      `(${formatFixed(at(top, 'equal jitter').timeMs, 0)} ms at ${top} clients, full jitter ${formatFixed(at(top, 'full jitter').timeMs, 0)} ms, ` +
      `decorrelated ${formatFixed(at(top, 'decorrelated').timeMs, 0)} ms): Brooker’s ranking. Decorrelated jitter is the fastest jitter but does a little ` +
      `more work than full jitter, the trade-off the post describes. Without backoff, clients finish soonest but make the most calls; ` +
      `exponential backoff without jitter keeps the clients in step, so they keep colliding and wait longest.`
    );
  },
  command: 'npm run lab -- contention --format csv',
  data: (results) => contentionPoints(resultOf<ContentionResult>(results, 'contention')),
  spec: (points, size) => contentionSpec(points, CONTENTION_DEFAULTS.strategies, size),
});

/** The contention section's figures. */
export const CONTENTION_FIGURES = [contentionFigure];
