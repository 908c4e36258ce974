// What the overload section measures, one synchronous operation per call: the client's adaptive
// throttling decision (asked before every attempt, told every answer) and the server's admission
// (admit, then release when the answer is done). Shared by the timing run (overload.mjs) and the
// instruction count (overload-instructions-child.mjs), so that both measure the same objects.
import { adaptiveThrottling, retryRatioBudget, systemRandom } from '../../packages/herdless/dist/index.js';
import { LoadShedder } from '../../packages/herdless/dist/server/index.js';

/** The baselines the ratios are taken against, one per group. */
export const THROTTLE_BASELINE = 'retry ratio 10% (SRE): onAttempt + onSuccess';
export const SHEDDER_BASELINE = 'LoadShedder, fixed maxInFlight: admit + release';

/**
 * Fresh subjects: `{ name: () => unknown }`. The clock of the throttles advances 1 ms per
 * operation (windows slide, buckets roll); the shedders read the real clock, as in a server.
 */
export function overloadSubjects() {
  const subjects = {};

  const ratio = retryRatioBudget({ ratio: 0.1 });
  let ratioNow = 0;
  subjects[THROTTLE_BASELINE] = () => {
    ratioNow++;
    ratio.onAttempt(ratioNow, false);
    ratio.onSuccess(ratioNow, false);
  };

  const healthy = adaptiveThrottling();
  let healthyNow = 0;
  // A backend that accepts everything: the rule's probability is 0, no random draw.
  subjects['adaptiveThrottling, healthy: admit + onAnswer (accepted)'] = () => {
    healthyNow++;
    const sent = healthy.admit(healthyNow, systemRandom, false);
    healthy.onAnswer(healthyNow, true);
    return sent;
  };

  const refusing = adaptiveThrottling();
  let refusingNow = 0;
  let n = 0;
  // A backend that accepts one answer in three: p ≈ 1/3, a draw per admission (steady state).
  subjects['adaptiveThrottling, backend accepting 1 in 3: admit + onAnswer'] = () => {
    refusingNow++;
    const sent = refusing.admit(refusingNow, systemRandom, false);
    if (sent) refusing.onAnswer(refusingNow, ++n % 3 === 0);
    return sent;
  };

  const shedder = (options) => {
    const s = new LoadShedder({ maxInFlight: 64, ...options });
    return () => {
      const admission = s.admit(1);
      admission.release();
      return admission;
    };
  };
  // Event-loop monitoring on, with thresholds never reached: the cost of reading the monitor per
  // request (a synchronous benchmark loop holds the event loop, which a real threshold would shed).
  const loop = { maxEventLoopDelayMs: 1e9, maxEventLoopUtilization: 1 };
  subjects[SHEDDER_BASELINE] = shedder({});
  subjects['LoadShedder + adaptiveLimit: admit + release'] = shedder({ adaptiveLimit: true });
  subjects['LoadShedder + event-loop monitoring: admit + release'] = shedder(loop);
  subjects['LoadShedder + adaptiveLimit + event-loop monitoring: admit + release'] = shedder({ adaptiveLimit: true, ...loop });
  return subjects;
}
