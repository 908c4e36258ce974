import type { Backoff } from '../../core/backoff/backoff.js';
import { constantBackoff } from '../../core/backoff/constant.js';
import { decorrelatedJitterBackoff } from '../../core/backoff/decorrelated.js';
import { equalJitterBackoff, exponentialBackoff, fullJitterBackoff } from '../../core/backoff/exponential.js';
import { InvalidOptionError } from '../../core/errors.js';
import { PyRandom } from '../../core/python-random.js';
import { numberOption, objectOption } from '../../core/validate.js';
import { EventQueue } from '../event-queue.js';
import { summarize, type Summary } from '../stats.js';

/**
 * The five strategies of the contention experiment, in the order of its table, by the names the
 * herd table uses (and `no backoff` for retrying at once).
 */
export const CONTENTION_STRATEGIES = ['exponential', 'decorrelated', 'equal jitter', 'full jitter', 'no backoff'] as const;
/** One of {@link CONTENTION_STRATEGIES}. */
export type ContentionStrategy = (typeof CONTENTION_STRATEGIES)[number];

/** The client counts of the contention table: those of the 2015 post's charts. */
export const CONTENTION_CLIENTS: readonly number[] = Object.freeze([10, 20, 30, 40, 50]);

/** Knobs of the contention model; every field has the 2015 post's value as default. */
export interface ContentionOptions {
  /** The backoff base, ms: expo(n) = min(cap, 2^n × base), decorrelated jitter starts at it. Default 5. */
  baseMs?: number | undefined;
  /** The backoff cap, ms. Default 2000. */
  capMs?: number | undefined;
  /** Mean of one message hop, ms (a hop takes |N(mean, sd)|). Default 10. */
  hopMeanMs?: number | undefined;
  /** Standard deviation of one message hop, ms. Default 2. */
  hopSdMs?: number | undefined;
}

interface Params {
  base: number;
  cap: number;
  hopMean: number;
  hopSd: number;
}

const OWNER = 'contention';
const KEYS = ['baseMs', 'capMs', 'hopMeanMs', 'hopSdMs'];

function params(options: ContentionOptions): Params {
  const o = objectOption(OWNER, 'options', options, KEYS);
  const base = numberOption(OWNER, 'baseMs', o.baseMs, 5, { min: 0, minExclusive: true, max: 60_000 });
  const cap = numberOption(OWNER, 'capMs', o.capMs, 2000, { min: base, max: 600_000 });
  const hopMean = numberOption(OWNER, 'hopMeanMs', o.hopMeanMs, 10, { min: 0, max: 60_000 });
  const hopSd = numberOption(OWNER, 'hopSdMs', o.hopSdMs, 2, { min: 0, max: 60_000 });
  return { base, cap, hopMean, hopSd };
}

/**
 * The backoff object behind each contention strategy — the library's own factories with the 2015
 * post's parameters: expo(n) = min(cap, 2^n × base) ms after the n-th failure, which is gRFC A6's
 * `initialBackoffMs × 2^(n−1)` with `initialBackoffMs` = 2 × base; decorrelated jitter from `base`.
 *
 * @throws InvalidOptionError for a strategy that is not one of {@link CONTENTION_STRATEGIES}, or a
 *   bad option.
 */
export function contentionBackoff(strategy: ContentionStrategy, options: ContentionOptions = {}): Backoff {
  const { base, cap } = params(options);
  const expo = { initialBackoffMs: 2 * base, backoffMultiplier: 2, maxBackoffMs: cap };
  switch (strategy) {
    case 'no backoff':
      return constantBackoff({ delayMs: 0 });
    case 'exponential':
      return exponentialBackoff(expo);
    case 'full jitter':
      return fullJitterBackoff(expo);
    case 'equal jitter':
      return equalJitterBackoff(expo);
    case 'decorrelated':
      return decorrelatedJitterBackoff({ baseMs: base, maxBackoffMs: cap });
    default:
      throw new InvalidOptionError(OWNER, 'strategy', strategy, `must be one of ${CONTENTION_STRATEGIES.join(', ')}`);
  }
}

/** One run: when the last client learnt of its success, and how many writes the server counted. */
export interface ContentionRun {
  /** The time of the run's last event (the last success answer reaching its client), ms. */
  timeMs: number;
  /** Writes the server received, successful or not. */
  calls: number;
}

// The four events of a client's round trip. Each client has exactly one message in flight, so an
// event is one number (client × 4 + kind) and what the message carries sits in `carried[client]`.
const READ = 0;
const READ_ANSWER = 1;
const WRITE = 2;
const WRITE_ANSWER = 3;

/**
 * One run of the contention model (M. Brooker, "Exponential Backoff And Jitter", AWS Architecture
 * Blog, 2015): `clients` clients each update one row once under optimistic concurrency. A client
 * reads the row's version, then writes carrying it; the server counts every write as a call and
 * accepts it only if the version is still current (then the version increases). Every message hop
 * takes |N(hopMeanMs, hopSdMs)| ms, drawn when the message is sent. After its n-th failed write a
 * client's next read reaches the server one hop plus backoff(n) after the failure answer reached it
 * (the hop drawn first). Events at the same instant run in the order they were scheduled.
 *
 * Every number is drawn from CPython's generator seeded with `seed` (`random.Random(seed)`), in
 * event order: the first reads' hops for clients 0, 1, … at the start, then each event's draws as
 * it is handled. `scripts/contention-reference.py` is an independent CPython implementation.
 *
 * @throws InvalidOptionError for a client count outside 1–10 000, a seed that is not a non-negative
 *   safe integer, an unknown strategy, or a bad option.
 * @example
 * ```ts
 * contentionRun('full jitter', 3, 0); // { timeMs: 143.92877414501177, calls: 6 }: 3 clients, seed 0
 * ```
 */
export function contentionRun(strategy: ContentionStrategy, clients: number, seed: number, options: ContentionOptions = {}): ContentionRun {
  const backoff = contentionBackoff(strategy, options);
  return runOnce(backoff, params(options), checkClients(clients), checkSeed(seed));
}

function checkClients(clients: number): number {
  return numberOption(OWNER, 'clients', clients, 0, { integer: true, min: 1, max: 10_000 });
}

function checkSeed(seed: number): number {
  return numberOption(OWNER, 'seed', seed, 0, { integer: true, min: 0, max: Number.MAX_SAFE_INTEGER });
}

function runOnce(backoff: Backoff, p: Params, clients: number, seed: number): ContentionRun {
  const rng = new PyRandom(seed);
  const hop = (): number => Math.abs(rng.normalvariate(p.hopMean, p.hopSd));
  const failures = new Int32Array(clients);
  // Decorrelated jitter's state: each client's last wait (the backoff starts from base below it).
  const lastWait = new Float64Array(clients);
  // What each client's message in flight carries: the version read or written, or 1/0 for success/failure.
  const carried = new Float64Array(clients);
  const queue = new EventQueue<number>();
  for (let c = 0; c < clients; c++) queue.push(hop(), c * 4 + READ);
  let version = 0;
  let calls = 0;
  let done = 0;
  let now = 0;
  while (done < clients) {
    const event = queue.pop();
    now = queue.lastTime;
    const c = event >> 2;
    switch (event & 3) {
      case READ:
        carried[c] = version;
        queue.push(now + hop(), c * 4 + READ_ANSWER);
        break;
      case READ_ANSWER:
        queue.push(now + hop(), c * 4 + WRITE);
        break;
      case WRITE: {
        calls++;
        const ok = carried[c] === version;
        if (ok) version++;
        carried[c] = ok ? 1 : 0;
        queue.push(now + hop(), c * 4 + WRITE_ANSWER);
        break;
      }
      default:
        if (carried[c] === 1) {
          done++;
        } else {
          const n = ++failures[c]!;
          const h = hop();
          const wait = backoff.delay(n, lastWait[c]!, rng);
          lastWait[c] = wait;
          queue.push(now + h + wait, c * 4 + READ);
        }
    }
  }
  return { timeMs: now, calls };
}

/** One cell of the contention table: a strategy at a client count, over the seeds. */
export interface ContentionRow {
  clients: number;
  strategy: ContentionStrategy;
  /** The runs' times, ms (the mean a plain left-to-right sum over seeds divided by their count). */
  timeMs: Summary;
  calls: Summary;
}

/**
 * The contention table: every strategy at every client count, each over `seeds` (run r seeded with r).
 * Rows by client count, then strategy in the order given.
 *
 * @throws InvalidOptionError for an unknown strategy, a client count outside 1–10 000, a bad seed or option.
 * @example
 * ```ts
 * runContention(['full jitter'], [10], [0, 1, 2]); // [{ clients: 10, strategy: 'full jitter', timeMs: {mean, min, max}, calls: {…} }]
 * ```
 */
export function runContention(
  strategies: readonly ContentionStrategy[] = CONTENTION_STRATEGIES,
  clientCounts: readonly number[] = CONTENTION_CLIENTS,
  seeds: readonly number[] = Array.from({ length: 100 }, (_, i) => i),
  options: ContentionOptions = {},
): ContentionRow[] {
  const p = params(options);
  const backoffs = strategies.map((s) => contentionBackoff(s, options));
  const counts = clientCounts.map(checkClients);
  const seedList = seeds.map(checkSeed);
  if (seedList.length === 0) throw new InvalidOptionError(OWNER, 'seeds', seeds, 'must list at least one seed');
  const rows: ContentionRow[] = [];
  for (const clients of counts) {
    strategies.forEach((strategy, i) => {
      const runs = seedList.map((seed) => runOnce(backoffs[i]!, p, clients, seed));
      rows.push({ clients, strategy, timeMs: summarize(runs.map((r) => r.timeMs)), calls: summarize(runs.map((r) => r.calls)) });
    });
  }
  return rows;
}
