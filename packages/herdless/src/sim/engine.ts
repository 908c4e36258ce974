import { PyRandom } from '../core/python-random.js';
import type { RetryBudget } from '../core/budget/budget.js';
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
  const { server, policy, clients } = scenario;
  const tickMs = server.tickMs;
  const tickS = tickMs / 1000;
  const horizon = Math.round(scenario.horizonMs / tickMs);
  const capacity = server.capacityPerTick;
  const windowTicks = server.crashWindowTicks;
  const crashLimit = server.crashLimit;
  const restartTicks = Math.trunc(server.restartMs / tickMs);
  const backoff = policy.backoff;
  const maxAttempts = policy.maxAttempts;
  const rng = new PyRandom(seed);

  // Tick queues: a singly linked list of request nodes per tick, in append order (S1).
  const head = new Int32Array(horizon).fill(-1);
  const tail = new Int32Array(horizon).fill(-1);
  const count = new Int32Array(horizon);

  // Request nodes: client, attempt number (1 = first send), previous wait (decorrelated jitter's state).
  let size = Math.max(1024, clients);
  let nodeNext = new Int32Array(size);
  let nodeClient = new Int32Array(size);
  let nodeAttempt = new Int32Array(size);
  let nodePrev = new Float64Array(size);
  let used = 0;
  let freeHead = -1;

  const perTick: PerTick | undefined = options.perTick
    ? { arrivals: new Int32Array(horizon), retries: new Int32Array(horizon), successes: new Int32Array(horizon), fresh: new Int32Array(horizon) }
    : undefined;

  const newNode = (client: number): number => {
    let node: number;
    if (freeHead !== -1) {
      node = freeHead;
      freeHead = nodeNext[node]!;
    } else {
      if (used === size) {
        size *= 2;
        nodeNext = grow(nodeNext, size);
        nodeClient = grow(nodeClient, size);
        nodeAttempt = grow(nodeAttempt, size);
        const p = new Float64Array(size);
        p.set(nodePrev);
        nodePrev = p;
      }
      node = used++;
    }
    nodeClient[node] = client;
    nodeAttempt[node] = 1;
    nodePrev[node] = 0;
    return node;
  };

  let outstanding = 0;
  const firstSend = (client: number, tick: number): void => {
    outstanding++;
    if (tick >= horizon) return; // never sent; stays outstanding
    const node = newNode(client);
    nodeNext[node] = -1;
    if (tail[tick] === -1) head[tick] = node;
    else nodeNext[tail[tick]!] = node;
    tail[tick] = node;
    count[tick]!++;
    if (perTick) perTick.fresh[tick]!++;
  };

  // First sends, drawn before tick 0 in client order (H3, B2).
  const arrivals = scenario.arrivals;
  if (arrivals.kind === 'together') {
    const spreadS = arrivals.spreadMs / 1000;
    for (let c = 0; c < clients; c++) firstSend(c, Math.trunc(rng.uniform(0, spreadS) / tickS));
  } else {
    const horizonS = scenario.horizonMs / 1000;
    for (let c = 0; c < clients; c++) {
      let x = rng.expovariate(arrivals.ratePerSecond);
      while (x < horizonS) {
        firstSend(c, Math.trunc(x / tickS));
        x += rng.expovariate(arrivals.ratePerSecond);
      }
    }
  }

  const budgets: RetryBudget[] | null = policy.budget ? Array.from({ length: clients }, (_, c) => policy.budget!(c)) : null;
  const outageStart = server.outages.map((o) => Math.round(o.startMs / tickMs));
  const outageEnd = server.outages.map((o) => Math.round(o.endMs / tickMs));

  const recent = new Int32Array(windowTicks);
  let recentSum = 0;
  let recentAt = 0;
  let downUntil = Math.round(server.startupMs / tickMs); // H2: start-up, not a crash
  const chosen = new Int32Array(capacity);
  let mark = new Int32Array(64);

  let requests = 0;
  let crashes = 0;
  const crashTicks: number[] = [];
  let succeeded = 0;
  let gaveUp = 0;
  let budgetRefusals = 0;
  let ticks = horizon;
  let finished = false;

  for (let t = 0; t < horizon; t++) {
    const n = count[t]!;
    // S2(a): the ring of the last windowTicks batch sizes.
    recentSum += n - recent[recentAt]!;
    recent[recentAt] = n;
    if (++recentAt === windowTicks) recentAt = 0;
    for (let i = 0; i < outageStart.length; i++) {
      if (outageStart[i] === t && outageEnd[i]! > downUntil) downUntil = outageEnd[i]!;
    }
    // S2(b): overload crash.
    if (t >= downUntil && recentSum > crashLimit) {
      downUntil = t + restartTicks;
      crashes++;
      crashTicks.push(t);
    }
    // S2(c, d): down → all fail, no draw; up → sample min(capacity, n) positions that succeed.
    const up = t >= downUntil;
    const stamp = t + 1;
    if (up && n > 0) {
      const k = n < capacity ? n : capacity;
      rng.samplePositions(n, k, chosen);
      if (n > mark.length) mark = new Int32Array(Math.max(n, mark.length * 2));
      for (let i = 0; i < k; i++) mark[chosen[i]!] = stamp;
    }
    const nowMs = t * tickMs;
    // S2(e): each request in batch order, with its retry decision and draws.
    let node = head[t]!;
    let pos = 0;
    while (node !== -1) {
      const next = nodeNext[node]!;
      const attempt = nodeAttempt[node]!;
      const budget = budgets === null ? null : budgets[nodeClient[node]!]!;
      if (budget !== null) budget.onAttempt(nowMs, attempt > 1);
      if (perTick && attempt > 1) perTick.retries[t]!++;
      if (up && mark[pos] === stamp) {
        succeeded++;
        outstanding--;
        if (perTick) perTick.successes[t]!++;
        if (budget !== null) budget.onSuccess(nowMs);
        nodeNext[node] = freeHead;
        freeHead = node;
      } else {
        if (budget !== null) budget.onFailure(nowMs);
        let retry = attempt < maxAttempts;
        if (retry && budget !== null && !budget.allowRetry(nowMs)) {
          retry = false;
          budgetRefusals++;
        }
        if (retry) {
          const wait = backoff.delay(attempt, nodePrev[node]!, rng);
          nodePrev[node] = wait;
          nodeAttempt[node] = attempt + 1;
          // S3: t + 1 + round(wait / tick), Python's round (half to even).
          const q = wait / tickMs;
          let r = Math.round(q);
          if (r - q === 0.5 && (r & 1) === 1) r--;
          const at = t + 1 + r;
          if (at < horizon) {
            nodeNext[node] = -1;
            if (tail[at] === -1) head[at] = node;
            else nodeNext[tail[at]!] = node;
            tail[at] = node;
            count[at]!++;
          }
          // else: never sent, still outstanding (the run is unfinished).
        } else {
          gaveUp++;
          outstanding--;
          nodeNext[node] = freeHead;
          freeHead = node;
        }
      }
      node = next;
      pos++;
    }
    requests += n;
    if (perTick) perTick.arrivals[t] = n;
    options.onTick?.(t);
    if (scenario.stopWhenIdle && outstanding === 0) {
      ticks = t + 1;
      finished = true;
      break;
    }
  }
  if (outstanding === 0) finished = true;

  return {
    seed,
    ticks,
    finished,
    finishMs: ticks * tickMs,
    finishS: ticks * tickS,
    requests,
    crashes,
    crashTicks,
    succeeded,
    gaveUp,
    budgetRefusals,
    outstanding,
    ...(perTick ? { perTick } : {}),
  };
}

function grow(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(size);
  b.set(a);
  return b;
}
