import { PyRandom } from '../core/python-random.js';
import type { RetryBudget } from '../core/budget/budget.js';
import type { AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import type { Backoff } from '../core/backoff/backoff.js';
import { constantDelayOf } from '../core/backoff/constant.js';
import { checkedDelay } from '../core/backoff/backoff.js';
import { InvalidOptionError } from '../core/errors.js';
import { numberOption, type NumberRule } from '../core/validate.js';
import type { ClientPolicy, Scenario, ServerModel } from './scenario.js';

/** What `runScenario` can record besides the totals. */
export interface RunOptions {
  /** Record per-tick series (arrivals, retries, successes, new requests). Default false. */
  perTick?: boolean | undefined;
  /** Called after each tick is processed, with the tick index — for traces such as a budget's tokens. */
  onTick?: ((tick: number) => void) | undefined;
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
  /** Requests (first tries and retries) the policy's adaptive throttle refused locally (included in `gaveUp`); only with a throttle. */
  throttled?: number;
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
 * Allocation-free in the loop: each tick's batch is a queue of requests held by value in typed-array
 * chunks, so a run scales to a million clients (about 60–90 ns per request event on 2 cores).
 *
 * @throws InvalidOptionError for a `seed` that is not an integer from 0 to `Number.MAX_SAFE_INTEGER`, and
 *   for a scenario out of shape or range (`scenario.clients`, `scenario.policy.maxAttempts`,
 *   `scenario.server.outages[0].endMs` … named with the value): every outage an object with
 *   `0 ≤ startMs < endMs`; clients, horizon ticks, `capacityPerTick`, `crashWindowTicks` and a Poisson
 *   run's first sends (clients × rate × horizon s) each at most 10,000,000 — what it allocates up
 *   front; and when a custom backoff's `delay()` returns anything but a number of ms in
 *   [0, 2^31 − 1] (`backoff.delay()`).
 * @example
 * ```ts
 * const r = runScenario(herdScenario('full jitter'), 0);
 * r.finishMs; // 10 500 for the article's seed 0
 * ```
 */
export function runScenario(scenario: Scenario, seed: number, options: RunOptions = {}): RunResult {
  return simulate(scenario, seed, options).result;
}

/** The chunk store of a finished run: the chunks it allocated, and how many of them are on the free list. */
export interface ChunkStore {
  allocated: number;
  free: number;
}

/**
 * `runScenario`, with a look at the run's chunk store afterwards — for the tests that freed chunks
 * are handed back and reused (a run's memory). Internal: herdless/sim does not export it.
 */
export function simulate(scenario: Scenario, seed: number, options: RunOptions): { result: RunResult; chunks: () => ChunkStore } {
  checkScenario(scenario, seed);
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
  const result: RunResult = {
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
    ...(sim.throttles !== null ? { throttled: sim.throttled } : {}),
    outstanding: sim.outstanding,
    ...(sim.perTick ? { perTick: sim.perTick } : {}),
  };
  return { result, chunks: () => sim.chunkStore() };
}

/**
 * The shape and ranges `runScenario` needs (the lab checks its files more closely, with the same
 * bounds); a scenario built in code gets the same clear errors instead of a NaN or a TypeError.
 * @throws InvalidOptionError naming the field (`scenario.…`) and the value.
 */
function checkScenario(scenario: Scenario, seed: number): void {
  const owner = 'runScenario';
  const num = (field: string, value: unknown, rule: NumberRule): number => {
    if (value === undefined) throw new InvalidOptionError(owner, field, value, 'is required');
    return numberOption(owner, field, value, 0, rule);
  };
  if (typeof scenario !== 'object' || scenario === null) throw new InvalidOptionError(owner, 'scenario', scenario, 'must be a Scenario object');
  // As every seed of herdless/sim: the lab's seeds are 0 and up, and a generator takes a safe integer.
  num('seed', seed, { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true });
  const clients = num('scenario.clients', scenario.clients, { min: 0, max: MAX_SIZE, integer: true });
  const server: unknown = scenario.server;
  if (typeof server !== 'object' || server === null) throw new InvalidOptionError(owner, 'scenario.server', server, 'must be a ServerModel object (e.g. ARTICLE_SERVER)');
  const s = server as ServerModel;
  const tickMs = num('scenario.server.tickMs', s.tickMs, { min: 0, minExclusive: true });
  num('scenario.server.capacityPerTick', s.capacityPerTick, { min: 0, max: MAX_SIZE, integer: true });
  num('scenario.server.crashWindowTicks', s.crashWindowTicks, { min: 1, max: MAX_SIZE, integer: true });
  num('scenario.server.crashLimit', s.crashLimit, { min: 0, allowInfinity: true });
  num('scenario.server.restartMs', s.restartMs, { min: 0 });
  num('scenario.server.startupMs', s.startupMs, { min: 0 });
  if (!Array.isArray(s.outages)) throw new InvalidOptionError(owner, 'scenario.server.outages', s.outages, 'must be an array of { startMs, endMs } (empty for none)');
  s.outages.forEach((o: unknown, i) => {
    const field = `scenario.server.outages[${i}]`;
    if (typeof o !== 'object' || o === null) throw new InvalidOptionError(owner, field, o, 'must be an object { startMs, endMs }');
    const { startMs, endMs } = o as { startMs: unknown; endMs: unknown };
    const start = num(`${field}.startMs`, startMs, { min: 0 });
    num(`${field}.endMs`, endMs, { min: start, minExclusive: true });
  });
  const horizonMs = num('scenario.horizonMs', scenario.horizonMs, { min: 0, minExclusive: true });
  if (!Number.isInteger(horizonMs / tickMs)) throw new InvalidOptionError(owner, 'scenario.horizonMs', horizonMs, `must be a whole number of ticks (tickMs ${tickMs})`);
  // Sizes the run allocates up front (typed arrays per tick, per client, per capacity slot): bounded
  // so that a huge one is named here rather than failing as an anonymous RangeError.
  if (horizonMs / tickMs > MAX_SIZE) throw new InvalidOptionError(owner, 'scenario.horizonMs', horizonMs, `must be at most ${MAX_SIZE} ticks (tickMs ${tickMs})`);
  if (typeof scenario.stopWhenIdle !== 'boolean') throw new InvalidOptionError(owner, 'scenario.stopWhenIdle', scenario.stopWhenIdle, 'must be a boolean');
  const arrivals: unknown = scenario.arrivals;
  const kind = typeof arrivals === 'object' && arrivals !== null ? (arrivals as { kind?: unknown }).kind : undefined;
  if (kind === 'together') num('scenario.arrivals.spreadMs', (arrivals as { spreadMs: unknown }).spreadMs, { min: 0 });
  else if (kind === 'poisson') {
    const rate = num('scenario.arrivals.ratePerSecond', (arrivals as { ratePerSecond: unknown }).ratePerSecond, { min: 0 });
    // Every first send is drawn and queued before tick 0.
    if (clients * rate * (horizonMs / 1000) > MAX_SIZE) {
      throw new InvalidOptionError(owner, 'scenario.arrivals.ratePerSecond', rate, `gives about ${Math.round(clients * rate * (horizonMs / 1000))} first sends (clients × rate × horizon); keep it ≤ ${MAX_SIZE}`);
    }
  }
  else throw new InvalidOptionError(owner, 'scenario.arrivals', arrivals, `must be { kind: 'together', spreadMs } or { kind: 'poisson', ratePerSecond }`);
  const policy: unknown = scenario.policy;
  if (typeof policy !== 'object' || policy === null) throw new InvalidOptionError(owner, 'scenario.policy', policy, 'must be a ClientPolicy { name, backoff, maxAttempts, budget? }');
  const p = policy as ClientPolicy;
  num('scenario.policy.maxAttempts', p.maxAttempts, { min: 1, integer: true, allowInfinity: true });
  if (typeof p.backoff !== 'object' || p.backoff === null || typeof p.backoff.delay !== 'function') {
    throw new InvalidOptionError(owner, 'scenario.policy.backoff', p.backoff, 'must be a Backoff (e.g. fullJitterBackoff())');
  }
  if (p.throttle !== undefined && typeof p.throttle !== 'function') throw new InvalidOptionError(owner, 'scenario.policy.throttle', p.throttle, 'must be a function (client) => AttemptThrottle');
  if (p.budget !== undefined && typeof p.budget !== 'function') throw new InvalidOptionError(owner, 'scenario.policy.budget', p.budget, 'must be a function (client) => RetryBudget');
}

/** The largest client count, horizon in ticks, capacity, crash window and Poisson first-send count of a run. */
const MAX_SIZE = 10_000_000;

/** Requests per chunk of a tick's queue (a power of two). */
const CHUNK = 32;
const CHUNK_SHIFT = 5;

/**
 * One run's state. The hot path is `step`, called once per tick: small methods that V8 optimises
 * as a whole (a single long loop would be compiled on-stack and deoptimised by every branch that
 * one workload never takes and the next one does).
 *
 * Each tick's batch is a queue of requests stored by value — client, attempt number, previous wait
 * — in chunks of up to CHUNK requests. A step reads its batch front to back and writes to the ends
 * of a few queues: no pointer chasing across a million scattered request nodes, which at that scale
 * costs a cache miss per request (a linked list of nodes ran 3× slower per request at 1M clients
 * than at 100k). With a constant backoff every retry of a batch goes to the same tick, so the batch
 * is compacted in place and its chunks are handed to that tick whole.
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
  /** A constant backoff's wait in ticks (it draws nothing, so `delay()` need not be called); −1 otherwise. */
  private readonly constantTicks: number;
  private readonly rng: PyRandom;
  private readonly budgets: RetryBudget[] | null;
  readonly throttles: AttemptThrottle[] | null;
  private readonly outageStart: Int32Array;
  private readonly outageEnd: Int32Array;

  // Tick queues (S1): each tick's first and last chunk, and its batch size.
  private readonly firstChunk: Int32Array;
  private readonly lastChunk: Int32Array;
  private readonly count: Int32Array;

  // Chunks: the next chunk of the same queue (or of the free list), the slots in use, and CHUNK
  // slots of 16 bytes — ints[4s] client, ints[4s + 1] attempt number (1 = first send),
  // floats[2s + 1] the previous wait in ms (decorrelated jitter's state); both views share a buffer.
  private chunkNext: Int32Array;
  private chunkFill: Int32Array;
  private ints: Int32Array;
  private floats: Float64Array;
  private chunksUsed = 0;
  private freeChunk = -1;

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
  throttled = 0;
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
    const constantMs = constantDelayOf(policy.backoff);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: -1 (or NaN, from undefined / tickMs, which fails `>= 0` alike) only sends a constant backoff's retries through delay(), which returns the same wait: the figures do not change.
    this.constantTicks = constantMs === undefined ? -1 : roundHalfEven(constantMs / server.tickMs);
    this.rng = new PyRandom(seed);
    // Clamped past the horizon, where an outage's far end changes nothing, so it fits an Int32.
    const ticks = (ms: number) => Math.min(Math.round(ms / server.tickMs), this.horizon + 1);
    this.outageStart = Int32Array.from(server.outages, (o) => ticks(o.startMs));
    this.outageEnd = Int32Array.from(server.outages, (o) => ticks(o.endMs));
    this.firstChunk = new Int32Array(this.horizon);
    this.lastChunk = new Int32Array(this.horizon);
    this.count = new Int32Array(this.horizon);
    // Stryker disable next-line MethodExpression,ArithmeticOperator: the chunk store's first size only decides how often grow() doubles it.
    const chunks = Math.max(64, 2 * Math.ceil(clients / CHUNK));
    this.chunkNext = new Int32Array(chunks);
    this.chunkFill = new Int32Array(chunks);
    const buffer = new ArrayBuffer(chunks * CHUNK * 16);
    this.ints = new Int32Array(buffer);
    this.floats = new Float64Array(buffer);
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
    this.throttles = policy.throttle ? Array.from({ length: clients }, (_, c) => policy.throttle!(c)) : null;
  }

  /**
   * Asks each client's throttle about every request of tick t's batch, in batch order (draws from
   * the run's generator, only while a throttle refuses with some probability), and packs the
   * admitted ones to the front of the batch's own chunks; a refused request ends there. Runs before
   * the server sees the batch: a refused request never reaches it.
   */
  private admit(t: number): void {
    const throttles = this.throttles!;
    const ints = this.ints;
    const floats = this.floats;
    const chunkNext = this.chunkNext;
    const chunkFill = this.chunkFill;
    const rng = this.rng;
    const nowMs = t * this.tickMs;
    const first = this.firstChunk[t]!;
    let outChunk = first;
    let outFill = 0;
    let kept = 0;
    let chunk = first;
    for (let remaining = this.count[t]!; remaining > 0; ) {
      const fill = chunkFill[chunk]!;
      const base = chunk << CHUNK_SHIFT;
      for (let i = 0; i < fill; i++) {
        const slot = base + i;
        const client = ints[slot << 2]!;
        const attempt = ints[(slot << 2) + 1]!;
        if (!throttles[client]!.admit(nowMs, rng, attempt > 1)) {
          this.throttled++;
          this.gaveUp++;
          this.outstanding--;
          continue;
        }
        if (outFill === CHUNK) {
          chunkFill[outChunk] = CHUNK;
          outChunk = chunkNext[outChunk]!;
          outFill = 0;
        }
        // Writing never overtakes reading: the slot written is at or before the slot read.
        const out = (outChunk << CHUNK_SHIFT) + outFill++;
        ints[out << 2] = client;
        ints[(out << 2) + 1] = attempt;
        floats[(out << 1) + 1] = floats[(slot << 1) + 1]!;
        kept++;
      }
      remaining -= fill;
      chunk = chunkNext[chunk]!;
    }
    const lastUsed = this.lastChunk[t]!;
    if (kept === 0) {
      for (let c = first; ; ) {
        const following = chunkNext[c]!;
        this.releaseChunk(c);
        if (c === lastUsed) break;
        c = following;
      }
      this.count[t] = 0;
      return;
    }
    if (outChunk !== lastUsed) {
      for (let c = chunkNext[outChunk]!; ; ) {
        const following = chunkNext[c]!;
        this.releaseChunk(c);
        if (c === lastUsed) break;
        c = following;
      }
    }
    chunkFill[outChunk] = outFill;
    this.lastChunk[t] = outChunk;
    this.count[t] = kept;
  }

  private firstSend(client: number, tick: number): void {
    this.outstanding++;
    if (tick >= this.horizon) return; // never sent; stays outstanding
    this.append(tick, client, 1, 0);
    if (this.perTick) this.perTick.fresh[tick]!++;
  }

  /** Adds a request to the end of tick `tick`'s batch (tick < horizon). */
  private append(tick: number, client: number, attempt: number, previousMs: number): void {
    const n = this.count[tick]!;
    let chunk = this.lastChunk[tick]!;
    if (n === 0) {
      chunk = this.newChunk();
      this.firstChunk[tick] = chunk;
      this.lastChunk[tick] = chunk;
    } else if (this.chunkFill[chunk] === CHUNK) {
      const last = chunk;
      chunk = this.newChunk();
      this.chunkNext[last] = chunk;
      this.lastChunk[tick] = chunk;
    }
    const slot = (chunk << CHUNK_SHIFT) + this.chunkFill[chunk]!++;
    this.ints[slot << 2] = client;
    this.ints[(slot << 2) + 1] = attempt;
    this.floats[(slot << 1) + 1] = previousMs;
    this.count[tick] = n + 1;
  }

  /** An empty chunk from the free list, or a fresh one (the store doubles when full). */
  private newChunk(): number {
    let chunk = this.freeChunk;
    if (chunk !== -1) {
      this.freeChunk = this.chunkNext[chunk]!;
    } else {
      if (this.chunksUsed === this.chunkNext.length) this.grow();
      chunk = this.chunksUsed++;
    }
    this.chunkFill[chunk] = 0;
    return chunk;
  }

  /**
   * Doubles the chunk store. A step may still be reading its batch through the old views: they stay
   * intact, and its unread chunks are copied unchanged.
   */
  private grow(): void {
    const size = this.chunkNext.length * 2;
    this.chunkNext = copyInto(new Int32Array(size), this.chunkNext);
    this.chunkFill = copyInto(new Int32Array(size), this.chunkFill);
    const buffer = new ArrayBuffer(size * CHUNK * 16);
    this.ints = copyInto(new Int32Array(buffer), this.ints);
    this.floats = new Float64Array(buffer);
  }

  /** The chunks allocated so far, and the number on the free list (walked: for tests, after a run). */
  chunkStore(): ChunkStore {
    let free = 0;
    for (let c = this.freeChunk; c !== -1; c = this.chunkNext[c]!) free++;
    return { allocated: this.chunksUsed, free };
  }

  private releaseChunk(chunk: number): void {
    this.chunkNext[chunk] = this.freeChunk;
    this.freeChunk = chunk;
  }

  /** Processes tick t: the server's rules, then every request of the batch in order. */
  step(t: number): void {
    if (this.throttles !== null && this.count[t]! > 0) this.admit(t);
    const n = this.count[t]!;
    // S2(a): the ring of the last windowTicks batch sizes.
    this.recentSum += n - this.recent[this.recentAt]!;
    this.recent[this.recentAt] = n;
    if (++this.recentAt === this.windowTicks) this.recentAt = 0;
    // Stryker disable next-line EqualityOperator: outageStart[length] is undefined, which is no tick.
    for (let i = 0; i < this.outageStart.length; i++) {
      // Stryker disable next-line EqualityOperator: at outageEnd === downUntil both keep the same value.
      if (this.outageStart[i] === t && this.outageEnd[i]! > this.downUntil) this.downUntil = this.outageEnd[i]!;
    }
    // S2(b): overload crash.
    if (t >= this.downUntil && this.recentSum > this.crashLimit) {
      this.downUntil = t + this.restartTicks;
      this.crashTicks.push(t);
    }
    if (n === 0) return;
    // S2(c, d): down → all fail with no draw; up → sample min(capacity, n) positions that succeed.
    // A position succeeds iff mark[pos] holds this tick's stamp, so the down case needs no branch.
    // Stryker disable next-line EqualityOperator,ArithmeticOperator: growing at n === length, or to max(n, length / 2) = n, still leaves a mark for every position.
    if (n > this.mark.length) this.mark = new Int32Array(Math.max(n, this.mark.length * 2));
    const stamp = t + 1;
    if (t >= this.downUntil) {
      // Stryker disable next-line EqualityOperator: at n === capacity both branches give it.
      const k = n < this.capacity ? n : this.capacity;
      const chosen = this.chosen;
      const mark = this.mark;
      this.rng.samplePositions(n, k, chosen);
      // Stryker disable next-line EqualityOperator: chosen[k] is past the array when k = capacity, and when k = n every position is marked already.
      for (let i = 0; i < k; i++) mark[chosen[i]!] = stamp;
    }
    this.requests += n;
    if (this.perTick !== null) this.perTick.arrivals[t] = n;
    // S2(e): each request in batch order, with its retry decision and its draws.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the request-by-request path gives the same figures (sim-engine-paths.test.ts checks both against the reference engine); a 0 ms constant wait goes through delay() to the same 0.
    if (this.constantTicks >= 0 && this.budgets === null && this.throttles === null) this.batchConstant(t, stamp);
    else this.batch(t, stamp);
  }

  /**
   * The batch of tick t, request by request; each retry is appended to its tick. The batch is read
   * through the views as they are now, while appends go through `this` and may replace them.
   */
  private batch(t: number, stamp: number): void {
    const ints = this.ints;
    const floats = this.floats;
    const chunkNext = this.chunkNext;
    const chunkFill = this.chunkFill;
    const mark = this.mark;
    const perTick = this.perTick;
    const budgets = this.budgets;
    const throttles = this.throttles;
    const backoff = this.backoff;
    // Decorrelated jitter V2 carries the total of the waits; the others, the last wait.
    const carry = backoff.carry;
    const constantTicks = this.constantTicks;
    const rng = this.rng;
    const tickMs = this.tickMs;
    const horizon = this.horizon;
    const maxAttempts = this.maxAttempts;
    const nowMs = t * tickMs;
    let pos = 0;
    let chunk = this.firstChunk[t]!;
    for (let remaining = this.count[t]!; remaining > 0; ) {
      const fill = chunkFill[chunk]!;
      const base = chunk << CHUNK_SHIFT;
      for (let i = 0; i < fill; i++, pos++) {
        const slot = base + i;
        const client = ints[slot << 2]!;
        const attempt = ints[(slot << 2) + 1]!;
        const budget = budgets === null ? null : budgets[client]!;
        if (budget !== null) budget.onAttempt(nowMs, attempt > 1);
        if (perTick !== null && attempt > 1) perTick.retries[t]!++;
        if (mark[pos] === stamp) {
          this.succeeded++;
          this.outstanding--;
          if (perTick !== null) perTick.successes[t]!++;
          if (budget !== null) budget.onSuccess(nowMs, attempt > 1);
          if (throttles !== null) throttles[client]!.onAnswer(nowMs, true);
          continue;
        }
        if (throttles !== null) throttles[client]!.onAnswer(nowMs, false);
        if (budget !== null) budget.onFailure(nowMs);
        let retry = attempt < maxAttempts;
        if (retry && budget !== null && !budget.allowRetry(nowMs)) {
          retry = false;
          this.budgetRefusals++;
        }
        if (!retry) {
          this.gaveUp++;
          this.outstanding--;
          continue;
        }
        let at: number;
        let wait = 0;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: delay() of a constant backoff returns the very wait constantTicks holds.
        if (constantTicks >= 0) {
          at = t + 1 + constantTicks;
        } else {
          wait = checkedDelay('runScenario', backoff.delay(attempt, floats[(slot << 1) + 1]!, rng));
          // S3: t + 1 + round(wait / tick), with Python's round (half to even).
          at = t + 1 + roundHalfEven(wait / tickMs);
        }
        if (at < horizon) this.append(at, client, attempt + 1, carry === undefined ? wait : carry.call(backoff, floats[(slot << 1) + 1]!, wait));
        // else: never sent; it stays outstanding and the run is unfinished.
      }
      remaining -= fill;
      // This chunk is read: hand it back (after reading its link).
      const done = chunk;
      chunk = chunkNext[done]!;
      this.releaseChunk(done);
    }
  }

  /**
   * The batch of tick t with a constant backoff and no budget: every retry goes to the same tick,
   * in batch order. The retries are packed to the front of the batch's own chunks (writing never
   * overtakes reading) and the chunks are linked to that tick's queue: no request is copied twice.
   */
  private batchConstant(t: number, stamp: number): void {
    const ints = this.ints;
    const chunkNext = this.chunkNext;
    const chunkFill = this.chunkFill;
    const mark = this.mark;
    const perTick = this.perTick;
    const maxAttempts = this.maxAttempts;
    const first = this.firstChunk[t]!;
    let outChunk = first;
    let outFill = 0;
    let kept = 0;
    let pos = 0;
    let chunk = first;
    for (let remaining = this.count[t]!; remaining > 0; ) {
      const fill = chunkFill[chunk]!;
      const base = chunk << CHUNK_SHIFT;
      for (let i = 0; i < fill; i++, pos++) {
        const slot = base + i;
        const attempt = ints[(slot << 2) + 1]!;
        if (perTick !== null && attempt > 1) perTick.retries[t]!++;
        if (mark[pos] === stamp) {
          this.succeeded++;
          this.outstanding--;
          if (perTick !== null) perTick.successes[t]!++;
          continue;
        }
        if (attempt >= maxAttempts) {
          this.gaveUp++;
          this.outstanding--;
          continue;
        }
        if (outFill === CHUNK) {
          chunkFill[outChunk] = CHUNK;
          outChunk = chunkNext[outChunk]!;
          outFill = 0;
        }
        const out = (outChunk << CHUNK_SHIFT) + outFill++;
        ints[out << 2] = ints[slot << 2]!;
        ints[(out << 2) + 1] = attempt + 1;
        kept++;
      }
      remaining -= fill;
      chunk = chunkNext[chunk]!;
    }
    // Chunks after the last one written to are free; so is that one if nothing was kept.
    const at = t + 1 + this.constantTicks;
    let free = chunkNext[outChunk]!;
    const lastUsed = this.lastChunk[t]!;
    if (outChunk !== lastUsed) {
      for (;;) {
        const following = chunkNext[free]!;
        this.releaseChunk(free);
        if (free === lastUsed) break;
        free = following;
      }
    }
    if (kept === 0 || at >= this.horizon) {
      // Nothing to send (what was kept stays outstanding, past the horizon): free the rest.
      for (let c = first; ; ) {
        const following = chunkNext[c]!;
        const last = c === outChunk;
        this.releaseChunk(c);
        if (last) break;
        c = following;
      }
      return;
    }
    chunkFill[outChunk] = outFill;
    if (this.count[at] === 0) this.firstChunk[at] = first;
    else chunkNext[this.lastChunk[at]!] = first;
    this.lastChunk[at] = outChunk;
    this.count[at]! += kept;
  }
}

/** Python's round(): to the nearest integer, halves to even. */
function roundHalfEven(q: number): number {
  let r = Math.round(q);
  if (r - q === 0.5 && (r & 1) === 1) r--;
  return r;
}

function copyInto<A extends Int32Array>(target: A, source: Int32Array): A {
  target.set(source);
  return target;
}
