// 4. The cost of the shared policies' decisions (synchronous, ns per operation): the retry budgets'
// bookkeeping and retry decision, and the circuit breaker's admission and release. The clock
// advances 1 ms per operation, so windows slide and buckets roll as they would under load.
// Also, for context, a successful call through each breaker's async shell.
import { do_not_optimize } from 'mitata';
import { circuitBreaker as cockatielBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import CircuitBreakerOpossum from 'opossum';
import {
  awsRetryQuota,
  circuitBreaker,
  consecutiveFailures,
  failureRatio,
  finagleRetryBudget,
  retryRatioBudget,
  retryThrottlingBudget,
} from '../packages/herdless/dist/index.js';
import { circuitBreakerMachine } from '../packages/herdless/dist/sim/index.js';
import { compare } from './lib/harness.mjs';
import { op } from './lib/subjects.mjs';

export async function benchDecisions({ rounds, minCpuMs }) {
  const budgets = {
    'retryThrottling (gRFC A6)': retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 }),
    'retry ratio 10% (SRE)': retryRatioBudget({ ratio: 0.1 }),
    'Finagle budget': finagleRetryBudget(),
    'AWS retry quota': awsRetryQuota(),
  };
  const cases = {};
  for (const [name, b] of Object.entries(budgets)) {
    let now = 0;
    // A first try that succeeds: what every successful call costs the budget.
    cases[`${name}: success (onAttempt + onSuccess)`] = () => {
      now++;
      b.onAttempt(now, false);
      b.onSuccess(now, false);
    };
    // A failed try and the retry decision, then the retry succeeding (so the budget stays in a
    // steady state rather than draining): onAttempt, onFailure, allowRetry, onAttempt, onSuccess.
    cases[`${name}: failure + retry decision + retry`] = () => {
      now++;
      b.onAttempt(now, false);
      b.onFailure(now, false);
      const allowed = b.allowRetry(now);
      b.onAttempt(now, true);
      b.onSuccess(now, true);
      return do_not_optimize(allowed);
    };
  }
  for (const [name, counting] of [
    ['consecutive failures', consecutiveFailures()],
    ['failure ratio (10 s, 10 buckets)', failureRatio()],
  ]) {
    const m = circuitBreakerMachine({ counting });
    let now = 0;
    cases[`breaker (${name}), closed: acquire + release`] = () => {
      now++;
      return do_not_optimize(m.release(m.acquire(now), 'success', now));
    };
  }
  const open = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1e9 });
  open.release(open.acquire(0), 'failure', 0);
  let openNow = 0;
  cases['breaker, open: acquire refused'] = () => do_not_optimize(open.acquire(++openNow));
  const decisions = await compare(cases, { rounds, minCpuMs });

  // The async shells, successful call: bare, herdless, cockatiel, opossum.
  const ours = circuitBreaker();
  const theirs = cockatielBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
  const opossum = new CircuitBreakerOpossum(op);
  const shells = await compare(
    {
      'bare await op()': () => op(),
      'herdless circuitBreaker().execute(op)': () => ours.execute(op),
      'cockatiel 3 circuitBreaker().execute(op)': () => theirs.execute(op),
      'opossum 9 breaker.fire() (defaults)': () => opossum.fire(),
    },
    { rounds, minCpuMs, baseline: 'bare await op()' },
  );
  opossum.shutdown();
  return { decisions, shells };
}
