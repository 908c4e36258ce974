import { backoffFromSpec } from '../core/backoff/spec.js';
import type { BackoffSpec } from '../core/backoff/backoff.js';
import type { Arrivals, Scenario, ServerModel } from './scenario.js';

/**
 * A policy as data: what a lab config file, the lab page and worker threads exchange.
 * `maxAttempts: null` means no cap (the herd experiment's clients retry until they succeed).
 */
export interface PolicySpec {
  name: string;
  backoff: BackoffSpec;
  maxAttempts: number | null;
}

/** A {@link Scenario} as plain JSON data (no functions): see {@link scenarioFromSpec}. */
export interface ScenarioSpec {
  clients: number;
  arrivals: Arrivals;
  server: ServerModel;
  policy: PolicySpec;
  horizonMs: number;
  stopWhenIdle: boolean;
}

/**
 * Builds a runnable {@link Scenario} from its JSON form, turning the policy's backoff spec into the
 * library's backoff object. Structural validation of files is the lab's job; this checks the backoff.
 * @throws InvalidOptionError for an invalid backoff (the field is named `policy.backoff.…`).
 */
export function scenarioFromSpec(spec: ScenarioSpec): Scenario {
  return {
    clients: spec.clients,
    arrivals: spec.arrivals,
    server: spec.server,
    horizonMs: spec.horizonMs,
    stopWhenIdle: spec.stopWhenIdle,
    policy: {
      name: spec.policy.name,
      backoff: backoffFromSpec(spec.policy.backoff, 'policy.backoff'),
      maxAttempts: spec.policy.maxAttempts ?? Infinity,
    },
  };
}

/** The JSON form of a scenario whose policy has no budget. @throws TypeError when it has one. */
export function scenarioToSpec(scenario: Scenario): ScenarioSpec {
  if (scenario.policy.budget) throw new TypeError('scenarioToSpec: a policy with a budget has no JSON form yet');
  return {
    clients: scenario.clients,
    arrivals: scenario.arrivals,
    server: scenario.server,
    horizonMs: scenario.horizonMs,
    stopWhenIdle: scenario.stopWhenIdle,
    policy: {
      name: scenario.policy.name,
      backoff: scenario.policy.backoff.toJSON(),
      maxAttempts: Number.isFinite(scenario.policy.maxAttempts) ? scenario.policy.maxAttempts : null,
    },
  };
}
