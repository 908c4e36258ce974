import { ARTICLE_SERVER, METASTABLE_POLICIES, METASTABLE_SERVERS, TAIL_SECONDS, formatFixed, metastableRun, type MetastableCombination } from 'herdless/sim';
import type { ArrivalBin } from '../charts/series.js';
import { arrivalsSpec, metastableSpec, perSecondSpec, type MetastablePoint, type PerSecondPoint } from '../charts/specs.js';
import { LIVE_METASTABLE_POLICIES, LIVE_METASTABLE_SETUP, liveMetastableJson, liveMetastableTable, runLiveMetastable, type LiveMetastableResult } from '../live/queue-experiment.js';
import {
  LIVE_BUDGET_POLICIES,
  fold,
  liveBudgetJson,
  liveBudgetTable,
  liveHerdJson,
  liveHerdTable,
  livePerSecond,
  runLiveBudget,
  runLiveHerd,
  type LiveBudgetResult,
  type LiveHerdResult,
} from '../live/experiments.js';
import { LAB_JSON_SCHEMA_VERSION } from '../experiments/schema-version.js';
import { defineExperiment, defineFigure, resultOf } from './registry.js';

/** The live section's result: the live commands' results. */
export interface LiveReportResult {
  herd: LiveHerdResult;
  budget: LiveBudgetResult;
  /** Absent from a `data/live.json` written before the live metastable queue. */
  metastable?: LiveMetastableResult | undefined;
}

/** The live metastable queue in the report: plain retries, retry throttling and plain retries against a server dropping expired requests. */
const METASTABLE_COMBINATIONS: MetastableCombination[] = [
  { policy: METASTABLE_POLICIES.find((p) => p.name === '3 retries')!, server: 'FIFO', overrides: {} },
  { policy: METASTABLE_POLICIES.find((p) => p.name === '3 retries + gRPC throttling')!, server: 'FIFO', overrides: {} },
  { policy: METASTABLE_POLICIES.find((p) => p.name === '3 retries')!, server: 'drop expired', overrides: METASTABLE_SERVERS['drop expired']! },
];

const SEEDS = Array.from({ length: 20 }, (_, i) => i);
const HERD_STRATEGIES = ['full jitter', 'exponential'] as const;
const BIN_MS = 100;
const WINDOW_S = 30;
const stderr = (line: string): void => void process.stderr.write(`${line}\n`);

/** `npm run lab -- all --live`: the herd (full jitter, exponential) and the budget experiment on real sockets. */
export const liveExperiment = defineExperiment<LiveReportResult>({
  id: 'live',
  title: 'On real sockets',
  explanation:
    'The same policy objects as real HTTP clients: each request goes through the library’s withRetry over undici’s fetch (keep-alive, real ' +
    'timers) to `lab server`, the article’s server model as a node:http server in its own process (5 requests served per 10 ms tick, first ' +
    'come first served; a crash above 100 arrivals in 100 ms). The tables put the simulator’s figures (seeds 0–19) beside one live run; the ' +
    'last lines give the instrument’s own lateness — how late the client machine sent each request against the time the policy chose. ' +
    'When its p99 is above 5 ms, the machine, not the policy, shapes the live figures. The metastable queue runs the same way against ' +
    '`lab server --model metastable` (workers as timers, a FIFO queue, the server at half speed 5–10 s), with its verdicts beside the ' +
    'simulator’s on the same setup.',
  command:
    'npm run lab -- live herd --strategies "full jitter,exponential"; npm run lab -- live budget; ' +
    'npm run lab -- live metastable --policies "3 retries,3 retries + gRPC throttling" --servers "FIFO,drop expired"',
  seeds: '0-19 (simulator); live seed 0',
  run: async () => {
    const settings = { clients: 1000, horizonMs: WINDOW_S * 1000, seed: 0, simSeeds: SEEDS, progress: stderr };
    const herd = await runLiveHerd(HERD_STRATEGIES, settings);
    const budget = await runLiveBudget(LIVE_BUDGET_POLICIES, { ...settings, clients: 10, horizonMs: 40_000 });
    const metastable = await runLiveMetastable({ setup: LIVE_METASTABLE_SETUP, combinations: METASTABLE_COMBINATIONS, seed: 0, simSeeds: SEEDS, progress: stderr });
    return { herd, budget, metastable };
  },
  table: (r) => `${liveHerdTable(r.herd)}\n\n${liveBudgetTable(r.budget)}${r.metastable === undefined ? '' : `\n\n${liveMetastableTable(r.metastable)}`}`,
  json: (r) => ({
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'live',
    herd: liveHerdJson(r.herd),
    budget: liveBudgetJson(r.budget),
    ...(r.metastable === undefined ? {} : { metastable: liveMetastableJson(r.metastable) }),
  }),
  csv: (r) =>
    [
      'experiment,series,t_s,arrivals',
      ...herdBins(r.herd).map((b) => `herd,"${b.series}",${b.t},${b.arrivals}`),
      ...budgetPoints(r.budget).map((p) => `budget,"${p.policy}",${p.second},${p.arrivals}`),
      // The metastable queue's arrivals are its offered load: the attempts the clients sent each second.
      ...(r.metastable === undefined ? [] : metastablePoints(r.metastable).filter((p) => p.combination.endsWith(', live')).map((p) => `metastable,"${p.combination}",${p.second},${p.offered}`)),
    ].join('\n'),
});

/** Per strategy: the live run's arrivals per 100 ms (the server's count) and the simulator's seed 0. */
function herdBins(herd: LiveHerdResult): ArrivalBin[] {
  const ticksPerBin = BIN_MS / ARTICLE_SERVER.tickMs;
  const bins = (series: string, values: readonly number[]): ArrivalBin[] =>
    values.map((arrivals, b) => ({ series, t: (b * BIN_MS) / 1000, t2: ((b + 1) * BIN_MS) / 1000, arrivals }));
  return herd.rows.flatMap(({ strategy, live }, i) => [
    ...bins(`${strategy}, live`, live.server?.arrivals.slice(0, WINDOW_S * 10) ?? fold(live.perTick.arrivals, ticksPerBin)),
    ...bins(`${strategy}, simulator seed ${herd.simSeeds[0]}`, fold(herd.simArrivals[i]!, ticksPerBin)),
  ]);
}

function budgetPoints(budget: LiveBudgetResult): PerSecondPoint[] {
  return budget.rows.flatMap(({ policy, live }) => {
    const s = livePerSecond(live, 1000 / ARTICLE_SERVER.tickMs);
    return s.arrivals.map((arrivals, second) => ({ policy, second, arrivals, fresh: s.fresh[second]! }));
  });
}

const herdFigure = defineFigure<ArrivalBin>({
  id: 'live-herd-arrivals',
  section: 'live',
  title: 'Arrivals per 100 ms on real sockets, over the simulator’s seed 0: full jitter and exponential without jitter',
  explanation: (rows) => {
    const total = (series: string): number => rows.filter((r) => r.series === series).reduce((a, r) => a + r.arrivals, 0);
    return (
      'Each pair is one live run (arrivals counted by the server) above the simulator’s seed 0 for the same 1,000 clients. ' +
      `Full jitter: ${total('full jitter, live')} arrivals live against ${total('full jitter, simulator seed 0')} simulated; ` +
      `exponential: ${total('exponential, live')} against ${total('exponential, simulator seed 0')} in the first ${WINDOW_S} s. ` +
      'Live, the exponential waves arrive smeared over a few 100 ms bins instead of one: a single client machine cannot send 1,000 ' +
      'requests in the same 10 ms, so the instrument’s lateness widens every wave.'
    );
  },
  command: 'npm run lab -- all --live (data/live-herd-arrivals.csv)',
  data: (results) => herdBins(resultOf<LiveReportResult>(results, 'live').herd),
  spec: (rows) =>
    arrivalsSpec(
      rows,
      HERD_STRATEGIES.flatMap((s) => [
        { series: `${s}, live`, title: `${s}, live`, yMax: 200 },
        { series: `${s}, simulator seed 0`, title: `${s}, simulator seed 0`, yMax: 200 },
      ]),
      { capacity: (ARTICLE_SERVER.capacityPerTick * BIN_MS) / ARTICLE_SERVER.tickMs, binMs: BIN_MS, windowS: WINDOW_S, height: 120 },
    ),
});

const budgetFigure = defineFigure<PerSecondPoint>({
  id: 'live-budget-arrivals',
  section: 'live',
  title: 'Arrivals per second for each budget policy on real sockets (new requests dashed, the outage shaded)',
  explanation: (points) => {
    const load = (policy: string): string => {
      const p = points.filter((x) => x.policy === policy && x.second >= 5 && x.second < 15);
      return formatFixed(p.reduce((a, x) => a + x.arrivals, 0) / p.reduce((a, x) => a + x.fresh, 0), 2);
    };
    return (
      'The budget experiment’s figure from one live run per policy, counted by the clients: during the outage the arrivals are ' +
      `${load('4 attempts')}× the new requests with 4 attempts and no budget, and ${load('4 attempts + gRPC throttling')}× with gRPC throttling.`
    );
  },
  command: 'npm run -s lab -- live budget --format json (rows[].live.perSecond)',
  data: (results) => budgetPoints(resultOf<LiveReportResult>(results, 'live').budget),
  spec: (points) => perSecondSpec(points, LIVE_BUDGET_POLICIES, { outage: { startS: 5, endS: 15 } }),
});

/** Per combination: the live run's offered load, goodput and wasted work per second, and the simulator's seed 0 on the same setup. */
function metastablePoints(result: LiveMetastableResult): MetastablePoint[] {
  return result.rows.flatMap((row) => {
    const c = `${row.policy} · ${row.server}`;
    const setup = result.setup;
    const policy = LIVE_METASTABLE_POLICIES.find((p) => p.name === row.policy);
    const live = row.live;
    const sim = policy === undefined ? undefined : metastableRun(policy, { ...setup, server: { ...setup.server, ...(METASTABLE_SERVERS[row.server] ?? {}) } }, 0);
    if (sim === undefined) return [];
    return [
      ...live.fresh.map((fresh, second) => ({ combination: `${c}, live`, second, fresh, offered: live.offered[second]!, goodput: live.goodput[second]!, wasted: live.wasted[second]! })),
      ...sim.fresh.map((fresh, second) => ({ combination: `${c}, simulator seed 0`, second, fresh, offered: sim.offered[second]!, goodput: sim.goodput[second]!, wasted: sim.wasted[second]! })),
    ];
  });
}

const metastableFigure = defineFigure<MetastablePoint>({
  id: 'live-metastable-seconds',
  section: 'live',
  title: 'The metastable queue on real sockets: offered load, goodput and wasted work per second (the trigger shaded, new requests dashed)',
  explanation: (points) => {
    const from = Math.max(0, ...points.map((p) => p.second)) + 1 - TAIL_SECONDS;
    const tail = (c: string, f: 'offered' | 'goodput' | 'wasted' | 'fresh'): number => points.filter((p) => p.combination === c && p.second >= from).reduce((a, p) => a + p[f], 0);
    const share = (c: string): string => formatFixed((100 * tail(c, 'goodput')) / Math.max(1, tail(c, 'fresh')), 0);
    const plain = '3 retries · FIFO';
    return (
      'Each pair is one live run above the simulator’s seed 0 on the same setup (100 new requests a second, 25 workers at 200 ms, the ' +
      `server at half speed 5–10 s). Over the last ${TAIL_SECONDS} s, plain retries answer ${share(`${plain}, live`)}% of the new requests in time live ` +
      `and ${share(`${plain}, simulator seed 0`)}% simulated, at ${formatFixed(tail(`${plain}, live`, 'offered') / Math.max(1, tail(`${plain}, live`, 'fresh')), 1)}× ` +
      `the new requests offered; retry throttling answers ${share('3 retries + gRPC throttling · FIFO, live')}% live, and a server that drops ` +
      `expired requests ${share('3 retries · drop expired, live')}% live.`
    );
  },
  command: 'npm run -s lab -- live metastable --format json (rows[].live.perSecond)',
  data: (results) => {
    const r = resultOf<LiveReportResult>(results, 'live').metastable;
    return r === undefined ? [] : metastablePoints(r);
  },
  spec: (points, size) =>
    metastableSpec(
      points,
      [...new Set(points.map((p) => p.combination))],
      { trigger: { startS: LIVE_METASTABLE_SETUP.trigger.startMs / 1000, endS: LIVE_METASTABLE_SETUP.trigger.endMs / 1000 }, ...size },
    ),
});

/** The live section's figures. */
export const LIVE_FIGURES = [herdFigure, budgetFigure, metastableFigure];
