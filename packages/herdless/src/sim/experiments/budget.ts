import { proportionalJitterBackoff } from '../../core/backoff/exponential.js';
import type { RetryBudget } from '../../core/budget/budget.js';
import { adaptiveThrottling } from '../../core/budget/adaptive-throttling.js';
import { awsRetryQuota } from '../../core/budget/aws-retry-quota.js';
import { finagleRetryBudget } from '../../core/budget/finagle.js';
import { ARTICLE_RETRY_RATIO, retryRatioBudget } from '../../core/budget/retry-ratio.js';
import { retryThrottlingBudget, type RetryThrottlingBudget } from '../../core/budget/retry-throttling.js';
import { InvalidOptionError } from '../../core/errors.js';
import { objectOption } from '../../core/validate.js';
import { runScenario, type RunResult } from '../engine.js';
import { ARTICLE_SERVER, type ClientPolicy, type Scenario } from '../scenario.js';
import { summarize, type Summary } from '../stats.js';

/** The budget experiment's policies, in table order: the article's four rows, then ours. */
export const BUDGET_POLICIES = [
  'no retry',
  '4 attempts',
  '4 attempts + gRPC throttling',
  '4 attempts + 10% retry ratio',
  '4 attempts + 10% retry ratio (at decision)',
  '4 attempts + Finagle budget',
  '4 attempts + AWS retry quota',
  '4 attempts + adaptive throttling',
  '4 attempts + ratio + adaptive throttling',
] as const;
/** One of {@link BUDGET_POLICIES}. */
export type BudgetPolicyName = (typeof BUDGET_POLICIES)[number];

/**
 * The policy behind each row, built from the library's own objects: gRFC A6's example retryPolicy
 * (maxAttempts 4, initialBackoff 0.1 s, maxBackoff 1 s, multiplier 2, ±20% jitter as the article
 * has it) and one budget per client: retryThrottling (maxTokens 10, tokenRatio 0.1); the SRE
 * book's 10% ratio over the last second counted at send time (the article's lab) or at decision
 * time (ours: the same ratio, window and floor 0, but a retry counts when it is granted);
 * Finagle's and the AWS SDK's budgets with their defaults; the SRE book's client-side adaptive
 * throttling (`adaptiveThrottling()` with its defaults: K = 2 over two minutes), alone and beside
 * the 10% ratio counted at decision ('ratio + adaptive throttling'), as the book pairs them — it
 * may refuse first tries too.
 *
 * @throws InvalidOptionError for a name that is not one of {@link BUDGET_POLICIES}.
 */
export function budgetPolicy(name: BudgetPolicyName): ClientPolicy {
  const backoff = proportionalJitterBackoff({ initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 });
  const with4 = (budget?: (client: number) => RetryBudget): ClientPolicy => ({ name, backoff, maxAttempts: 4, ...(budget ? { budget } : {}) });
  switch (name) {
    case 'no retry':
      return { name, backoff, maxAttempts: 1 };
    case '4 attempts':
      return with4();
    case '4 attempts + gRPC throttling':
      return with4(() => retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 }));
    case '4 attempts + 10% retry ratio':
      return with4(() => retryRatioBudget(ARTICLE_RETRY_RATIO));
    case '4 attempts + 10% retry ratio (at decision)':
      return with4(() => retryRatioBudget({ ...ARTICLE_RETRY_RATIO, countAt: 'decision' }));
    case '4 attempts + Finagle budget':
      return with4(() => finagleRetryBudget());
    case '4 attempts + AWS retry quota':
      return with4(() => awsRetryQuota());
    case '4 attempts + adaptive throttling':
      return { ...with4(), throttle: () => adaptiveThrottling() };
    case '4 attempts + ratio + adaptive throttling':
      return { ...with4(() => retryRatioBudget({ ...ARTICLE_RETRY_RATIO, countAt: 'decision' })), throttle: () => adaptiveThrottling() };
    default:
      // From JavaScript (or a name read from a file), not one of the nine: say so here, not later
      // as a scenario without a policy.
      throw new InvalidOptionError('budgetPolicy', 'name', name, `must be one of ${BUDGET_POLICIES.join(', ')}`);
  }
}

/** Knobs of the budget experiment; defaults are the article's. */
export interface BudgetOptions {
  /** Clients (each with its own budget). Default 10. */
  clients?: number | undefined;
  /** New requests per second per client (Poisson). Default 30 (about 300/s in all). */
  ratePerSecond?: number | undefined;
  /** The downstream outage, ms. Default 5000–15 000. */
  outage?: { startMs: number; endMs: number } | undefined;
  /** The horizon, ms. Default 40 000. */
  horizonMs?: number | undefined;
}

/**
 * The article's budget experiment as a {@link Scenario}: 10 clients send new requests (Poisson,
 * 30/s each) to the article's server, which is down from 5 s to 15 s; no start-up period; 40 s.
 *
 * @throws InvalidOptionError for an unknown policy name or option (the values are checked by
 *   {@link runScenario}).
 */
export function budgetScenario(policy: BudgetPolicyName | ClientPolicy, options: BudgetOptions = {}): Scenario {
  objectOption('budgetScenario', 'options', options, ['clients', 'ratePerSecond', 'outage', 'horizonMs']);
  const outage = options.outage ?? { startMs: 5000, endMs: 15_000 };
  return {
    clients: options.clients ?? 10,
    arrivals: { kind: 'poisson', ratePerSecond: options.ratePerSecond ?? 30 },
    server: { ...ARTICLE_SERVER, startupMs: 0, outages: [outage] },
    policy: typeof policy === 'string' ? budgetPolicy(policy) : policy,
    horizonMs: options.horizonMs ?? 40_000,
    stopWhenIdle: false,
  };
}

/** The budget table's measures of one run. */
export interface BudgetMetrics {
  /** Arrivals during the outage ÷ new requests during the outage. */
  load: number;
  /** Crashes at or after the outage's end. */
  crashesAfter: number;
  /**
   * The first whole second s ≥ the outage's end such that in s, s+1 and s+2 successes were at
   * least 90% of new requests; the horizon (in s) if there is none.
   */
  backToNormal: number;
  /** Retries ÷ arrivals during the outage. */
  retryShare: number;
}

/**
 * Computes {@link BudgetMetrics} from a run recorded with `perTick` (throws without it). The outage
 * is the scenario's first one.
 */
export function budgetMetrics(scenario: Scenario, run: RunResult): BudgetMetrics {
  const per = run.perTick;
  if (!per) throw new TypeError('budgetMetrics: run the scenario with { perTick: true }');
  const tickMs = scenario.server.tickMs;
  const outage = scenario.server.outages[0];
  if (!outage) throw new TypeError('budgetMetrics: the scenario has no outage');
  const from = Math.round(outage.startMs / tickMs);
  const to = Math.round(outage.endMs / tickMs);
  let arrivals = 0;
  let fresh = 0;
  let retries = 0;
  for (let t = from; t < to; t++) {
    arrivals += per.arrivals[t]!;
    fresh += per.fresh[t]!;
    retries += per.retries[t]!;
  }
  const perSecond = Math.round(1000 / tickMs);
  const seconds = Math.floor(scenario.horizonMs / 1000);
  const second = (series: Int32Array, s: number): number => {
    let sum = 0;
    for (let t = s * perSecond; t < (s + 1) * perSecond; t++) sum += series[t]!;
    return sum;
  };
  const healthy = (s: number): boolean => second(per.successes, s) >= 0.9 * second(per.fresh, s);
  let backToNormal = seconds;
  for (let s = Math.ceil(outage.endMs / 1000); s + 2 < seconds; s++) {
    if (healthy(s) && healthy(s + 1) && healthy(s + 2)) {
      backToNormal = s;
      break;
    }
  }
  return {
    load: arrivals / fresh,
    crashesAfter: run.crashTicks.filter((t) => t >= to).length,
    backToNormal,
    retryShare: arrivals === 0 ? 0 : retries / arrivals,
  };
}

/** One row of the budget table. */
export interface BudgetRow {
  policy: string;
  load: Summary;
  crashesAfter: Summary;
  backToNormal: Summary;
  retryShare: Summary;
}

/** Runs one policy over the seeds and folds the runs into a row. */
export function budgetRow(scenario: Scenario, seeds: readonly number[]): BudgetRow {
  const metrics = seeds.map((seed) => budgetMetrics(scenario, runScenario(scenario, seed, { perTick: true })));
  return {
    policy: scenario.policy.name,
    load: summarize(metrics.map((m) => m.load)),
    crashesAfter: summarize(metrics.map((m) => m.crashesAfter)),
    backToNormal: summarize(metrics.map((m) => m.backToNormal)),
    retryShare: summarize(metrics.map((m) => m.retryShare)),
  };
}

/** What the article's two budget figures show, for one seed. */
export interface BudgetTrace {
  /** Client 0's tokens after each tick under gRPC throttling. */
  tokens: Float64Array;
  /** Per policy, per second: new requests, arrivals, successes, retries. */
  perSecond: { policy: string; fresh: number[]; arrivals: number[]; successes: number[]; retries: number[] }[];
}

/** Records the article's two budget figures' data for one seed. */
export function budgetTrace(seed: number, policies: readonly BudgetPolicyName[] = BUDGET_POLICIES, options: BudgetOptions = {}): BudgetTrace {
  const throttled = budgetScenario('4 attempts + gRPC throttling', options);
  const tickMs = throttled.server.tickMs;
  const tokens = new Float64Array(Math.round(throttled.horizonMs / tickMs));
  let first: RetryThrottlingBudget | undefined;
  const make = throttled.policy.budget!;
  const traced: Scenario = {
    ...throttled,
    policy: {
      ...throttled.policy,
      budget: (c) => {
        const b = make(c) as RetryThrottlingBudget;
        if (c === 0) first = b;
        return b;
      },
    },
  };
  runScenario(traced, seed, { onTick: (t) => (tokens[t] = first!.tokens) });
  const perSecond = policies.map((name) => perSecondTraffic(name, budgetScenario(name, options), seed));
  return { tokens, perSecond };
}

/** Per second of one seeded run: new requests, arrivals, successes and retries (a figure's data). */
export function perSecondTraffic(
  policy: string,
  scenario: Scenario,
  seed: number,
): { policy: string; fresh: number[]; arrivals: number[]; successes: number[]; retries: number[] } {
  const per = runScenario(scenario, seed, { perTick: true }).perTick!;
  const ticksPerSecond = Math.round(1000 / scenario.server.tickMs);
  const fold = (series: Int32Array): number[] => {
    const out: number[] = [];
    for (let t = 0; t < series.length; t += ticksPerSecond) out.push(series.subarray(t, t + ticksPerSecond).reduce((a, b) => a + b, 0));
    return out;
  };
  return { policy, fresh: fold(per.fresh), arrivals: fold(per.arrivals), successes: fold(per.successes), retries: fold(per.retries) };
}
