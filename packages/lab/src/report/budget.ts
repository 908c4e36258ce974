import { ARTICLE_SERVER, BUDGET_POLICIES, budgetTrace, formatFixed } from 'herdless/sim';
import { perSecondSpec, tokensSpec, type PerSecondPoint, type TokenPoint } from '../charts/specs.js';
import { budgetCsv, budgetJson, budgetPolicies, budgetTable, budgetTitle, type BudgetResult } from '../experiments/budget.js';
import { runBudgetExperiment } from '../experiments/budget-run.js';
import { defineExperiment, defineFigure } from './registry.js';

const SEEDS = Array.from({ length: 20 }, (_, i) => i);
const OUTAGE = { startS: 5, endS: 15 };
const TICK_S = 0.01;
/** The article's server crashes when more than crashLimit requests arrive within its crash window: per second, about this many. */
const CRASH_PER_SECOND = (ARTICLE_SERVER.crashLimit * 1000) / (ARTICLE_SERVER.crashWindowTicks * ARTICLE_SERVER.tickMs);

/** Ten clients, the downstream down 5–15 s: the article's budget table plus our rows. */
export const budgetExperiment = defineExperiment<BudgetResult>({
  id: 'budget',
  title: 'Retry budgets during a 10 s outage',
  explanation:
    'Ten clients send about 300 new requests a second in all (Poisson) to the same server; the downstream is down from 5 s to 15 s. ' +
    'Each client follows gRFC A6’s example retryPolicy (maxAttempts 4, 0.1 s → 1 s backoff, ±20% jitter) with its own budget object, ' +
    'or none. Without a budget, load during the outage nearly quadruples and the retries alone keep the server crashing after the cause ' +
    'is gone. gRPC retryThrottling and the 10% ratio bring it back at 15 s; counted when sent (the article’s lab) the ratio lets retries ' +
    'reach about 20% of arrivals, counted when decided (herdless’s default) it holds them under 10%.',
  command: 'npm run lab -- budget',
  seeds: '0-19',
  run: (settings) => runBudgetExperiment({ policies: budgetPolicies(), seeds: SEEDS, ...settings }),
  table: (result) =>
    `${budgetTitle('0-19')}\n${budgetTable(result)}`,
  json: budgetJson,
  csv: budgetCsv,
});

const tokensFigure = defineFigure<TokenPoint>({
  id: 'budget-tokens',
  section: 'budget',
  title: 'One client’s tokens under gRPC retryThrottling, seed 0 (the outage shaded)',
  explanation: (points) => {
    const at = (s: number) => points[Math.round(s / TICK_S)]!.tokens;
    const back = points.find((p) => p.t >= OUTAGE.endS && p.tokens > 5);
    return (
      `Client 0 starts with 10 tokens; each failure takes 1, each success gives back 0.1, and no retry is sent while the tokens are ` +
      `at or below 5 (the dashed line). Before the outage, bursts above capacity cost a few tokens (${formatFixed(at(4.99), 1)} just before 5 s). ` +
      `During the outage the bucket drains to ${formatFixed(Math.min(...points.filter((p) => p.t >= 5 && p.t < 15).map((p) => p.tokens)), 1)} ` +
      `and no retry leaves the client. After it, successes refill only 0.1 at a time, so retries come back ` +
      `${back ? `at ${formatFixed(back.t, 2)} s` : 'only later'}.`
    );
  },
  command: 'npm run lab -- budget --trace 0 --series tokens',
  data: () => Array.from(budgetTrace(0, []).tokens, (tokens, tick) => ({ t: Number((tick * TICK_S).toFixed(2)), tokens })),
  spec: (points, size) => tokensSpec(points, { outage: OUTAGE, maxTokens: 10, ...size }),
});

const perSecondFigure = defineFigure<PerSecondPoint>({
  id: 'budget-arrivals',
  section: 'budget',
  title: 'Arrivals per second for each policy, seed 0 (new requests dashed, the outage shaded, one scale for all)',
  explanation: (points) => {
    const four = points.filter((p) => p.policy === '4 attempts' && p.second >= 5 && p.second < 15);
    const ratio = four.reduce((a, p) => a + p.arrivals, 0) / four.reduce((a, p) => a + p.fresh, 0);
    return (
      `The bars are all requests reaching the server each second, the dashed line the new ones. With 4 attempts and no budget, arrivals ` +
      `during the outage are ${formatFixed(ratio, 2)}× the new requests, and after 15 s the retries alone keep them near 1,200 a second, ` +
      `above the crash threshold (the red line, ${CRASH_PER_SECOND} a second), so the server keeps crashing until the run ends. Every panel has the same scale. With gRPC throttling the bars hug the ` +
      `dashed line throughout; the 10% ratio adds a visible layer of retries during the outage, twice as thick when retries are counted ` +
      `only when sent. Finagle’s budget and the AWS retry quota spend their reserves in a burst as the outage begins, then throttle. ` +
      `Adaptive throttling (the SRE book's K = 2 over two minutes) refuses first tries too: beside the 10% ratio, arrivals in the outage's ` +
      `last 5 s are ${formatFixed(share(points, '4 attempts + ratio + adaptive throttling', 10, 15), 2)}× the new ` +
      `requests; but after it the client lets traffic back only as its window fills with accepts again ` +
      `(${formatFixed(share(points, '4 attempts + ratio + adaptive throttling', 15, 20), 2)}× the new requests from 15 to 20 s).`
    );
  },
  command: 'npm run lab -- budget --trace 0 --series per-second',
  data: () =>
    budgetTrace(0, BUDGET_POLICIES).perSecond.flatMap((p) => p.arrivals.map((arrivals, second) => ({ policy: p.policy, second, arrivals, fresh: p.fresh[second]! }))),
  spec: (points, size) => perSecondSpec(points, BUDGET_POLICIES, { outage: OUTAGE, crashPerSecond: CRASH_PER_SECOND, ...size }),
});

/** Arrivals ÷ new requests of `policy` over seconds [from, to). */
function share(points: readonly PerSecondPoint[], policy: string, from: number, to: number): number {
  const span = points.filter((p) => p.policy === policy && p.second >= from && p.second < to);
  return span.reduce((a, p) => a + p.arrivals, 0) / span.reduce((a, p) => a + p.fresh, 0);
}

/** The budget section's figures. */
export const BUDGET_FIGURES = [tokensFigure, perSecondFigure];
