import type { Backoff } from '../../core/backoff/backoff.js';
import { constantBackoff } from '../../core/backoff/constant.js';
import { decorrelatedJitterBackoff } from '../../core/backoff/decorrelated.js';
import { equalJitterBackoff, exponentialBackoff, fullJitterBackoff } from '../../core/backoff/exponential.js';
import { InvalidOptionError } from '../../core/errors.js';
import { objectOption } from '../../core/validate.js';
import { runScenario, type RunResult } from '../engine.js';
import { ARTICLE_SERVER, type ClientPolicy, type Scenario, type ServerModel } from '../scenario.js';
import { summarize, type Summary } from '../stats.js';

/** The article's six herd strategies, in table order, by their table names. */
export const HERD_STRATEGIES = ['immediate', 'fixed 1s', 'exponential', 'full jitter', 'equal jitter', 'decorrelated'] as const;
/** One of {@link HERD_STRATEGIES}. */
export type HerdStrategy = (typeof HERD_STRATEGIES)[number];

/**
 * The backoff object behind each herd strategy — the library's own factories with the article's
 * parameters: waits of 0.1 s × 2^n after the n-th failure (so 200 ms × 2^(n−1)), capped at 10 s;
 * decorrelated jitter from a 100 ms base.
 *
 * @throws InvalidOptionError for a strategy that is not one of {@link HERD_STRATEGIES}.
 */
export function herdBackoff(strategy: HerdStrategy): Backoff {
  const expo = { initialBackoffMs: 200, backoffMultiplier: 2, maxBackoffMs: 10_000 };
  switch (strategy) {
    case 'immediate':
      return constantBackoff({ delayMs: 0 });
    case 'fixed 1s':
      return constantBackoff({ delayMs: 1000 });
    case 'exponential':
      return exponentialBackoff(expo);
    case 'full jitter':
      return fullJitterBackoff(expo);
    case 'equal jitter':
      return equalJitterBackoff(expo);
    case 'decorrelated':
      return decorrelatedJitterBackoff({ baseMs: 100, maxBackoffMs: 10_000 });
    default:
      // From JavaScript, not one of the six: say so here, not later as a policy without a backoff.
      throw new InvalidOptionError('herdBackoff', 'strategy', strategy, `must be one of ${HERD_STRATEGIES.join(', ')}`);
  }
}

/** Knobs of the herd experiment; every field has the article's value as default. */
export interface HerdOptions {
  /** Clients that fail together. Default 1000. */
  clients?: number | undefined;
  /** First sends spread uniformly over [0, spreadMs). Default 0 (the main run); the variant uses 900. */
  spreadMs?: number | undefined;
  /** The run's horizon, ms. Default 120 000. */
  horizonMs?: number | undefined;
  /** Server overrides (capacity, crash limit, …). Default: the article's server. */
  server?: Partial<ServerModel> | undefined;
}

/**
 * The article's first experiment as a {@link Scenario}: 1,000 clients send at t = 0 (or spread over
 * `spreadMs`) to a server that is starting up for 1 s, then retry by `policy` with no attempt cap
 * until all succeed or 120 s pass.
 *
 * @throws InvalidOptionError for an unknown strategy or option (the values are checked by
 *   {@link runScenario}).
 */
export function herdScenario(policy: HerdStrategy | ClientPolicy, options: HerdOptions = {}): Scenario {
  objectOption('herdScenario', 'options', options, ['clients', 'spreadMs', 'horizonMs', 'server']);
  const p: ClientPolicy = typeof policy === 'string' ? { name: policy, backoff: herdBackoff(policy), maxAttempts: Infinity } : policy;
  return {
    clients: options.clients ?? 1000,
    arrivals: { kind: 'together', spreadMs: options.spreadMs ?? 0 },
    server: { ...ARTICLE_SERVER, ...options.server },
    policy: p,
    horizonMs: options.horizonMs ?? 120_000,
    stopWhenIdle: true,
  };
}

/**
 * One row of the herd table. Finish in seconds; means unrounded. A run finishes when its last
 * request is done — succeeded, or given up (attempts exhausted, or a retry refused by the budget) —
 * or at the horizon; so a short finish time with `gaveUp` above 0 is clients giving up, not succeeding.
 */
export interface HerdRow {
  strategy: string;
  /** When each run ended, s: its last request succeeded or gave up, or the horizon. */
  finish: Summary;
  requests: Summary;
  crashes: Summary;
  /** Runs cut at the horizon with requests still outstanding (neither succeeded nor given up). */
  unfinished: number;
  /** Requests per run that gave up (attempts exhausted or retry refused by the budget). 0 without a cap or budget. */
  gaveUp: Summary;
}

/** Folds the runs of one strategy (one per seed, in seed order) into a table row. */
export function herdRow(strategy: string, runs: readonly RunResult[]): HerdRow {
  return {
    strategy,
    finish: summarize(runs.map((r) => r.finishS)),
    requests: summarize(runs.map((r) => r.requests)),
    crashes: summarize(runs.map((r) => r.crashes)),
    unfinished: runs.filter((r) => !r.finished).length,
    gaveUp: summarize(runs.map((r) => r.gaveUp)),
  };
}

/** Runs every strategy over every seed in this thread and returns the table rows. */
export function runHerd(strategies: readonly HerdStrategy[], seeds: readonly number[], options: HerdOptions = {}): HerdRow[] {
  return strategies.map((s) => {
    const scenario = herdScenario(s, options);
    return herdRow(s, seeds.map((seed) => runScenario(scenario, seed)));
  });
}
