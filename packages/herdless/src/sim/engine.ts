import { PyRandom } from '../core/python-random.js';
import type { RetryBudget } from '../core/budget/budget.js';
import type { Backoff } from '../core/backoff/backoff.js';
import type { Scenario } from './scenario.js';

/** What `runScenario` can record besides the totals. */
export interface RunOptions {
  /** Record per-tick series (arrivals, retries, successes, new requests). Default false. */
  perTick?: boolean;
  /** Called after each tick is processed, with the tick index — for traces such as a budget's tokens. */
  onTick?: (tick: number) => void;
}

/** Per-tick series of one run; each array has one entry per tick up to the horizon. */
export interface PerTick {
  /** Requests that reached the server in the tick (first sends and retries). */
  arrivals: Int32Array;
  /** Of those, retries. */
  retries: Int32Array;
  /** Of those, the ones that succeeded. */
  successes: Int32Array;
  /** New requests whose first send was scheduled for the tick. */
  fresh: Int32Array;
}

/** The outcome of one seeded run of a {@link Scenario}. */
export interface RunResult {
  seed: number;
  /** Ticks processed: up to the tick at which the run went idle, or the horizon. */
  ticks: number;
  /** True when no request was outstanding at the end (with `stopWhenIdle`, the run stopped early). */
  finished: boolean;
  /** When the run ended, ms: (last tick + 1) × tickMs, or the horizon. */
  finishMs: number;
  /**
   * The same in seconds, computed as the article's lab does — (last tick + 1) × (tickMs / 1000) —
   * so that means over seeds round exactly as the published tables do.
   */
  finishS: number;
  /** Requests that reached the server (every batch entry of every processed tick). */
  requests: number;
  /** Crashes caused by overload (start-up and outages are not crashes). */
  crashes: number;
  /** The tick of each crash, in order. */
  crashTicks: number[];
  /** Requests that finally succeeded. */
  succeeded: number;
  /** Requests that gave up: attempts exhausted or retry refused by the budget. */
  gaveUp: number;
  /** Retries the budget refused (included in `gaveUp`). */
  budgetRefusals: number;
  /** Requests still outstanding at the end (pending, or scheduled at or past the horizon). */
  outstanding: number;
  /** Per-tick series, when asked for with `perTick`. */
  perTick?: PerTick;
}

/**
 * Runs one scenario with one seed in virtual time, following the lab's model rule by rule:
 * the server's batch, crash and capacity rules (S1–S2), retries scheduled at
 * `t + 1 + round(wait / tick)` with round-half-even (S3), and one CPython-compatible generator
 * per run feeding every draw in a fixed order (S4). Each failed request asks the scenario's
 * policy — the library's own `Backoff` and `RetryBudget` objects — whether and when to retry.
 *
 * Deterministic: the same scenario and seed give the same result, on any machine.
 * Allocation-free in the loop: requests live in typed arrays, each tick's batch is a linked list.
 *
 * @example
 * ```ts
 * const r = runScenario(herdScenario('full jitter'), 0);
 * r.finishMs; // 10 500 for the article's seed 0
 * ```
 */
export function runScenario(scenario: Scenario, seed: number, options: RunOptions = {}): RunResult {
  const sim = new Simulation(scenario, seed, options.perTick === true);
  const onTick = options.onTick;
  const horizon = sim.horizon;
  let ticks = horizon;
  for (let t = 0; t < horizon; t++) {
    sim.step(t);
    if (onTick !== undefined) onTick(t);
    if (scenario.stopWhenIdle && sim.outstanding === 0) {
      ticks = t + 1;
      break;
    }
  }
  const tickMs = scenario.server.tickMs;
  return {
    seed,
    ticks,
    finished: sim.outstanding === 0,
    finishMs: ticks * tickMs,
    finishS: ticks * (tickMs / 1000),
    requests: sim.requests,
    crashes: sim.crashTicks.length,
    crashTicks: sim.crashTicks,
    succeeded: sim.succeeded,
    gaveUp: sim.gaveUp,
    budgetRefusals: sim.budgetRefusals,
    outstanding: sim.outstanding,
    ...(sim.perTick ? { perTick: sim.perTick } : {}),
  };
}

/**
 * One run's state. The hot path is `step`, called once per tick: a small method that V8 optimises
 * as a whole (a single long loop would be compiled on-stack and deoptimised by every branch that
 * one workload never takes and the next one does). Requests live in typed arrays; each tick's
 * batch is a linked list threaded through `next`.
 */
class Simulation {
  readonly horizon: number;
  private readonly tickMs: number;
  private readonly capacity: number;
  private readonly windowTicks: number;
  private readonly crashLimit: number;
  private readonly restartTicks: number;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff;
  private readonly rng: PyRandom;
  private readonly budgets: RetryBudget[] | null;
  private readonly outageStart: Int32Array;
  private readonly outageEnd: Int32Array;

  // Tick queues (S1): head and tail node of each tick's batch, and its size.
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  private readonly count: Int32Array;

  // Request nodes: next in batch, client, attempt number (1 = first send), previous wait (decorrelated jitter's state).
  private next: Int32Array;
  private client: Int32Array;
  private attempt: Int32Array;
  private prev: Float64Array;
  private used = 0;
  private freeHead = -1;

  // The server (S2).
  private readonly recent: Int32Array;
  private recentSum = 0;
  private recentAt = 0;
  private downUntil: number;
  private readonly chosen: Int32Array;
  private mark: Int32Array;

  readonly perTick: PerTick | null;
  requests = 0;
  readonly crashTicks: number[] = [];
  succeeded = 0;
  gaveUp = 0;
  budgetRefusals = 0;
  outstanding = 0;

  constructor(scenario: Scenario, seed: number, perTick: boolean) {
    const { server, policy, clients } = scenario;
    this.tickMs = server.tickMs;
    this.horizon = Math.round(scenario.horizonMs / server.tickMs);
    this.capacity = server.capacityPerTick;
    this.windowTicks = server.crashWindowTicks;
    this.crashLimit = server.crashLimit;
    this.restartTicks = Math.trunc(server.restartMs / server.tickMs);
    this.maxAttempts = policy.maxAttempts;
    this.backoff = policy.backoff;
    this.rng = new PyRandom(seed);
    this.outageStart = Int32Array.from(server.outages, (o) => Math.round(o.startMs / server.tickMs));
    this.outageEnd = Int32Array.from(server.outages, (o) => Math.round(o.endMs / server.tickMs));
    this.head = new Int32Array(this.horizon).fill(-1);
    this.tail = new Int32Array(this.horizon).fill(-1);
    this.count = new Int32Array(this.horizon);
    const size = Math.max(1024, clients);
    this.next = new Int32Array(size);
    this.client = new Int32Array(size);
    this.attempt = new Int32Array(size);
    this.prev = new Float64Array(size);
    this.recent = new Int32Array(this.windowTicks);
    this.downUntil = Math.round(server.startupMs / server.tickMs); // H2: start-up, not a crash
    this.chosen = new Int32Array(this.capacity);
    this.mark = new Int32Array(1024);
    this.perTick = perTick
      ? { arrivals: new Int32Array(this.horizon), retries: new Int32Array(this.horizon), successes: new Int32Array(this.horizon), fresh: new Int32Array(this.horizon) }
      : null;

    // First sends, drawn before tick 0 in client order (H3, B2).
    const tickS = server.tickMs / 1000;
    const arrivals = scenario.arrivals;
    if (arrivals.kind === 'together') {
      const spreadS = arrivals.spreadMs / 1000;
      for (let c = 0; c < clients; c++) this.firstSend(c, Math.trunc(this.rng.uniform(0, spreadS) / tickS));
    } else {
      const horizonS = scenario.horizonMs / 1000;
      for (let c = 0; c < clients; c++) {
        let x = this.rng.expovariate(arrivals.ratePerSecond);
        while (x < horizonS) {
          this.firstSend(c, Math.trunc(x / tickS));
          x += this.rng.expovariate(arrivals.ratePerSecond);
        }
      }
    }
    // One budget per client, made after the arrivals are drawn (a budget never draws).
    this.budgets = policy.budget ? Array.from({ length: clients }, (_, c) => policy.budget!(c)) : null;
  }

  private firstSend(client: number, tick: number): void {
    this.outstanding++;
    if (tick >= this.horizon) return; // never sent; stays outstanding
    let node = this.freeHead;
    if (node !== -1) {
      this.freeHead = this.next[node]!;
    } else {
      if (this.used === this.next.length) {
        const size = this.next.length * 2;
        this.next = grow(this.next, size);
        this.client = grow(this.client, size);
        this.attempt = grow(this.attempt, size);
        const p = new Float64Array(size);
        p.set(this.prev);
        this.prev = p;
      }
      node = this.used++;
    }
    this.client[node] = client;
    this.attempt[node] = 1;
    this.prev[node] = 0;
    this.append(node, tick);
    if (this.perTick) this.perTick.fresh[tick]!++;
  }

  private append(node: number, tick: number): void {
    this.next[node] = -1;
    const last = this.tail[tick]!;
    if (last === -1) this.head[tick] = node;
    else this.next[last] = node;
    this.tail[tick] = node;
    this.count[tick]!++;
  }

  /** Processes tick t: the server's rules, then every request of the batch in order. */
  step(t: number): void {
    const n = this.count[t]!;
    // S2(a): the ring of the last windowTicks batch sizes.
    this.recentSum += n - this.recent[this.recentAt]!;
    this.recent[this.recentAt] = n;
    if (++this.recentAt === this.windowTicks) this.recentAt = 0;
    for (let i = 0; i < this.outageStart.length; i++) {
      if (this.outageStart[i] === t && this.outageEnd[i]! > this.downUntil) this.downUntil = this.outageEnd[i]!;
    }
    // S2(b): overload crash.
    if (t >= this.downUntil && this.recentSum > this.crashLimit) {
      this.downUntil = t + this.restartTicks;
      this.crashTicks.push(t);
    }
    // S2(c, d): down → all fail with no draw; up → sample min(capacity, n) positions that succeed.
    // A position succeeds iff mark[pos] holds this tick's stamp, so the down case needs no branch.
    if (n > this.mark.length) this.mark = new Int32Array(Math.max(n, this.mark.length * 2));
    const mark = this.mark;
    const stamp = t + 1;
    if (t >= this.downUntil && n > 0) {
      const k = n < this.capacity ? n : this.capacity;
      const chosen = this.chosen;
      this.rng.samplePositions(n, k, chosen);
      for (let i = 0; i < k; i++) mark[chosen[i]!] = stamp;
    }
    this.requests += n;
    const perTick = this.perTick;
    if (perTick !== null) perTick.arrivals[t] = n;

    // S2(e): each request in batch order, with its retry decision and its draws.
    const next = this.next;
    const attempts = this.attempt;
    const prev = this.prev;
    const budgets = this.budgets;
    const backoff = this.backoff;
    const rng = this.rng;
    const tickMs = this.tickMs;
    const horizon = this.horizon;
    const nowMs = t * tickMs;
    let node = this.head[t]!;
    let pos = 0;
    while (node !== -1) {
      const following = next[node]!;
      const attempt = attempts[node]!;
      const budget = budgets === null ? null : budgets[this.client[node]!]!;
      if (budget !== null) budget.onAttempt(nowMs, attempt > 1);
      if (perTick !== null && attempt > 1) perTick.retries[t]!++;
      if (mark[pos] === stamp) {
        this.succeeded++;
        this.outstanding--;
        if (perTick !== null) perTick.successes[t]!++;
        if (budget !== null) budget.onSuccess(nowMs, attempt > 1);
        next[node] = this.freeHead;
        this.freeHead = node;
      } else {
        if (budget !== null) budget.onFailure(nowMs);
        let retry = attempt < this.maxAttempts;
        if (retry && budget !== null && !budget.allowRetry(nowMs)) {
          retry = false;
          this.budgetRefusals++;
        }
        if (retry) {
          const wait = backoff.delay(attempt, prev[node]!, rng);
          prev[node] = wait;
          attempts[node] = attempt + 1;
          // S3: t + 1 + round(wait / tick), with Python's round (half to even).
          const q = wait / tickMs;
          let r = Math.round(q);
          if (r - q === 0.5 && (r & 1) === 1) r--;
          const at = t + 1 + r;
          if (at < horizon) this.append(node, at);
          // else: never sent; it stays outstanding and the run is unfinished.
        } else {
          this.gaveUp++;
          this.outstanding--;
          next[node] = this.freeHead;
          this.freeHead = node;
        }
      }
      node = following;
      pos++;
    }
  }
}

function grow(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(size);
  b.set(a);
  return b;
}
