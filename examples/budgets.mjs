// One retry budget (gRPC retryThrottling: maxTokens 10, tokenRatio 0.1) shared by every call to a
// service. While the service is down, retries stop after a few failures and the calls fail fast.
import { createRetry, retryThrottlingBudget, isRetryError } from 'herdless';

const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
const callInventory = createRetry({ maxAttempts: 4, budget, backoff: { delay: () => 1 } });

let sent = 0;
const reasons = new Map();
for (let call = 0; call < 20; call++) {
  try {
    await callInventory(async () => {
      sent += 1;
      throw Object.assign(new Error('unavailable'), { status: 503 });
    });
  } catch (error) {
    if (!isRetryError(error)) throw error;
    reasons.set(error.reason, (reasons.get(error.reason) ?? 0) + 1);
  }
}
console.log(`20 calls, ${sent} requests (without a budget: 80); tokens left ${budget.tokens}`);
console.log(`why calls stopped: ${[...reasons].map(([r, n]) => `${r} ${n}`).join(', ')}`);
