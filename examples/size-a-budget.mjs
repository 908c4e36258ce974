// Size a retry budget before shipping it: run the article's outage (10 clients, ~300 requests/s,
// the downstream down from 5 s to 15 s) in virtual time with your own policy, and read the load.
import { proportionalJitterBackoff, retryThrottlingBudget } from 'herdless';
import { budgetRow, budgetScenario } from 'herdless/sim';

const backoff = proportionalJitterBackoff({ initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 });
const seeds = [0, 1, 2, 3, 4];
for (const maxTokens of [10, 100, 1000]) {
  const policy = { name: `maxTokens ${maxTokens}`, backoff, maxAttempts: 4, budget: () => retryThrottlingBudget({ maxTokens, tokenRatio: 0.1 }) };
  const row = budgetRow(budgetScenario(policy), seeds);
  console.log(`${policy.name.padEnd(16)} load during the outage ${row.load.mean.toFixed(2)}x, back to normal at ${row.backToNormal.mean.toFixed(1)} s`);
}
