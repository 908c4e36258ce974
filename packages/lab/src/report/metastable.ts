import { formatFixed } from 'herdless/sim';
import { metastableSpec, queueSpec, type MetastablePoint, type QueuePoint } from '../charts/specs.js';
import {
  combinationName,
  metastableCsv,
  metastableFigurePoints,
  metastableDefaults,
  metastableJson,
  metastableTable,
  metastableTitle,
  metastableTrace,
  runMetastableExperiment,
  type MetastableResult,
  type MetastableSecond,
} from '../experiments/metastable.js';
import { defineExperiment, defineFigure } from './registry.js';

/** The metastable queue: which combinations recover by themselves after a trigger of a few seconds. */
export const metastableExperiment = defineExperiment<MetastableResult>({
  id: 'metastable',
  title: 'The metastable queue: a failure that outlives its trigger',
  explanation:
    'The article’s server fails by crashing; most real servers fail by queueing. Here 50 workers serve requests that take 200 ms on ' +
    'average (250 a second) from a queue; 200 new requests a second arrive whatever happens (open loop), and each client gives up on ' +
    'an attempt after 1 s and retries by its policy — while the server still serves the abandoned attempt, work nobody will read. From ' +
    '10 s to 15 s the server runs at half speed (a trigger such as a slow dependency or a GC storm). The queue grows; once the wait ' +
    'exceeds the timeout, every answer comes too late, every timeout adds a retry, and with plain retries the offered load stays at 4× ' +
    'the new requests after the trigger is gone: goodput stays at zero until the end (Bronson et al., “Metastable Failures in ' +
    'Distributed Systems”, HotOS 2021). Without retries, with a retry budget that can reach zero (gRPC retryThrottling, the 10% retry ' +
    'ratio, the AWS retry quota), or with a server that drops requests whose client already left (deadline propagation), serves the ' +
    'newest first (LIFO) or sheds load (herdless/server’s LoadShedder without a queue), the same trigger is over within seconds. ' +
    'Finagle’s budget is not enough here: its floor of 10 retries a second per process, from 10 processes, is more than the spare ' +
    'capacity. The table defines “recovered” and “metastable”.',
  command: 'npm run lab -- metastable',
  seeds: '0-19',
  run: () => Promise.resolve(runMetastableExperiment()),
  table: (result) => `${metastableTitle(result.settings)}\n${metastableTable(result)}`,
  json: metastableJson,
  csv: metastableCsv,
});

/** Seed 0's per-second series of every combination of the default table (run once for both figures). */
let traceCache: MetastableSecond[] | undefined;
function trace(): MetastableSecond[] {
  traceCache ??= metastableTrace(metastableDefaults(), 0);
  return traceCache;
}

const DEFAULT_TRIGGER = (() => {
  const t = metastableDefaults().setup.trigger;
  return { startS: t.startMs / 1000, endS: t.endMs / 1000 };
})();

const COMBINATIONS = metastableDefaults().combinations.map((c) => combinationName({ policy: c.policy.name, server: c.server }));

const secondsFigure = defineFigure<MetastablePoint>({
  id: 'metastable-seconds',
  section: 'metastable',
  title: 'Offered load, goodput and wasted work per second, seed 0 (the trigger shaded, new requests dashed, one scale for all)',
  explanation: (points) => {
    const tail = (c: string, f: 'offered' | 'goodput' | 'wasted') => points.filter((p) => p.combination === c && p.second >= 50).reduce((a, p) => a + p[f], 0) / 10;
    const plain = '3 retries · FIFO';
    const budget = '3 retries + gRPC throttling · FIFO';
    return (
      `With 3 plain retries the offered load climbs once the trigger begins, to about ${formatFixed(tail(plain, 'offered'), 0)} a second at the end of the run: ` +
      `the server is busy all the time, but over the last 10 s ${formatFixed(tail(plain, 'wasted'), 0)} of its answers a second go to clients that ` +
      `have left and ${formatFixed(tail(plain, 'goodput'), 0)} to one still waiting. Jitter does not help: it spreads retries in time, not in number. ` +
      `With gRPC retryThrottling the timeouts soon drain each process’s tokens, the offered load falls back to the new requests, the ` +
      `queue drains and goodput returns (${formatFixed(tail(budget, 'goodput'), 0)} a second at the end). Dropping expired requests, LIFO and ` +
      `shedding keep the answers on time even with plain retries.`
    );
  },
  command: 'npm run lab -- metastable --trace 0',
  data: () => metastableFigurePoints(trace()).seconds,
  spec: (points, size) => metastableSpec(points, COMBINATIONS, { trigger: DEFAULT_TRIGGER, ...size }),
});

const queueFigure = defineFigure<QueuePoint>({
  id: 'metastable-queue',
  section: 'metastable',
  title: 'Queue length at the end of each second, seed 0 (symmetric-log scale)',
  explanation: (points) => {
    const last = (c: string) => points.find((p) => p.combination === c && p.second === Math.max(...points.map((q) => q.second)))?.queue ?? 0;
    return (
      `The queue is the state that outlives the trigger: with plain retries it ends the run at ${formatFixed(last('3 retries · FIFO'), 0)} requests, ` +
      `almost all of them attempts whose client has already given up. Every combination that recovers drains its queue within seconds of the ` +
      `trigger’s end; shedding never queues at all, and LIFO leaves a stale backlog at the bottom that it serves only when idle.`
    );
  },
  command: 'npm run lab -- metastable --trace 0',
  data: () => metastableFigurePoints(trace()).queue,
  spec: (points, size) => queueSpec(points, COMBINATIONS, { trigger: DEFAULT_TRIGGER, ...size }),
});

/** The metastable section's figures. */
export const METASTABLE_FIGURES = [secondsFigure, queueFigure];
