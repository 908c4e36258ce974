// Retry outside a circuit breaker: once the breaker opens, its refusals end the call at once —
// they are never retried, so a dead dependency costs no extra load.
import { retry, circuitBreaker, consecutiveFailures, isRetryError } from 'herdless';

let sent = 0;
const down = async () => {
  sent += 1;
  throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
};
const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 3 }), openDurationMs: 10_000 });

for (let call = 1; call <= 3; call++) {
  try {
    await retry(() => breaker.execute(down), { maxAttempts: 3, backoff: { delay: () => 1 } });
  } catch (error) {
    console.log(`call ${call}: ${isRetryError(error) ? error.reason : error.message}; breaker ${breaker.state}; requests sent so far ${sent}`);
  }
}
