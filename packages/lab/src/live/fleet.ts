import { performance } from 'node:perf_hooks';
import { type Backoff, type RetryBudget } from 'herdless';
import { withRetry, type FetchFunction } from 'herdless/http';
import { PyRandom, type PerTick, type RunResult } from 'herdless/sim';
import { Agent, fetch as undiciFetch } from 'undici';
import { latenessOf, type Lateness } from './lateness.js';
import { PING_PATH, RESET_PATH, STATS_PATH, type LiveStatsResponse } from './server.js';

/** Where a live run sends its requests, and whether that server is a `lab server` (stats, reset). */
export interface LiveTarget {
  /** The URL every request goes to. */
  url: string;
  /** The `lab server` base URL when the target is one: its time is reset before each run and its stats read after. */
  labServer: string | undefined;
}

/** What one client does: the library's own backoff (and budget), with an attempt cap. */
export interface LivePolicy {
  name: string;
  backoff: Backoff;
  /** Attempts per request, the first included; `Infinity` for no cap (the herd). */
  maxAttempts: number;
  /** One budget per client, or none. */
  budget?: ((client: number) => RetryBudget) | undefined;
}

/** How the clients' requests start. */
export type LiveArrivals =
  /** One request per client, all at time 0. */
  | { kind: 'together' }
  /** Each client sends new requests as a Poisson process of `ratePerSecond` (drawn from the seed), until the horizon. */
  | { kind: 'poisson'; ratePerSecond: number };

/** One live run: N clients with one policy against the target, for at most `horizonMs`. */
export interface LiveRunSpec {
  target: LiveTarget;
  clients: number;
  arrivals: LiveArrivals;
  policy: LivePolicy;
  horizonMs: number;
  /** The seed of the generator every wait (and the Poisson arrivals) is drawn from. */
  seed: number;
  /** Stop as soon as every request is done (the herd); otherwise run to the horizon. */
  stopWhenIdle: boolean;
  /** The bucket of the per-tick series, ms (the server's tick: 10). */
  tickMs: number;
  /** Called about once a second with the time run and the requests done. */
  onProgress?: ((elapsedMs: number, done: number, sent: number) => void) | undefined;
}

/** A live run's result: the simulator's {@link RunResult} shape (so its tables and metrics apply), and what only a live run has. */
export interface LiveRunResult extends RunResult {
  perTick: PerTick;
  /** Actual send time minus the time the policy chose (the horizon start, the Poisson arrival, or failure + wait). */
  lateness: Lateness;
  /** Every send's lateness, ms, in send order (for summaries over several runs; not in the JSON). */
  latenessMs: Float64Array;
  /** Attempts that failed without a response (connection errors), retried like 503s. */
  networkErrors: number;
  /** The server's own record, when the target is a `lab server`. */
  server: LiveStatsResponse | undefined;
}

export { latenessOf, type Lateness };

/** Connections opened before a run at most (one per client of the herd). */
const MAX_WARM_CONNECTIONS = 1000;

/**
 * undici's fetch with the body read in full before the response is handed on. The retrying fetch
 * cancels the body of a response it retries (a 503), and cancelling a body undici has not finished
 * reading closes the connection: the run would then open a new TCP connection for nearly every
 * retry, and measure that. The lab server's bodies are a few bytes, so reading them costs nothing;
 * nobody reads them after (cancelling a body already read is a no-op).
 */
async function bufferedFetch(url: string, init: RequestInit | undefined, dispatcher: Agent): Promise<Response> {
  const res = await undiciFetch(url, { ...(init as object), dispatcher });
  await res.arrayBuffer();
  return res as unknown as Response;
}

/** Per-tick counters on the fleet's own clock, from its time 0. */
class Recorder {
  readonly perTick: PerTick;
  readonly lateness: number[] = [];
  sent = 0;
  done = 0;
  succeeded = 0;
  gaveUp = 0;
  budgetRefusals = 0;
  networkErrors = 0;
  lastDoneAt = 0;

  constructor(
    private readonly t0: number,
    private readonly tickMs: number,
    ticks: number,
  ) {
    this.perTick = { arrivals: new Int32Array(ticks), retries: new Int32Array(ticks), successes: new Int32Array(ticks), fresh: new Int32Array(ticks) };
  }

  private tick(now: number): number {
    return Math.min(this.perTick.arrivals.length - 1, Math.max(0, Math.floor((now - this.t0) / this.tickMs)));
  }

  send(now: number, intended: number, retry: boolean): void {
    const t = this.tick(now);
    this.sent++;
    this.perTick.arrivals[t]!++;
    if (retry) this.perTick.retries[t]!++;
    else this.perTick.fresh[this.tick(intended)]!++;
    this.lateness.push(now - intended);
  }

  finish(now: number, ok: boolean): void {
    this.done++;
    this.lastDoneAt = now;
    if (ok) {
      this.succeeded++;
      this.perTick.successes[this.tick(now)]!++;
    } else this.gaveUp++;
  }
}

/** The Poisson arrivals of B2: for each client in turn, exponential gaps of mean 1/rate s, until the horizon; sorted by time. */
function poissonArrivals(clients: number, ratePerSecond: number, horizonMs: number, rng: PyRandom): { client: number; atMs: number }[] {
  const out: { client: number; atMs: number }[] = [];
  for (let c = 0; c < clients; c++) {
    for (let x = rng.expovariate(ratePerSecond); x * 1000 < horizonMs; x += rng.expovariate(ratePerSecond)) out.push({ client: c, atMs: x * 1000 });
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/**
 * Opens up to `n` keep-alive connections to a `lab server` before a run (its ping path is outside
 * the model), so that the first wave measures the policy rather than TCP connection set-up.
 */
async function warmUp(base: string, n: number, dispatcher: Agent): Promise<void> {
  const url = new URL(PING_PATH, base);
  await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await undiciFetch(url, { dispatcher });
      await res.arrayBuffer();
    }),
  );
}

/** POSTs the `lab server`'s reset, so that its time 0 is the run's. */
async function resetServer(base: string, dispatcher: Agent): Promise<void> {
  const res = await undiciFetch(new URL(RESET_PATH, base), { method: 'POST', dispatcher });
  await res.arrayBuffer();
  if (res.status !== 204) throw new Error(`${base}: reset answered ${res.status}`);
}

/** Reads a `lab server`'s stats. */
export async function readServerStats(base: string, dispatcher?: Agent): Promise<LiveStatsResponse> {
  const res = await undiciFetch(new URL(STATS_PATH, base), dispatcher === undefined ? {} : { dispatcher });
  if (res.status !== 200) throw new Error(`${base}: stats answered ${res.status}`);
  return (await res.json()) as LiveStatsResponse;
}

/**
 * Runs `spec.clients` real clients, each request through the library's `withRetry` over undici's
 * `fetch` (one keep-alive connection pool for the run) with real timers, against the target, and
 * records what they sent and got on the fleet's clock. Every wait is drawn from one `PyRandom(seed)`
 * shared by all clients, as in the simulator (the order of draws follows real time, so the
 * numbers are not the simulator's seed for seed).
 *
 * The run stops by itself: when every request is done (with `stopWhenIdle`) or at the horizon,
 * when waits and requests in flight are aborted; then the pool is destroyed. Nothing is left open.
 */
export async function runLive(spec: LiveRunSpec): Promise<LiveRunResult> {
  const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000 });
  // One controller per call, not one for the run: thousands of listeners on one signal make every
  // add and remove linear, and that cost would show as the instrument's lateness.
  const controllers = new Set<AbortController>();
  let stopped = false;
  const stopAll = (reason: string): void => {
    stopped = true;
    const error = new Error(reason);
    for (const c of controllers) c.abort(error);
    controllers.clear();
  };
  const timers = new Set<NodeJS.Timeout>();
  try {
    const rng = new PyRandom(spec.seed);
    const arrivals =
      spec.arrivals.kind === 'together'
        ? Array.from({ length: spec.clients }, (_, client) => ({ client, atMs: 0 }))
        : poissonArrivals(spec.clients, spec.arrivals.ratePerSecond, spec.horizonMs, rng);
    const budgets = Array.from({ length: spec.clients }, (_, c) => spec.policy.budget?.(c));
    if (spec.target.labServer !== undefined) await warmUp(spec.target.labServer, Math.min(spec.clients, MAX_WARM_CONNECTIONS), agent);
    // Time 0 is taken before the reset is sent, so the server's time 0 is never before the fleet's:
    // its start-up cannot end early on the fleet's clock. The reset's round trip counts as lateness.
    const t0 = performance.now();
    if (spec.target.labServer !== undefined) await resetServer(spec.target.labServer, agent);
    const rec = new Recorder(t0, spec.tickMs, Math.ceil(spec.horizonMs / spec.tickMs));
    const maxAttempts = spec.policy.maxAttempts === Infinity ? Number.MAX_SAFE_INTEGER : spec.policy.maxAttempts;
    const calls: Promise<void>[] = [];
    let allDone: () => void = () => {};
    const idle = new Promise<void>((resolve) => (allDone = resolve));

    /** One logical request: its own withRetry (so that its attempts and its chosen send times are its own). */
    const call = (client: number, intendedAt: number): Promise<void> => {
      let intended = intendedAt;
      let attempts = 0;
      const fetchFn: FetchFunction = (input, init) => {
        const now = performance.now();
        attempts++;
        rec.send(now, intended, attempts > 1);
        return bufferedFetch(input as string, init, agent);
      };
      const budget = budgets[client];
      const api = withRetry(fetchFn, {
        maxAttempts,
        backoff: spec.policy.backoff,
        random: rng,
        maxRetryAfterMs: spec.horizonMs,
        ...(budget === undefined ? {} : { budget }),
        onRetry: ({ delayMs, status }) => {
          if (status === undefined) rec.networkErrors++;
          intended = performance.now() + delayMs;
        },
        onGiveUp: ({ reason }) => {
          if (reason === 'budget') rec.budgetRefusals++;
        },
      });
      const controller = new AbortController();
      controllers.add(controller);
      return api(spec.target.url, { signal: controller.signal }).then(
        (res) => {
          controllers.delete(controller);
          if (!stopped) rec.finish(performance.now(), res.status >= 200 && res.status < 300);
        },
        () => {
          controllers.delete(controller);
          // Cut at the horizon: outstanding. Otherwise out of attempts on network errors.
          if (!stopped) rec.finish(performance.now(), false);
        },
      );
    };

    // First sends: each at its time on the fleet's clock, the lateness measured against it.
    let next = 0;
    const launch = (): void => {
      const now = performance.now();
      while (next < arrivals.length && t0 + arrivals[next]!.atMs <= now) {
        const a = arrivals[next++]!;
        calls.push(call(a.client, t0 + a.atMs));
      }
      if (next < arrivals.length) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          launch();
        }, Math.max(0, t0 + arrivals[next]!.atMs - performance.now()));
        timers.add(timer);
      }
      if (spec.stopWhenIdle && next === arrivals.length) void Promise.all(calls).then(() => allDone());
    };
    launch();

    const progress = setInterval(() => spec.onProgress?.(performance.now() - t0, rec.done, rec.sent), 1000);
    timers.add(progress);
    const horizon = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, t0 + spec.horizonMs - performance.now()));
      timers.add(timer);
    });
    await Promise.race([horizon, ...(spec.stopWhenIdle ? [idle] : [])]);
    const ended = performance.now();
    for (const t of timers) clearTimeout(t);
    timers.clear();
    stopAll('horizon reached');
    await Promise.all(calls);
    const outstanding = arrivals.length - rec.done;
    const finished = outstanding === 0;
    const finishMs = finished ? rec.lastDoneAt - t0 : spec.horizonMs;
    const server = spec.target.labServer === undefined ? undefined : await readServerStats(spec.target.labServer, agent);
    const crashTicks = server === undefined ? [] : server.crashAtMs.filter((ms) => ms < spec.horizonMs).map((ms) => Math.round(ms / server.tickMs));
    return {
      seed: spec.seed,
      ticks: Math.ceil(Math.min(ended - t0, spec.horizonMs) / spec.tickMs),
      finished,
      finishMs,
      finishS: finishMs / 1000,
      requests: rec.sent,
      crashes: crashTicks.length,
      crashTicks,
      succeeded: rec.succeeded,
      gaveUp: rec.gaveUp,
      budgetRefusals: rec.budgetRefusals,
      outstanding,
      perTick: rec.perTick,
      lateness: latenessOf(rec.lateness),
      latenessMs: Float64Array.from(rec.lateness),
      networkErrors: rec.networkErrors,
      server,
    };
  } finally {
    for (const t of timers) clearTimeout(t);
    stopAll('run ended');
    await agent.destroy();
  }
}
