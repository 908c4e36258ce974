import {
  budgetMetrics,
  budgetRow,
  budgetScenario,
  formatFixed,
  herdScenario,
  runHerd,
  runScenario,
  type BudgetMetrics,
  type BudgetPolicyName,
  type BudgetRow,
  type HerdRow,
  type HerdStrategy,
  type Scenario,
} from 'herdless/sim';
import { LAB_JSON_SCHEMA_VERSION } from '../experiments/schema-version.js';
import { latenessOf, runLive, type Lateness, type LiveArrivals, type LiveRunResult, type LiveTarget } from './fleet.js';
import { checkTarget, startServerProcess } from './target.js';

/** The generator is the bottleneck, not the policy, when its p99 lateness is above this, ms. */
export const LATENESS_WARNING_MS = 5;

/** Where the runs went: a `lab server` the lab started in its own process, or the user's `--target`. */
export interface LiveWhere {
  /** `'lab server'` (started by the run, in its own process) or `'target'`. */
  kind: 'lab server' | 'target';
  url: string;
  /** True when the target answers the `lab server` stats: crashes and the server's own counts are known. */
  stats: boolean;
}

/** Common settings of a live command. */
export interface LiveSettings {
  /** `--target URL`, or undefined to start a `lab server`. */
  target?: string | undefined;
  clients: number;
  horizonMs: number;
  /** The seed of the live runs' generator. */
  seed: number;
  /** The simulator's seeds for the side-by-side figures. */
  simSeeds: number[];
  /** One line at a time, for stderr. */
  progress: (line: string) => void;
}

/**
 * Runs `body` against the target: the user's (checked first), or a `lab server` started with
 * `serverArgs` in its own process and stopped afterwards, whatever happens.
 */
async function withTarget<R>(settings: LiveSettings, serverArgs: string[], body: (target: LiveTarget, where: LiveWhere) => Promise<R>): Promise<R> {
  if (settings.target !== undefined) {
    const target = await checkTarget(settings.target);
    return body(target, { kind: 'target', url: target.url, stats: target.labServer !== undefined });
  }
  const server = await startServerProcess(serverArgs);
  try {
    settings.progress(`live: lab server started in its own process (pid ${server.pid}) at ${server.url}`);
    return await body({ url: server.url, labServer: server.url }, { kind: 'lab server', url: server.url, stats: true });
  } finally {
    await server.stop();
  }
}

const seconds = (ms: number): string => formatFixed(ms / 1000, 1);

/**
 * A progress line's time: the run's wall-clock time since its time 0, up to the horizon. On a busy
 * machine the progress timer and the horizon's timer both fire late, and the progress one can come
 * first: past the horizon, the line gives the horizon (where the run is cut: sends after it are not
 * counted) and says how far behind the machine is, rather than a time past the run's end.
 * @param digits decimals of the seconds shown.
 */
export function progressTime(elapsedMs: number, horizonMs: number, digits = 1): string {
  const s = (x: number): string => formatFixed(x / 1000, digits);
  if (elapsedMs <= horizonMs) return `${s(elapsedMs)} s`;
  return `${s(horizonMs)} s, the horizon (the wall clock is at ${s(elapsedMs)} s: this machine runs its timers ${s(elapsedMs - horizonMs)} s late; the run stops now)`;
}

/** Runs each policy in turn, with a line on stderr when it starts, every 5 s, and when it ends. */
async function runEach<P extends string>(
  label: string,
  names: readonly P[],
  settings: LiveSettings,
  run: (name: P, onProgress: (elapsedMs: number, done: number, sent: number) => void) => Promise<LiveRunResult>,
): Promise<LiveRunResult[]> {
  const results: LiveRunResult[] = [];
  for (const [i, name] of names.entries()) {
    settings.progress(`${label}: ${name} (${i + 1}/${names.length}), up to ${seconds(settings.horizonMs)} s…`);
    let last = 0;
    const result = await run(name, (elapsed, done, sent) => {
      if (elapsed - last < 5000) return;
      last = elapsed;
      settings.progress(`  ${progressTime(elapsed, settings.horizonMs)}: ${done} requests done, ${sent} sent`);
    });
    const l = result.lateness;
    settings.progress(
      `  ${result.finished ? `done at ${formatFixed(result.finishS, 2)} s` : `cut at ${seconds(settings.horizonMs)} s`}: ${result.requests} sent, ` +
        `${result.server === undefined ? 'crashes unknown' : `${result.crashes} crashes`}, lateness p50 ${ms(l.p50)} p99 ${ms(l.p99)} ms` +
        `${result.server === undefined ? '' : `, server timer p99 ${ms(result.server.timerLateness.p99)} ms`}`,
    );
    results.push(result);
  }
  return results;
}

const ms = (x: number): string => formatFixed(x, 1);

/** The instrument's summary over every send of the command, with a warning when it limits the figures. */
export function instrumentLines(lateness: Lateness, server?: Lateness): string[] {
  const lines = [
    `instrument: send lateness (actual send time − the time the policy chose) p50 ${ms(lateness.p50)} ms, p99 ${ms(lateness.p99)} ms, max ${ms(lateness.max)} ms over ${lateness.count} sends`,
  ];
  if (server !== undefined) {
    lines.push(`server: tick timer lateness (its worst run) p50 ${ms(server.p50)} ms, p99 ${ms(server.p99)} ms, max ${ms(server.max)} ms over ${server.count} timer firings (its timer runs only while a request waits)`);
  }
  if (lateness.p99 > LATENESS_WARNING_MS) {
    lines.push(
      `warning: p99 lateness ${ms(lateness.p99)} ms is above ${LATENESS_WARNING_MS} ms: the client machine (the generator), not the policy, limits these figures — close other load, or run fewer clients`,
    );
  }
  if (server !== undefined && server.p99 > LATENESS_WARNING_MS) {
    lines.push(`warning: the server's tick timer was up to ${ms(server.p99)} ms late (p99): requests it read late were counted in later ticks, which can add crashes`);
  }
  return lines;
}

function overallLateness(runs: readonly LiveRunResult[]): Lateness {
  const all = new Float64Array(runs.reduce((n, r) => n + r.latenessMs.length, 0));
  let at = 0;
  for (const r of runs) {
    all.set(r.latenessMs, at);
    at += r.latenessMs.length;
  }
  return latenessOf(all);
}

/** What every live result starts with: where it ran, the settings, and the instrument's lateness over all its sends. */
export interface LiveHeader {
  where: LiveWhere;
  clients: number;
  horizonMs: number;
  seed: number;
  simSeeds: number[];
  lateness: Lateness;
  /** The server's tick timer lateness in the run where its p99 was worst (a lab server only). */
  serverLateness: Lateness | undefined;
}

/** Runs each named policy live in turn, each scenario's policy and tick, against the target (see {@link withTarget}). */
async function runPolicies<P extends string, S>(
  label: string,
  names: readonly P[],
  settings: LiveSettings,
  serverArgs: string[],
  scenarioOf: (name: P) => Scenario,
  arrivals: LiveArrivals,
  stopWhenIdle: boolean,
  simulate: () => S,
): Promise<{ header: LiveHeader; runs: LiveRunResult[]; sim: S }> {
  return withTarget(settings, serverArgs, async (target, where) => {
    // The simulator's side runs once the target is known good, so that a bad --target fails at once.
    const sim = simulate();
    const runs = await runEach(label, names, settings, (name, onProgress) => {
      const scenario = scenarioOf(name);
      return runLive({ target, clients: settings.clients, arrivals, policy: scenario.policy, horizonMs: settings.horizonMs, seed: settings.seed, stopWhenIdle, tickMs: scenario.server.tickMs, onProgress });
    });
    const server = runs.map((r) => r.server?.timerLateness).filter((l) => l !== undefined);
    const serverLateness = server.length === 0 ? undefined : server.reduce((a, b) => (b.p99 > a.p99 ? b : a));
    const header = { where, clients: settings.clients, horizonMs: settings.horizonMs, seed: settings.seed, simSeeds: settings.simSeeds, lateness: overallLateness(runs), serverLateness };
    return { header, runs, sim };
  });
}

// ---------------------------------------------------------------- herd

/** `lab live herd`: per strategy, the simulator's row (its seeds) and the live run. */
export interface LiveHerdResult extends LiveHeader {
  rows: { strategy: HerdStrategy; sim: HerdRow; live: LiveRunResult }[];
  /** The simulator's arrivals per tick for its first seed, per strategy (for the report's figure). */
  simArrivals: Int32Array[];
}

/** The live herd's default strategies: all but `immediate` (100,000 requests a second would measure the machine, not the policy). */
export const LIVE_HERD_STRATEGIES: readonly HerdStrategy[] = ['fixed 1s', 'exponential', 'full jitter', 'equal jitter', 'decorrelated'];

/**
 * The article's herd on real sockets: `clients` clients send together at t = 0 to a `lab server`
 * (the article's: start-up 1 s, 5 per 10 ms tick, crash above 100 per 100 ms for 1 s) and retry by
 * each strategy with no cap until all succeed or the horizon; beside each, the simulator's row
 * over `simSeeds` with the same clients and horizon.
 */
export async function runLiveHerd(strategies: readonly HerdStrategy[], settings: LiveSettings): Promise<LiveHerdResult> {
  const options = { clients: settings.clients, horizonMs: settings.horizonMs };
  const simulate = () => ({
    rows: runHerd(strategies, settings.simSeeds, options),
    arrivals: strategies.map((s) => runScenario(herdScenario(s, options), settings.simSeeds[0]!, { perTick: true }).perTick!.arrivals),
  });
  const { header, runs, sim } = await runPolicies('live herd', strategies, settings, ['--startup', '1'], (s) => herdScenario(s, options), { kind: 'together' }, true, simulate);
  return { ...header, rows: strategies.map((strategy, i) => ({ strategy, sim: sim.rows[i]!, live: runs[i]! })), simArrivals: sim.arrivals };
}

const pct = (live: number, sim: number): string => (sim === 0 ? '' : `${live >= sim ? '+' : '−'}${formatFixed(Math.abs((live / sim - 1) * 100), 0)}%`);

function whereText(where: LiveWhere): string {
  return where.kind === 'lab server' ? `a lab server in its own process (${where.url})` : `${where.url}${where.stats ? ' (a lab server)' : ''}`;
}

/** The side-by-side table: the simulator's mean (min–max) over its seeds, the live run, and the live run's deviation. */
export function liveHerdTable(result: LiveHerdResult): string {
  const width = Math.max(14, ...result.rows.map((r) => r.strategy.length));
  const n = (x: number, d: number, w: number): string => formatFixed(x, d).padStart(w);
  const lines = [
    `# live herd: ${result.clients} clients on real sockets against ${whereText(result.where)}, horizon ${seconds(result.horizonMs)} s, live seed ${result.seed}; simulator: seeds ${seedsText(result.simSeeds)}, same clients and horizon`,
    `${''.padEnd(width)} ${'finish s'.padEnd(37)} ${'requests'.padEnd(41)} crashes        lateness ms`,
    `${'strategy'.padEnd(width)} ${'sim (mean, min-max)'.padEnd(21)} ${'live'.padStart(7)} ${'Δ'.padStart(6)}  ${'sim (mean, min-max)'.padEnd(25)} ${'live'.padStart(7)} ${'Δ'.padStart(6)}  ${'sim'.padStart(5)} ${'live'.padStart(5)}   ${'p50'.padStart(5)} ${'p99'.padStart(6)}`,
  ];
  for (const { strategy, sim, live } of result.rows) {
    const simFinish = `${n(sim.finish.mean, 2, 6)} (${n(sim.finish.min, 2, 6)}-${n(sim.finish.max, 2, 6)})`;
    const liveFinish = `${n(live.finishS, 2, 6)}${live.finished ? ' ' : '*'}`;
    const simReq = `${n(sim.requests.mean, 0, 7)} (${n(sim.requests.min, 0, 7)}-${n(sim.requests.max, 0, 7)})`;
    const crashes = live.server === undefined ? '    ?' : String(live.crashes).padStart(5);
    lines.push(
      `${strategy.padEnd(width)} ${simFinish.padEnd(21)} ${liveFinish.padStart(7)} ${pct(live.finishS, sim.finish.mean).padStart(6)}  ${simReq.padEnd(25)} ${String(live.requests).padStart(7)} ${pct(live.requests, sim.requests.mean).padStart(6)}  ${n(sim.crashes.mean, 1, 5)} ${crashes}   ${n(live.lateness.p50, 1, 5)} ${n(live.lateness.p99, 1, 6)}`,
    );
  }
  lines.push(...unfinishedLines(result));
  if (!result.where.stats) lines.push('? crashes are known only when the target is a lab server');
  lines.push(...instrumentLines(result.lateness, result.serverLateness));
  return lines.join('\n');
}

/**
 * The legend of unfinished runs: the `*` explained only when a live value carries one, and the
 * simulator's unfinished runs only for the strategies that have some.
 */
export function unfinishedLines(result: Pick<LiveHerdResult, 'rows' | 'simSeeds'>): string[] {
  const parts: string[] = [];
  if (result.rows.some((r) => !r.live.finished)) parts.push('* unfinished at the horizon (live)');
  const sim = result.rows.filter((r) => r.sim.unfinished > 0);
  if (sim.length > 0) parts.push(`simulator runs unfinished: ${sim.map((r) => `${r.strategy} ${r.sim.unfinished} of ${result.simSeeds.length}`).join(', ')}`);
  return parts.length === 0 ? [] : [parts.join('; ')];
}

function seedsText(seeds: readonly number[]): string {
  const contiguous = seeds.every((s, i) => i === 0 || s === seeds[i - 1]! + 1);
  return contiguous && seeds.length > 1 ? `${seeds[0]}-${seeds[seeds.length - 1]}` : seeds.join(',');
}

/** The live run's figures for JSON (no lateness samples, per-tick series folded to the server's 100 ms windows). */
function liveJson(live: LiveRunResult, windowTicks: number): object {
  return {
    finish: live.finishS,
    finished: live.finished,
    requests: live.requests,
    crashes: live.server === undefined ? null : live.crashes,
    succeeded: live.succeeded,
    gaveUp: live.gaveUp,
    outstanding: live.outstanding,
    networkErrors: live.networkErrors,
    lateness: live.lateness,
    arrivalsPerWindow: fold(live.perTick.arrivals, windowTicks),
    server:
      live.server === undefined
        ? null
        : { totals: live.server.totals, arrivals: live.server.arrivals, successes: live.server.successes, crashes: live.server.crashes, timerLateness: live.server.timerLateness },
  };
}

/** Sums a per-tick series over windows of `size` ticks. */
export function fold(series: ArrayLike<number>, size: number): number[] {
  const out: number[] = [];
  for (let t = 0; t < series.length; t++) {
    const w = Math.floor(t / size);
    out[w] = (out[w] ?? 0) + series[t]!;
  }
  return out;
}

/**
 * JSON: `{"schemaVersion":1,"experiment":"live-herd","target":{kind,url,stats},"clients","horizon" (s),"seed","simSeeds",
 * "rows":[{"strategy","sim":{finish,requests,crashes,unfinished},"live":{finish,finished,requests,crashes,
 * succeeded,gaveUp,outstanding,networkErrors,lateness:{p50,p99,max,count},arrivalsPerWindow,server}}],"lateness"}`.
 */
export function liveHerdJson(result: LiveHerdResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'live-herd',
    target: result.where,
    clients: result.clients,
    horizon: result.horizonMs / 1000,
    seed: result.seed,
    simSeeds: result.simSeeds,
    rows: result.rows.map(({ strategy, sim, live }) => ({
      strategy,
      sim: { finish: sim.finish, requests: sim.requests, crashes: sim.crashes, unfinished: sim.unfinished },
      live: liveJson(live, 10),
    })),
    lateness: result.lateness,
    serverLateness: result.serverLateness ?? null,
  };
}

/** CSV: one row per strategy, the simulator's means and the live run's figures. */
export function liveHerdCsv(result: LiveHerdResult): string {
  return [
    'strategy,sim_finish_s_mean,sim_finish_s_min,sim_finish_s_max,live_finish_s,live_finished,sim_requests_mean,live_requests,sim_crashes_mean,live_crashes,sim_unfinished,live_lateness_p50_ms,live_lateness_p99_ms',
    ...result.rows.map(({ strategy, sim, live }) =>
      [
        strategy,
        sim.finish.mean,
        sim.finish.min,
        sim.finish.max,
        live.finishS,
        live.finished,
        sim.requests.mean,
        live.requests,
        sim.crashes.mean,
        live.server === undefined ? '' : live.crashes,
        sim.unfinished,
        live.lateness.p50,
        live.lateness.p99,
      ].join(','),
    ),
  ].join('\n');
}

// ---------------------------------------------------------------- budget

/** The live budget's default policies: the article's four and the retry ratio counted at decision. */
export const LIVE_BUDGET_POLICIES: readonly BudgetPolicyName[] = [
  'no retry',
  '4 attempts',
  '4 attempts + gRPC throttling',
  '4 attempts + 10% retry ratio',
  '4 attempts + 10% retry ratio (at decision)',
];

/** `lab live budget`: per policy, the simulator's row and the live run's measures (the same definitions). */
export interface LiveBudgetResult extends LiveHeader {
  rows: { policy: BudgetPolicyName; sim: BudgetRow; live: LiveRunResult; metrics: BudgetMetrics }[];
}

/**
 * The article's budget experiment on real sockets: 10 clients, each sending new requests as a
 * Poisson process of 30 a second with its own budget object, against a `lab server` without
 * start-up whose downstream is down from 5 s to 15 s; 40 s per policy. The measures are the
 * simulator's (`budgetMetrics`), applied to the fleet's per-tick counts and the server's crashes.
 */
export async function runLiveBudget(policies: readonly BudgetPolicyName[], settings: LiveSettings): Promise<LiveBudgetResult> {
  const options = { clients: settings.clients, horizonMs: settings.horizonMs };
  const { header, runs, sim } = await runPolicies(
    'live budget',
    policies,
    settings,
    ['--startup', '0', '--outage', '5-15'],
    (p) => budgetScenario(p, options),
    { kind: 'poisson', ratePerSecond: 30 },
    false,
    () => policies.map((p) => budgetRow(budgetScenario(p, options), settings.simSeeds)),
  );
  return { ...header, rows: policies.map((policy, i) => ({ policy, sim: sim[i]!, live: runs[i]!, metrics: budgetMetrics(budgetScenario(policy, options), runs[i]!) })) };
}

/** The side-by-side budget table: per measure, the simulator's mean over its seeds and the live run. */
export function liveBudgetTable(result: LiveBudgetResult): string {
  const width = Math.max(28, ...result.rows.map((r) => r.policy.length));
  const n = (x: number, d: number, w: number): string => formatFixed(x, d).padStart(w);
  const lines = [
    `# live budget: ${result.clients} clients, 30 new requests/s each, on real sockets against ${whereText(result.where)}, downstream down 5–15 s, ${seconds(result.horizonMs)} s per policy, live seed ${result.seed}; simulator: seeds ${seedsText(result.simSeeds)}`,
    `${''.padEnd(width)}   load during outage   crashes after   back to normal s   retries during outage   lateness ms`,
    `${'policy'.padEnd(width)}   ${'sim'.padStart(7)} ${'live'.padStart(7)}      ${'sim'.padStart(5)} ${'live'.padStart(5)}    ${'sim'.padStart(6)} ${'live'.padStart(6)}       ${'sim'.padStart(6)} ${'live'.padStart(6)}      ${'p50'.padStart(5)} ${'p99'.padStart(6)}`,
  ];
  for (const { policy, sim, live, metrics } of result.rows) {
    const crashes = live.server === undefined ? '?' : String(metrics.crashesAfter);
    lines.push(
      `${policy.padEnd(width)}   ${n(sim.load.mean, 2, 6)}x ${n(metrics.load, 2, 6)}x      ${n(sim.crashesAfter.mean, 1, 5)} ${crashes.padStart(5)}    ${n(sim.backToNormal.mean, 1, 6)} ${n(metrics.backToNormal, 0, 6)}       ${n(sim.retryShare.mean * 100, 0, 5)}% ${n(metrics.retryShare * 100, 0, 5)}%      ${n(live.lateness.p50, 1, 5)} ${n(live.lateness.p99, 1, 6)}`,
    );
  }
  if (!result.where.stats) lines.push('? crashes are known only when the target is a lab server');
  lines.push(...instrumentLines(result.lateness, result.serverLateness));
  return lines.join('\n');
}

/** Per second: new requests, arrivals, successes and retries of a live run (the fleet's counts). */
export function livePerSecond(live: LiveRunResult, ticksPerSecond: number): { fresh: number[]; arrivals: number[]; successes: number[]; retries: number[] } {
  const p = live.perTick;
  return { fresh: fold(p.fresh, ticksPerSecond), arrivals: fold(p.arrivals, ticksPerSecond), successes: fold(p.successes, ticksPerSecond), retries: fold(p.retries, ticksPerSecond) };
}

/**
 * JSON: `{"schemaVersion":1,"experiment":"live-budget","target","clients","horizon","seed","simSeeds","rows":[{"policy",
 * "sim":{load,crashesAfter,backToNormal,retryShare (each {mean,min,max})},"live":{load,crashesAfter,backToNormal,
 * retryShare,requests,gaveUp,budgetRefusals,networkErrors,lateness,perSecond:{fresh,arrivals,successes,retries}}}],"lateness"}`.
 */
export function liveBudgetJson(result: LiveBudgetResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'live-budget',
    target: result.where,
    clients: result.clients,
    horizon: result.horizonMs / 1000,
    seed: result.seed,
    simSeeds: result.simSeeds,
    rows: result.rows.map(({ policy, sim, live, metrics }) => ({
      policy,
      sim: { load: sim.load, crashesAfter: sim.crashesAfter, backToNormal: sim.backToNormal, retryShare: sim.retryShare },
      live: {
        load: metrics.load,
        crashesAfter: live.server === undefined ? null : metrics.crashesAfter,
        backToNormal: metrics.backToNormal,
        retryShare: metrics.retryShare,
        requests: live.requests,
        gaveUp: live.gaveUp,
        budgetRefusals: live.budgetRefusals,
        networkErrors: live.networkErrors,
        lateness: live.lateness,
        perSecond: livePerSecond(live, 100),
      },
    })),
    lateness: result.lateness,
    serverLateness: result.serverLateness ?? null,
  };
}

/** CSV: one row per policy, the simulator's means and the live run's measures. */
export function liveBudgetCsv(result: LiveBudgetResult): string {
  return [
    'policy,sim_load_mean,live_load,sim_crashes_after_mean,live_crashes_after,sim_back_to_normal_mean,live_back_to_normal,sim_retry_share_mean,live_retry_share,live_lateness_p50_ms,live_lateness_p99_ms',
    ...result.rows.map(({ policy, sim, live, metrics }) =>
      [
        `"${policy}"`,
        sim.load.mean,
        metrics.load,
        sim.crashesAfter.mean,
        live.server === undefined ? '' : metrics.crashesAfter,
        sim.backToNormal.mean,
        metrics.backToNormal,
        sim.retryShare.mean,
        metrics.retryShare,
        live.lateness.p50,
        live.lateness.p99,
      ].join(','),
    ),
  ].join('\n');
}
