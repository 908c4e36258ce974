import type { ClientPolicy, PolicySpec } from 'herdless/sim';

/**
 * A policy object as data, so that it can cross to a worker thread: its backoff's and its budget's
 * `toJSON()` and its throttle's (every backoff, budget and throttle of the library has one; the budget is asked of client 0,
 * since all clients build theirs alike).
 * @throws TypeError for a budget without `toJSON()` (one of the user's own, not the library's).
 */
export function policySpecOf(policy: ClientPolicy): PolicySpec {
  const budget = policy.budget?.(0);
  const throttle = policy.throttle?.(0);
  if (throttle && typeof (throttle as { toJSON?: unknown }).toJSON !== 'function') throw new TypeError(`policy ${JSON.stringify(policy.name)}: its throttle has no toJSON(), so it cannot run on a worker thread`);
  if (budget && typeof (budget as { toJSON?: unknown }).toJSON !== 'function') throw new TypeError(`policy ${JSON.stringify(policy.name)}: its budget has no toJSON(), so it cannot run on a worker thread`);
  return {
    name: policy.name,
    backoff: policy.backoff.toJSON(),
    maxAttempts: Number.isFinite(policy.maxAttempts) ? policy.maxAttempts : null,
    ...(budget ? { budget: (budget as unknown as { toJSON(): NonNullable<PolicySpec['budget']> }).toJSON() } : {}),
    ...(throttle ? { throttle: (throttle as unknown as { toJSON(): NonNullable<PolicySpec['throttle']> }).toJSON() } : {}),
  };
}
