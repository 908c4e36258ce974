import type { Backoff } from '../core/backoff/backoff.js';
import type { RetryBudget } from '../core/budget/budget.js';
import type { AttemptThrottle } from '../core/budget/adaptive-throttling.js';

/**
 * The server of every lab experiment, in the article's model (rules S1–S2 of the lab notes):
 * time runs in ticks; each tick the server accepts up to `capacityPerTick` of the requests that
 * arrive and fails the rest; when more than `crashLimit` requests arrived over the last
 * `crashWindowTicks` ticks it crashes and stays down for `restartMs`, failing everything.
 */
export interface ServerModel {
  /** The length of one tick, ms. Article: 10. */
  tickMs: number;
  /** Requests served per tick; the rest of the tick's batch fails. Article: 5 (500 per second). */
  capacityPerTick: number;
  /** How many recent ticks the crash rule sums over. Article: 10 (100 ms). */
  crashWindowTicks: number;
  /** The server crashes when the window's arrivals exceed this. Article: 100 (twice the capacity). */
  crashLimit: number;
  /** How long a crash keeps the server down, ms. Article: 1000. */
  restartMs: number;
  /** The server is starting up (failing everything, not a crash) for this long from t = 0, ms. Herd: 1000. */
  startupMs: number;
  /** Periods in which the server is down (a downstream outage; not counted as crashes), ms, [startMs, endMs). */
  outages: readonly { startMs: number; endMs: number }[];
}

/** How the clients' first sends arrive. */
export type Arrivals =
  /** Every client sends one request; client c's first send is at uniform(0, spreadMs), truncated to its tick. */
  | { kind: 'together'; spreadMs: number }
  /** Every client sends new requests as a Poisson process of `ratePerSecond` until the horizon. */
  | { kind: 'poisson'; ratePerSecond: number };

/** What each simulated client does on a failure: the library's own policy objects. */
export interface ClientPolicy {
  /** A label for tables, e.g. `'full jitter'`. */
  name: string;
  /** The backoff that computes every wait (the very object `retry()` would use). */
  backoff: Backoff;
  /** Attempts per request, the first included (gRPC's `maxAttempts`). `Infinity` = no cap (the herd experiment). */
  maxAttempts: number;
  /** Makes one retry budget per client (each client process has its own), or none. */
  budget?: (client: number) => RetryBudget;
  /**
   * Makes one adaptive throttle per client (`adaptiveThrottling`), or none. It is asked about every
   * request of a tick's batch — first tries and retries — before the server sees the batch; a
   * refused request is not sent and ends (counted in `gaveUp` and `throttled`). A success is an
   * accept; a failure (server down or over capacity) a rejection.
   */
  throttle?: (client: number) => AttemptThrottle;
}

/** A complete experiment setup, except the seed: see `runScenario`. */
export interface Scenario {
  clients: number;
  arrivals: Arrivals;
  server: ServerModel;
  policy: ClientPolicy;
  /** The run stops here at the latest, ms. Herd: 120 000. Must be a whole number of ticks. */
  horizonMs: number;
  /** Stop as soon as no request is outstanding and none is still to come (herd: true). */
  stopWhenIdle: boolean;
}

/** The article's server: 10 ms ticks, 5 per tick, crash above 100 arrivals in 100 ms, 1 s restart. */
export const ARTICLE_SERVER: ServerModel = Object.freeze({
  tickMs: 10,
  capacityPerTick: 5,
  crashWindowTicks: 10,
  crashLimit: 100,
  restartMs: 1000,
  startupMs: 1000,
  outages: Object.freeze([]) as readonly never[],
});
