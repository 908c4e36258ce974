import { retryRatioBudget } from '../../core/budget/retry-ratio.js';
import { latencyPercentile } from '../../core/hedge/latency.js';
import { hedgeDelay, parseHedgePolicy, type HedgePolicy } from '../../core/hedge/policy.js';
import { PyRandom } from '../../core/python-random.js';
import { summarize, type Summary } from '../stats.js';

/*
 * Hedging against a server with a latency tail, in virtual time.
 *
 * The server is `replicas` single-worker replicas, each with its own FIFO queue; an attempt goes to
 * a replica drawn at random among those its call has not used yet ("The Tail at Scale": a hedge goes
 * to another replica). A service time is two-mode: most requests are fast (lognormal around
 * `fastMedianMs`), a few (`slowShare`) hit a slow path (lognormal around `slowMedianMs`) — a cache
 * miss, a GC pause, a compaction. Two modes rather than one lognormal because that is the tail that
 * hedging exists for: the slow requests are independent of each other, so a second copy is very
 * likely fast. Capacity is `replicas / mean service time`; offered load is a fraction of it, with
 * Poisson arrivals, so queueing — and with it every attempt's latency — grows with load.
 *
 * Cancellation: when a call has its answer, its other attempts are cancelled; a queued one is
 * dropped without costing the replica anything, but one already in service runs to the end (a
 * handler that never looks at cancellation, the common case), so a hedge costs real capacity.
 *
 * The hedging policies are the library's own objects: parseHedgePolicy, hedgeDelay, a
 * latencyPercentile shared by all of the client's calls, and retryRatioBudget; the accounting is
 * hedge()'s (onAttempt per send, allowRetry before each hedge, onSuccess for the winner).
 */

/** The server model of the hedging experiment. Times in ms. */
export interface HedgingServer {
  /** Replicas, each one worker with its own FIFO queue. */
  replicas: number;
  /** Median service time of the fast mode (lognormal), ms. */
  fastMedianMs: number;
  /** The fast mode's log-space standard deviation. */
  fastSigma: number;
  /** The share of requests that take the slow path, in [0, 1). */
  slowShare: number;
  /** Median service time of the slow mode (lognormal), ms. */
  slowMedianMs: number;
  /** The slow mode's log-space standard deviation. */
  slowSigma: number;
}

/** The default server: 10 replicas, 98% of requests around 4 ms, 2% around 60 ms. */
export const HEDGING_SERVER: Readonly<HedgingServer> = Object.freeze({
  replicas: 10,
  fastMedianMs: 4,
  fastSigma: 0.25,
  slowShare: 0.02,
  slowMedianMs: 60,
  slowSigma: 0.25,
});

/** The clients of the experiment. */
export const HEDGING_POLICIES = ['no hedging', 'fixed delay', 'fixed delay + budget', 'p95 delay', 'p95 delay + budget'] as const;
/** One of {@link HEDGING_POLICIES}. */
export type HedgingPolicyName = (typeof HEDGING_POLICIES)[number];

/** The hedging settings: attempts, the fixed delay, the percentile, the budget's ratio. */
export interface HedgingSettings {
  /** Attempts per call, the first included (hedging policies). Default 2. */
  maxAttempts: number;
  /** The fixed hedge delay, ms; also the percentile policy's delay until it has seen enough calls. Default 10. */
  delayMs: number;
  /** The percentile of the percentile policy. Default 95. */
  percentile: number;
  /** The budget's ratio (retryRatioBudget: hedges ≤ ratio × requests per 1 s window). Default 0.1. */
  budgetRatio: number;
}

/** The default settings. */
export const HEDGING_SETTINGS: Readonly<HedgingSettings> = Object.freeze({ maxAttempts: 2, delayMs: 10, percentile: 95, budgetRatio: 0.1 });

/** Options of one run. */
export interface HedgingRunOptions {
  policy: HedgingPolicyName;
  /** Offered load as a fraction of capacity, in (0, 1]. */
  load: number;
  seed: number;
  /** Arrivals for this long, ms. Default 20 000. */
  durationMs?: number;
  /** Calls arriving before this are not measured (the queues and the percentile warm up), ms. Default 2 000. */
  warmupMs?: number;
  server?: HedgingServer;
  settings?: Partial<HedgingSettings>;
}

/** What one run measured over the calls that arrived after the warm-up. Latencies in ms. */
export interface HedgingMetrics {
  calls: number;
  p50: number;
  p99: number;
  p999: number;
  /** Attempts sent per call (1 = no extra load). */
  amplification: number;
  /** Service time spent per call, relative to the no-hedging cost (work a cancelled attempt had already started counts). */
  work: number;
}

/** The mean service time of a server, ms (the two lognormal modes' means, weighted). */
export function meanServiceMs(server: HedgingServer): number {
  const fast = server.fastMedianMs * Math.exp((server.fastSigma * server.fastSigma) / 2);
  const slow = server.slowMedianMs * Math.exp((server.slowSigma * server.slowSigma) / 2);
  return (1 - server.slowShare) * fast + server.slowShare * slow;
}

/** A policy's hedging, as the library's policy object (undefined: no hedging). */
export function hedgingPolicy(name: HedgingPolicyName, settings: HedgingSettings = HEDGING_SETTINGS): HedgePolicy | undefined {
  if (name === 'no hedging') return undefined;
  const budget = name.endsWith('+ budget') ? retryRatioBudget({ ratio: settings.budgetRatio }) : undefined;
  const delayMs = name.startsWith('fixed')
    ? settings.delayMs
    : latencyPercentile({ percentile: settings.percentile, windowSize: 1000, minSamples: 20, initialDelayMs: settings.delayMs });
  return parseHedgePolicy({ maxAttempts: settings.maxAttempts, delayMs, budget });
}

// ─── the event loop ────────────────────────────────────────────────────────────────────────────

const ARRIVAL = 0;
const HEDGE = 1;
const DONE = 2;

interface Call {
  arrivedAt: number;
  measured: boolean;
  done: boolean;
  attempts: Job[];
  /** Replicas used so far, as a bit set (replicas ≤ 30). */
  used: number;
}

interface Job {
  call: Call;
  number: number;
  replica: number;
  sentAt: number;
  serviceMs: number;
  cancelled: boolean;
}

/** A min-heap of events ordered by (time, sequence): ties in the order they were scheduled. */
class Events {
  #times: number[] = [];
  #seqs: number[] = [];
  #kinds: number[] = [];
  #items: unknown[] = [];
  #seq = 0;
  get size(): number {
    return this.#times.length;
  }
  push(time: number, kind: number, item: unknown): void {
    const t = this.#times;
    let i = t.length;
    t.push(time);
    this.#seqs.push(this.#seq++);
    this.#kinds.push(kind);
    this.#items.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(i, p)) break;
      this.#swap(i, p);
      i = p;
    }
  }
  /** Removes the earliest event into `out`; false when empty. */
  pop(out: { time: number; kind: number; item: unknown }): boolean {
    const n = this.#times.length;
    if (n === 0) return false;
    out.time = this.#times[0]!;
    out.kind = this.#kinds[0]!;
    out.item = this.#items[0];
    this.#swap(0, n - 1);
    this.#times.pop();
    this.#seqs.pop();
    this.#kinds.pop();
    this.#items.pop();
    let i = 0;
    const m = n - 1;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let s = i;
      if (l < m && this.#less(l, s)) s = l;
      if (r < m && this.#less(r, s)) s = r;
      if (s === i) break;
      this.#swap(i, s);
      i = s;
    }
    return true;
  }
  #less(a: number, b: number): boolean {
    const ta = this.#times[a]!;
    const tb = this.#times[b]!;
    return ta < tb || (ta === tb && this.#seqs[a]! < this.#seqs[b]!);
  }
  #swap(a: number, b: number): void {
    for (const arr of [this.#times, this.#seqs, this.#kinds, this.#items] as unknown[][]) {
      const x = arr[a];
      arr[a] = arr[b];
      arr[b] = x;
    }
  }
}

/** A standard normal draw (Box–Muller, one of the pair). */
function gauss(rng: PyRandom): number {
  const u = 1 - rng.random(); // (0, 1]: log(0) never happens
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.random());
}

/** The nearest-rank `q`-quantile of ascending `sorted`. */
function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * Runs one client policy against the model server at one offered load, in virtual time, and
 * measures the calls that arrived after the warm-up (each to its answer: the run goes on until
 * every measured call has one).
 * @example
 * ```ts
 * runHedging({ policy: 'fixed delay', load: 0.2, seed: 0 }).p99; // about 16 ms (no hedging: about 60)
 * ```
 */
export function runHedging(options: HedgingRunOptions): HedgingMetrics {
  const server = options.server ?? HEDGING_SERVER;
  const settings: HedgingSettings = { ...HEDGING_SETTINGS, ...options.settings };
  const durationMs = options.durationMs ?? 20_000;
  const warmupMs = options.warmupMs ?? 2_000;
  if (!(options.load > 0 && options.load <= 1)) throw new RangeError(`runHedging: load must be in (0, 1], got ${options.load}`);
  if (!(server.replicas >= 1 && server.replicas <= 30 && Number.isInteger(server.replicas))) throw new RangeError(`runHedging: replicas must be an integer in [1, 30], got ${server.replicas}`);
  const policy = hedgingPolicy(options.policy, settings);
  const rng = new PyRandom(options.seed);
  const meanMs = meanServiceMs(server);
  const ratePerMs = (options.load * server.replicas) / meanMs;
  const queues: Job[][] = Array.from({ length: server.replicas }, () => []);
  const heads = new Int32Array(server.replicas);
  const busy = new Uint8Array(server.replicas);
  const events = new Events();
  const latencies: number[] = [];
  let measuredAttempts = 0;
  let measuredWork = 0;
  let pendingMeasured = 0;

  const serviceMs = (): number =>
    rng.random() < server.slowShare ? server.slowMedianMs * Math.exp(server.slowSigma * gauss(rng)) : server.fastMedianMs * Math.exp(server.fastSigma * gauss(rng));

  const startNext = (replica: number, now: number): void => {
    const queue = queues[replica]!;
    while (heads[replica]! < queue.length) {
      const job = queue[heads[replica]!]!;
      queue[heads[replica]!] = undefined as unknown as Job;
      heads[replica]!++;
      if (job.cancelled) continue; // dropped while queued: costs nothing
      busy[replica] = 1;
      if (job.call.measured) measuredWork += job.serviceMs;
      events.push(now + job.serviceMs, DONE, job);
      return;
    }
    busy[replica] = 0;
    queue.length = 0;
    heads[replica] = 0;
  };

  const send = (call: Call, now: number): void => {
    // A replica the call has not used, uniformly (all of them once every one was tried).
    const free = server.replicas - popcount(call.used);
    let pick = free > 0 ? rng.randbelow(free) : rng.randbelow(server.replicas);
    let replica = 0;
    for (; replica < server.replicas; replica++) {
      if (free > 0 && call.used & (1 << replica)) continue;
      if (pick-- === 0) break;
    }
    call.used |= 1 << replica;
    const job: Job = { call, number: call.attempts.length + 1, replica, sentAt: now, serviceMs: serviceMs(), cancelled: false };
    call.attempts.push(job);
    if (call.measured) measuredAttempts++;
    policy?.budget?.onAttempt(now, job.number > 1);
    queues[replica]!.push(job);
    if (busy[replica] === 0) startNext(replica, now);
    if (policy !== undefined && job.number < policy.maxAttempts) events.push(now + hedgeDelay(policy), HEDGE, call);
  };

  events.push(rng.expovariate(ratePerMs), ARRIVAL, undefined);
  const ev = { time: 0, kind: 0, item: undefined as unknown };
  while (events.pop(ev)) {
    const now = ev.time;
    if (ev.kind === ARRIVAL) {
      if (now >= durationMs) continue;
      const measured = now >= warmupMs;
      const call: Call = { arrivedAt: now, measured, done: false, attempts: [], used: 0 };
      if (measured) pendingMeasured++;
      send(call, now);
      events.push(now + rng.expovariate(ratePerMs), ARRIVAL, undefined);
    } else if (ev.kind === HEDGE) {
      const call = ev.item as Call;
      // The call has its answer already. (Every send sets one timer and only timers send — this
      // server never fails — so a timer that fires is always the latest send's.)
      if (call.done) continue;
      const budget = policy!.budget;
      if (budget !== undefined && !budget.allowRetry(now)) continue; // refused: wait for the attempt in flight
      send(call, now);
    } else {
      const job = ev.item as Job;
      startNext(job.replica, now);
      const call = job.call;
      if (call.done || job.cancelled) continue;
      call.done = true;
      for (const other of call.attempts) if (other !== job) other.cancelled = true;
      if (policy !== undefined) {
        policy.budget?.onSuccess(now, job.number > 1);
        // As hedge() does: the first attempt's latency, or its age when a hedge won (a lower bound).
        if (typeof policy.delayMs !== 'number') policy.delayMs.record(now - call.attempts[0]!.sentAt);
      }
      if (call.measured) {
        latencies.push(now - call.arrivedAt);
        pendingMeasured--;
      }
      if (pendingMeasured === 0 && now >= durationMs) break;
    }
  }
  const sorted = Float64Array.from(latencies).sort();
  const calls = sorted.length;
  return {
    calls,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    p999: quantile(sorted, 0.999),
    amplification: measuredAttempts / calls,
    work: measuredWork / (calls * meanMs),
  };
}

function popcount(bits: number): number {
  let n = 0;
  for (let b = bits; b !== 0; b &= b - 1) n++;
  return n;
}

/** One row of the hedging table: a policy at one load, each metric over the seeds (mean, min, max). */
export interface HedgingRow {
  policy: HedgingPolicyName;
  /** Offered load, a fraction of capacity. */
  load: number;
  p50: Summary;
  p99: Summary;
  p999: Summary;
  amplification: Summary;
  work: Summary;
}

/** Folds one policy's runs at one load (one per seed) into a row. */
export function hedgingRow(policy: HedgingPolicyName, load: number, runs: readonly HedgingMetrics[]): HedgingRow {
  const of = (key: keyof HedgingMetrics): Summary => summarize(runs.map((r) => r[key]));
  return { policy, load, p50: of('p50'), p99: of('p99'), p999: of('p999'), amplification: of('amplification'), work: of('work') };
}

/** The default offered loads: 10% to 100% of capacity. */
export const HEDGING_LOADS: readonly number[] = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);

/**
 * The lowest load at which `policy`'s p99 (mean over seeds) exceeds the no-hedging p99 at the same
 * load: where hedging starts to hurt. `undefined` when it never does over these rows.
 */
export function hedgingCrossover(rows: readonly HedgingRow[], policy: HedgingPolicyName): number | undefined {
  for (const row of rows) {
    if (row.policy !== policy) continue;
    const base = rows.find((r) => r.policy === 'no hedging' && r.load === row.load);
    if (base !== undefined && row.p99.mean > base.p99.mean) return row.load;
  }
  return undefined;
}
