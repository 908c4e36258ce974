import {
  METASTABLE_POLICIES,
  METASTABLE_SERVERS,
  RECOVERY_RULE,
  TAIL_SECONDS,
  formatFixed,
  metastableRow,
  metastableSetup,
  runMetastable,
  type MetastableCombination,
  type MetastableRow,
  type MetastableSetup,
  type PolicySpec,
} from 'herdless/sim';
import { LAB_JSON_SCHEMA_VERSION } from '../experiments/schema-version.js';
import { seedText } from '../experiments/herd.js';
import { triggerText } from '../experiments/metastable.js';
import { Agent } from 'undici';
import { UsageError } from '../usage-error.js';
import { progressTime } from './experiments.js';
import { latenessOf, type Lateness } from './lateness.js';
import { readQueueStats, runLiveQueue, type QueueRunResult } from './queue-fleet.js';
import { checkTarget, startServerProcess } from './target.js';

/**
 * The live metastable setup: the simulator's default at 40% of its scale and half its length, so that
 * a busy 2-core machine holds it — 100 new requests a second (80% of capacity) from 10 client
 * processes, 25 workers at 200 ms exponential (125 a second), a 1 s timeout, the server at half
 * speed from 5 s to 10 s, 30 s runs. The recovery rule and the last-10-s columns are the simulator's.
 */
export const LIVE_METASTABLE_SETUP: Readonly<MetastableSetup> = (() => {
  const s = metastableSetup({
    ratePerSecond: 100,
    processes: 10,
    timeoutMs: 1000,
    horizonMs: 30_000,
    server: { workers: 25, serviceMs: 200 },
    trigger: { kind: 'capacity', startMs: 5000, endMs: 10_000, factor: 0.5 },
  });
  return Object.freeze({ ...s, server: Object.freeze(s.server), trigger: Object.freeze(s.trigger) });
})();

const policy = (name: string): PolicySpec => METASTABLE_POLICIES.find((p) => p.name === name)!;

/**
 * Plain retries with full jitter and the SRE book's client-side adaptive throttling, one throttle
 * per client process with the library's defaults (K = 2 over 2 minutes): a throttle refuses first
 * tries too, so it trades the new requests it rejects locally for the server's health.
 */
export const ADAPTIVE_THROTTLING_POLICY: PolicySpec = Object.freeze({
  ...policy('3 retries + jitter'),
  name: '3 retries + adaptive throttling',
  throttle: { kind: 'adaptive throttling', k: 2, windowMs: 120_000, buckets: 120, maxRejectionProbability: 1 },
}) as PolicySpec;

/** Every policy `live metastable --policies` knows: the simulator's table's and adaptive throttling. */
export const LIVE_METASTABLE_POLICIES: readonly PolicySpec[] = [...METASTABLE_POLICIES, ADAPTIVE_THROTTLING_POLICY];
/** The server variants, as in the simulator's table. */
export const LIVE_METASTABLE_SERVERS = Object.keys(METASTABLE_SERVERS);

/**
 * The default live combinations: no retry, plain retries with and without jitter, gRPC's retry
 * throttling and adaptive throttling against a FIFO server; then plain retries against each
 * protected server (drop expired, LIFO, shedding). About 30 s each.
 */
export function liveMetastableCombinations(): MetastableCombination[] {
  const fifo = ['no retry', '3 retries', '3 retries + jitter', '3 retries + gRPC throttling'].map((n) => ({ policy: policy(n), server: 'FIFO', overrides: {} }));
  const plain = policy('3 retries');
  return [
    ...fifo,
    { policy: ADAPTIVE_THROTTLING_POLICY, server: 'FIFO', overrides: {} },
    ...(['drop expired', 'LIFO', 'shedding'] as const).map((server) => ({ policy: plain, server, overrides: METASTABLE_SERVERS[server]! })),
  ];
}

/** What `lab live metastable` runs. */
export interface LiveMetastableSettings {
  /** `--target URL`, or undefined to start a metastable `lab server` in its own process. */
  target?: string | undefined;
  setup: MetastableSetup;
  combinations: readonly MetastableCombination[];
  /** The seed of the live runs (arrivals, jitter, the server's service times). */
  seed: number;
  /** The simulator's seeds for the side-by-side figures. */
  simSeeds: number[];
  /** One line at a time, for stderr. */
  progress: (line: string) => void;
}

/** One combination: the simulator's row over its seeds, the live run and its row. */
export interface LiveMetastableRow {
  policy: string;
  server: string;
  sim: MetastableRow;
  live: QueueRunResult;
  /** The live run folded as the simulator folds a seed (one run: min = max = mean). */
  liveRow: MetastableRow;
  /**
   * The live run's goodput before the trigger (from its second second to the trigger's start) as a
   * share of its new requests: below {@link RECOVERY_RULE}'s share, the machine could not hold the
   * normal load and the verdict after the trigger says nothing about the policy.
   */
  healthyBefore: number;
}

/** `lab live metastable`'s result. */
export interface LiveMetastableResult {
  where: { kind: 'lab server' | 'target'; url: string; stats: boolean };
  setup: MetastableSetup;
  seed: number;
  simSeeds: number[];
  rows: LiveMetastableRow[];
  /** Send lateness over every run. */
  lateness: Lateness;
  /** The server's service-timer lateness in the run where its p99 was worst (a lab server only). */
  serverLateness: Lateness | undefined;
}

/** The send lateness (p99, ms) above which a run's figures are the machine's rather than the policy's: 5% of the timeout. */
export const lateLimitMs = (setup: MetastableSetup): number => setup.timeoutMs / 20;

/** The share of new requests answered in time before the trigger (seconds 1 to the trigger's start). */
export function goodputBefore(run: Pick<QueueRunResult, 'fresh' | 'goodput'>, triggerStartMs: number): number {
  const end = Math.floor(triggerStartMs / 1000);
  let fresh = 0;
  let good = 0;
  for (let s = 1; s < end; s++) {
    fresh += run.fresh[s] ?? 0;
    good += run.goodput[s] ?? 0;
  }
  return fresh === 0 ? 1 : good / fresh;
}

/**
 * The metastable queue on real sockets beside the simulator: for each combination, a metastable
 * `lab server` in its own process (or `--target`) is reset to the combination's server variant,
 * the setup's trigger and the seed, and the clients run the policy for the setup's horizon
 * (see {@link runLiveQueue}); the simulator runs the same setup over `simSeeds`. The verdicts are
 * the simulator's own (`recovery`, `metastableRow`) applied to the live run's per-second series.
 */
export async function runLiveMetastable(settings: LiveMetastableSettings): Promise<LiveMetastableResult> {
  const { setup } = settings;
  let url: string;
  let labServer: string | undefined;
  let stop = async (): Promise<void> => {};
  let kind: 'lab server' | 'target';
  if (settings.target !== undefined) {
    const target = await checkTarget(settings.target);
    url = target.url;
    // A metastable lab server answers its stats with model 'metastable' (checkTarget knows the article's only).
    const origin = new URL('/', target.url).href;
    const agent = new Agent({ connect: { timeout: 3000 } });
    try {
      labServer = (await readQueueStats(origin, agent).catch(() => undefined)) === undefined ? undefined : origin;
    } finally {
      await agent.destroy();
    }
    kind = 'target';
  } else {
    const server = await startServerProcess(['--model', 'metastable']);
    settings.progress(`live metastable: lab server started in its own process (pid ${server.pid}) at ${server.url}`);
    url = server.url;
    labServer = server.url;
    stop = server.stop;
    kind = 'lab server';
  }
  try {
    const sim = runMetastable(settings.combinations, settings.simSeeds, setup);
    const rows: LiveMetastableRow[] = [];
    for (const [i, c] of settings.combinations.entries()) {
      settings.progress(`live metastable: ${c.policy.name} / ${c.server} (${i + 1}/${settings.combinations.length}), ${formatFixed(setup.horizonMs / 1000, 0)} s…`);
      const runSetup = { ...setup, server: { ...setup.server, ...c.overrides } };
      let last = 0;
      const live = await runLiveQueue({
        target: { url, labServer },
        setup: runSetup,
        policy: c.policy,
        seed: settings.seed,
        onProgress: (elapsed, sent) => {
          if (elapsed - last < 5000) return;
          last = elapsed;
          settings.progress(`  ${progressTime(elapsed, setup.horizonMs, 0)}: ${sent} attempts sent`);
        },
      });
      const row = metastableRow(c.policy.name, c.server, [live]);
      settings.progress(
        `  ${live.recoveryS === null ? 'metastable' : `recovered ${formatFixed(live.recoveryS, 0)} s after the trigger`}: goodput ${pct(row.goodputShare.mean)} of the new requests in the last ${TAIL_SECONDS} s, ` +
          `offered ${formatFixed(row.offeredRatio.mean, 2)}x, send lateness p99 ${ms(live.lateness.p99)} ms` +
          `${live.server === undefined ? '' : `, server timer p99 ${ms(live.server.timerLateness.p99)} ms`}`,
      );
      rows.push({ policy: c.policy.name, server: c.server, sim: sim[i]!, live, liveRow: row, healthyBefore: goodputBefore(live, setup.trigger.startMs) });
    }
    const all = Float64Array.from(rows.flatMap((r) => Array.from(r.live.latenessMs)));
    const server = rows.map((r) => r.live.server?.timerLateness).filter((l) => l !== undefined);
    return {
      where: { kind, url, stats: labServer !== undefined },
      setup,
      seed: settings.seed,
      simSeeds: settings.simSeeds,
      rows,
      lateness: latenessOf(all),
      serverLateness: server.length === 0 ? undefined : server.reduce((a, b) => (b.p99 > a.p99 ? b : a)),
    };
  } finally {
    await stop();
  }
}

const pct = (x: number): string => `${formatFixed(x * 100, 0)}%`;
const ms = (x: number): string => formatFixed(x, 1);

/** The verdict in words: `recovered 3 s` or `metastable`. */
function verdict(recoveryS: number | null): string {
  return recoveryS === null ? 'metastable' : `recovered ${formatFixed(recoveryS, 0)} s`;
}

/** The side-by-side table: per combination, the simulator's verdicts over its seeds and the live run's, with the same columns. */
export function liveMetastableTable(result: LiveMetastableResult): string {
  const u = result.setup;
  const v = u.server;
  const pw = Math.max(6, ...result.rows.map((r) => r.policy.length));
  const sw = Math.max(6, ...result.rows.map((r) => r.server.length));
  const where = result.where.kind === 'lab server' ? `a lab server in its own process (${result.where.url})` : result.where.url;
  const lines = [
    `# live metastable: ${u.ratePerSecond} new requests/s (Poisson) from ${u.processes} client processes on real sockets against ${where}; ` +
      `${v.workers} workers, service ${v.service} mean ${formatFixed(v.serviceMs, 0)} ms (${formatFixed((v.workers * 1000) / v.serviceMs, 0)}/s); clients give up after ${formatFixed(u.timeoutMs / 1000, 3).replace(/\.?0+$/, '')} s; ` +
      `trigger: ${triggerText(u)}; ${formatFixed(u.horizonMs / 1000, 0)} s per run, live seed ${result.seed}; simulator: seeds ${seedText(result.simSeeds)}, same setup`,
    `# recovered: after the trigger ends, goodput ≥ ${RECOVERY_RULE.share * 100}% of the new requests in ${RECOVERY_RULE.seconds} seconds in a row (the simulator's rule, on the live run's seconds); metastable: not recovered by the end of the run`,
    `${''.padEnd(pw)}   ${''.padEnd(sw)}   ${'verdict'.padEnd(30)}   ${`last ${TAIL_SECONDS} s: goodput`.padEnd(15)}   ${'offered'.padEnd(15)}   ${'wasted/s'.padEnd(13)}   ${'peak queue'.padEnd(13)}   before    lateness`,
    `${'policy'.padEnd(pw)}   ${'server'.padEnd(sw)}   ${'sim'.padEnd(17)}${'live'.padEnd(13)}   ${'sim'.padStart(6)} ${'live'.padStart(6)}     ${'sim'.padStart(6)} ${'live'.padStart(6)}     ${'sim'.padStart(6)} ${'live'.padStart(6)}   ${'sim'.padStart(6)} ${'live'.padStart(6)}   trigger   p99 ms`,
  ];
  for (const r of result.rows) {
    const s = r.sim;
    const l = r.liveRow;
    const simVerdict = s.recovered === 0 ? `metastable ${s.runs - s.recovered}/${s.runs}` : s.recovered === s.runs ? `recovered ${formatFixed(s.recoveryS!.mean, 1)} s` : `recovered ${s.recovered}/${s.runs}`;
    const known = r.live.server !== undefined;
    lines.push(
      [
        r.policy.padEnd(pw),
        r.server.padEnd(sw),
        `${simVerdict.padEnd(17)}${verdict(r.live.recoveryS).padEnd(13)}`,
        `${pct(s.goodputShare.mean).padStart(6)} ${pct(l.goodputShare.mean).padStart(6)}    `,
        `${formatFixed(s.offeredRatio.mean, 2).padStart(5)}x ${formatFixed(l.offeredRatio.mean, 2).padStart(5)}x    `,
        `${formatFixed(s.wastedPerS.mean, 1).padStart(6)} ${known ? formatFixed(l.wastedPerS.mean, 1).padStart(6) : '     ?'}`,
        `${formatFixed(s.peakQueue.mean, 0).padStart(6)} ${known ? formatFixed(l.peakQueue.mean, 0).padStart(6) : '     ?'}`,
        `${pct(r.healthyBefore).padStart(7)}${r.healthyBefore < RECOVERY_RULE.share ? ' !' : '  '}`,
        `${ms(r.live.lateness.p99).padStart(6)}${r.live.lateness.p99 > lateLimitMs(result.setup) ? ' *' : ''}`,
      ].join('   '),
    );
  }
  lines.push(
    `sim: the simulator over its seeds (verdict: all recovered, mean time; or how many); live: one run. goodput and offered: shares of the new requests over the last ${TAIL_SECONDS} s; ` +
      `wasted/s: services finished or cut for clients that had already left; before trigger: the live run's goodput before the trigger; lateness: the live run's send lateness`,
  );
  if (result.rows.some((r) => r.live.server === undefined)) lines.push('? known only when the target is a metastable lab server (`lab server --model metastable`)');
  lines.push(...queueInstrumentLines(result));
  return lines.join('\n');
}

/** The instrument's lines: send lateness and the server's timer lateness, with warnings when they (or the load before the trigger) limit the figures. */
export function queueInstrumentLines(result: Pick<LiveMetastableResult, 'lateness' | 'serverLateness' | 'setup' | 'rows'>): string[] {
  const l = result.lateness;
  const limit = lateLimitMs(result.setup);
  const lines = [`instrument: send lateness (actual send − the time the policy chose) p50 ${ms(l.p50)} ms, p99 ${ms(l.p99)} ms, max ${ms(l.max)} ms over ${l.count} sends`];
  const s = result.serverLateness;
  if (s !== undefined) lines.push(`server: service timer lateness (its worst run) p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms, max ${ms(s.max)} ms over ${s.count} services`);
  const late = result.rows.filter((r) => r.live.lateness.p99 > limit);
  if (late.length > 0) {
    lines.push(
      `* p99 send lateness above ${ms(limit)} ms (5% of the timeout) in ${late.map((r) => `${r.policy} / ${r.server}`).join(', ')}: the client machine fell behind the schedule ` +
        '(every timeout closes a connection, and a run that stays at several times the load opens hundreds a second); sends went out late, which lowers the offered load it measured',
    );
  }
  if (s !== undefined && s.p99 > limit) lines.push(`warning: the server's service timer was up to ${ms(s.p99)} ms late (p99), above ${ms(limit)} ms: its answers came late enough to add timeouts`);
  const sick = result.rows.filter((r) => r.healthyBefore < RECOVERY_RULE.share);
  if (sick.length > 0) {
    lines.push(
      `warning: ${sick.map((r) => `${r.policy} / ${r.server}`).join(', ')}: goodput below ${RECOVERY_RULE.share * 100}% of the new requests before the trigger (!): ` +
        'the machine could not hold the normal load, so the verdict after the trigger says nothing about the policy',
    );
  }
  return lines;
}

/**
 * JSON: `{"schemaVersion":1,"experiment":"live-metastable","target":{kind,url,stats},"setup","seed","simSeeds",
 * "definitions","rows":[{"policy","server","sim":<the metastable table's row>,"live":{"row":<the same row for the live run>,
 * "recoveryS","healthyBefore","gaveUpBy","networkErrors","lateness","perSecond":{fresh,offered,goodput,timeouts,shed,throttled,queue,wasted},
 * "server":{served,dropped,arrivals,timerLateness,connections}|null}}],"lateness","serverLateness"}`.
 */
export function liveMetastableJson(result: LiveMetastableResult): object {
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'live-metastable',
    target: result.where,
    setup: result.setup,
    seed: result.seed,
    simSeeds: result.simSeeds,
    definitions: {
      recovered: `goodput ≥ ${RECOVERY_RULE.share} × new requests in ${RECOVERY_RULE.seconds} consecutive seconds after the trigger ends`,
      metastable: 'not recovered by the end of the run, though the trigger is gone',
      tailSeconds: TAIL_SECONDS,
    },
    rows: result.rows.map(({ policy, server, sim, live, liveRow, healthyBefore }) => ({
      policy,
      server,
      sim,
      live: {
        row: liveRow,
        recoveryS: live.recoveryS,
        healthyBefore,
        gaveUp: live.gaveUp,
        gaveUpBy: live.gaveUpBy,
        networkErrors: live.networkErrors,
        lateness: live.lateness,
        perSecond: {
          fresh: live.fresh,
          offered: live.offered,
          goodput: live.goodput,
          timeouts: live.timeouts,
          shed: live.shed,
          throttled: live.throttled,
          queue: live.server === undefined ? null : live.queue,
          wasted: live.server === undefined ? null : live.wasted,
        },
        server:
          live.server === undefined
            ? null
            : {
                arrivals: live.server.arrivals,
                served: live.server.served,
                dropped: live.server.dropped,
                totals: live.server.totals,
                timerLateness: live.server.timerLateness,
                connections: live.server.connections,
              },
      },
    })),
    lateness: result.lateness,
    serverLateness: result.serverLateness ?? null,
  };
}

const csvText = (x: string): string => (/[",\n]/.test(x) ? `"${x.replaceAll('"', '""')}"` : x);

/** CSV: one row per combination, the simulator's means and the live run's figures, unrounded. */
export function liveMetastableCsv(result: LiveMetastableResult): string {
  return [
    'policy,server,sim_recovered,sim_runs,sim_recovery_s_mean,live_recovered,live_recovery_s,sim_goodput_share_mean,live_goodput_share,sim_offered_ratio_mean,live_offered_ratio,sim_wasted_per_s_mean,live_wasted_per_s,sim_peak_queue_mean,live_peak_queue,live_goodput_before_trigger,live_lateness_p50_ms,live_lateness_p99_ms',
    ...result.rows.map(({ policy, server, sim, live, liveRow, healthyBefore }) =>
      [
        csvText(policy),
        csvText(server),
        sim.recovered,
        sim.runs,
        sim.recoveryS?.mean ?? '',
        live.recoveryS !== null,
        live.recoveryS ?? '',
        sim.goodputShare.mean,
        liveRow.goodputShare.mean,
        sim.offeredRatio.mean,
        liveRow.offeredRatio.mean,
        sim.wastedPerS.mean,
        live.server === undefined ? '' : liveRow.wastedPerS.mean,
        sim.peakQueue.mean,
        live.server === undefined ? '' : liveRow.peakQueue.mean,
        healthyBefore,
        live.lateness.p50,
        live.lateness.p99,
      ].join(','),
    ),
  ].join('\n');
}

/** `--policies`/`--servers` for `live metastable`: the named policies crossed with the named servers. @throws UsageError for an unknown name. */
export function liveMetastableCross(policies: readonly string[] | undefined, servers: readonly string[] | undefined): MetastableCombination[] {
  if (policies === undefined && servers === undefined) return liveMetastableCombinations();
  const ps = (policies ?? LIVE_METASTABLE_POLICIES.map((p) => p.name)).map((n) => {
    const p = LIVE_METASTABLE_POLICIES.find((x) => x.name === n);
    if (p === undefined) throw new UsageError(`--policies: unknown policy ${JSON.stringify(n)}`);
    return p;
  });
  return (servers ?? ['FIFO']).flatMap((server) => ps.map((p) => ({ policy: p, server, overrides: METASTABLE_SERVERS[server]! })));
}
