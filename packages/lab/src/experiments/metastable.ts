import {
  METASTABLE_SETUP,
  RECOVERY_RULE,
  TAIL_SECONDS,
  formatFixed,
  metastableCombinations,
  metastableRun,
  runMetastable,
  type MetastableCombination,
  type MetastableRow,
  type MetastableRun,
  type MetastableSetup,
  type Summary,
} from 'herdless/sim';
import type { MetastablePoint, QueuePoint } from '../charts/specs.js';
import { LAB_JSON_SCHEMA_VERSION } from './schema-version.js';
import { seedText } from '../seeds.js';

/** A metastable run's settings: the setup, the (policy, server) combinations and the seeds. */
export interface MetastableSettings {
  /** A scenario file's name, or undefined for the default setup. */
  name?: string | undefined;
  setup: MetastableSetup;
  combinations: readonly MetastableCombination[];
  seeds: readonly number[];
}

/** The table's result: its settings and one row per combination. */
export interface MetastableResult {
  settings: MetastableSettings;
  rows: MetastableRow[];
}

/** The default run: every policy against a FIFO server, plain retries against each protected server, seeds 0–19. */
export function metastableDefaults(): MetastableSettings {
  return { setup: METASTABLE_SETUP, combinations: metastableCombinations(), seeds: Array.from({ length: 20 }, (_, i) => i) };
}

/** Runs the table in this thread. */
export function runMetastableExperiment(settings: MetastableSettings = metastableDefaults()): MetastableResult {
  return { settings, rows: runMetastable(settings.combinations, settings.seeds, settings.setup) };
}

const s = (ms: number): string => `${formatFixed(ms / 1000, 3).replace(/\.?0+$/, '')} s`;

/** The trigger in words: `the server at 0.5× speed 10–15 s` or `new requests at 2× the rate 10–13 s`. */
export function triggerText(setup: MetastableSetup): string {
  const t = setup.trigger;
  const when = `${s(t.startMs).replace(/ s$/, '')}–${s(t.endMs)}`;
  return t.kind === 'capacity' ? `the server at ${t.factor}× speed ${when}` : `new requests at ${t.factor}× the rate ${when}`;
}

/** The header lines: the setup, then what "recovered" and "metastable" mean. */
export function metastableTitle(settings: MetastableSettings): string {
  const u = settings.setup;
  const v = u.server;
  const capacity = (v.workers * 1000) / v.serviceMs;
  const title = settings.name === undefined ? 'metastable' : `metastable, scenario "${settings.name}"`;
  return [
    `# ${title}: ${u.ratePerSecond} new requests/s (Poisson) from ${u.processes} client processes to ${v.workers} workers, ` +
      `service ${v.service} mean ${formatFixed(v.serviceMs, 0)} ms (${formatFixed(capacity, 0)}/s); clients give up after ${s(u.timeoutMs)}; ` +
      `trigger: ${triggerText(u)}; ${s(u.horizonMs)} runs, seeds ${seedText(settings.seeds)}`,
    `# recovered: after the trigger ends, goodput (answers reaching a client still waiting) ≥ ${RECOVERY_RULE.share * 100}% of the new requests ` +
      `in ${RECOVERY_RULE.seconds} seconds in a row; "recovery" is the first of them, in seconds after the trigger's end`,
    `# metastable: not recovered by the end of the run, though the trigger is gone; the last ${TAIL_SECONDS} s columns show the state it stays in`,
  ].join('\n');
}

const pct = (x: number): string => `${formatFixed(x * 100, 0)}%`;
const range = (x: Summary, digits: number): string => `${formatFixed(x.mean, digits)} (${formatFixed(x.min, digits)}-${formatFixed(x.max, digits)})`;

/** The table: one row per combination, what happened after the trigger. */
export function metastableTable(result: MetastableResult): string {
  const pw = Math.max(6, ...result.rows.map((r) => r.policy.length));
  const sw = Math.max(6, ...result.rows.map((r) => r.server.length));
  const header = [
    'policy'.padEnd(pw),
    'server'.padEnd(sw),
    'recovered',
    'recovery s (mean, min-max)'.padEnd(26),
    `last ${TAIL_SECONDS} s: goodput`,
    'offered',
    'wasted/s',
    'peak queue',
  ];
  const lines = [header.join('   ')];
  for (const r of result.rows) {
    lines.push(
      [
        r.policy.padEnd(pw),
        r.server.padEnd(sw),
        `${r.recovered}/${r.runs}`.padStart(9),
        (r.recoveryS === null ? 'never (metastable)' : range(r.recoveryS, 1)).padEnd(26),
        pct(r.goodputShare.mean).padStart(header[4]!.length),
        `${formatFixed(r.offeredRatio.mean, 2)}x`.padStart(7),
        formatFixed(r.wastedPerS.mean, 1).padStart(8),
        formatFixed(r.peakQueue.mean, 0).padStart(10),
      ].join('   '),
    );
  }
  lines.push(`goodput and offered: shares of the new requests over the last ${TAIL_SECONDS} s; wasted/s: services per second finished (or cut at the deadline) for clients that had already given up`);
  return lines.join('\n');
}

const csvText = (x: string): string => (/[",\n]/.test(x) ? `"${x.replaceAll('"', '""')}"` : x);

/** CSV: one row per combination, every number unrounded. */
export function metastableCsv(result: MetastableResult): string {
  return [
    'policy,server,recovered,runs,recovery_s_mean,recovery_s_min,recovery_s_max,goodput_share_mean,goodput_share_min,goodput_share_max,offered_ratio_mean,wasted_per_s_mean,peak_queue_mean,peak_queue_max',
    ...result.rows.map((r) =>
      [
        csvText(r.policy),
        csvText(r.server),
        r.recovered,
        r.runs,
        r.recoveryS?.mean ?? '',
        r.recoveryS?.min ?? '',
        r.recoveryS?.max ?? '',
        r.goodputShare.mean,
        r.goodputShare.min,
        r.goodputShare.max,
        r.offeredRatio.mean,
        r.wastedPerS.mean,
        r.peakQueue.mean,
        r.peakQueue.max,
      ].join(','),
    ),
  ].join('\n');
}

/** The JSON contract (schemas/metastable.schema.json). */
export function metastableJson(result: MetastableResult): object {
  const { settings } = result;
  return {
    schemaVersion: LAB_JSON_SCHEMA_VERSION,
    experiment: 'metastable',
    ...(settings.name === undefined ? {} : { name: settings.name }),
    setup: settings.setup,
    seeds: settings.seeds,
    definitions: {
      recovered: `goodput ≥ ${RECOVERY_RULE.share} × new requests in ${RECOVERY_RULE.seconds} consecutive seconds after the trigger ends`,
      metastable: 'not recovered by the end of the run, though the trigger is gone',
      tailSeconds: TAIL_SECONDS,
    },
    rows: result.rows,
  };
}

/** One second of one combination's run: the figure data of `metastable --trace SEED`. */
export interface MetastableSecond {
  policy: string;
  server: string;
  second: number;
  fresh: number;
  offered: number;
  goodput: number;
  queue: number;
  wasted: number;
  shed: number;
}

/** Every combination's per-second series for one seed. */
export function metastableTrace(settings: MetastableSettings, seed: number): MetastableSecond[] {
  return settings.combinations.flatMap((c) => {
    const run: MetastableRun = metastableRun(c.policy, { ...settings.setup, server: { ...settings.setup.server, ...c.overrides } }, seed);
    return run.goodput.map((goodput, second) => ({
      policy: c.policy.name,
      server: c.server,
      second,
      fresh: run.fresh[second]!,
      offered: run.offered[second]!,
      goodput,
      queue: run.queue[second]!,
      wasted: run.wasted[second]!,
      shed: run.shed[second]!,
    }));
  });
}

/** A combination's name in the figures: `3 retries · FIFO`. */
export function combinationName(c: { policy: string; server: string }): string {
  return `${c.policy} · ${c.server}`;
}

/** The figures' points from one seed's trace: offered load, goodput and wasted work per second, and the queue, per combination. */
export function metastableFigurePoints(trace: readonly MetastableSecond[]): { seconds: MetastablePoint[]; queue: QueuePoint[] } {
  return {
    seconds: trace.map((s) => ({ combination: combinationName(s), second: s.second, fresh: s.fresh, offered: s.offered, goodput: s.goodput, wasted: s.wasted })),
    queue: trace.map((s) => ({ combination: combinationName(s), second: s.second, queue: s.queue })),
  };
}
