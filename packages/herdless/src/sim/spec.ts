import { backoffFromSpec } from '../core/backoff/spec.js';
import type { BackoffSpec } from '../core/backoff/backoff.js';
import type { BudgetSpec } from '../core/budget/budget.js';
import { budgetFromSpec } from '../core/budget/spec.js';
import { throttleFromSpec, type ThrottleSpec } from '../core/budget/adaptive-throttling.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Arrivals, Scenario, ServerModel } from './scenario.js';

/**
 * A policy as data: what a lab config file, the lab page and worker threads exchange.
 * `maxAttempts: null` means no cap (the herd experiment's clients retry until they succeed).
 */
export interface PolicySpec {
  name: string;
  backoff: BackoffSpec;
  maxAttempts: number | null;
  /** One retry budget per client, built from this spec (see `budgetFromSpec`); none when absent. */
  budget?: BudgetSpec;
  /** One adaptive throttle per client, built from this spec (see `throttleFromSpec`); none when absent. */
  throttle?: ThrottleSpec;
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
 * @throws InvalidOptionError for a spec or policy that is not an object, or an invalid backoff or
 *   budget or throttle (the field is named `policy.backoff.…`, `policy.budget.…`, `policy.throttle.…`).
 */
export function scenarioFromSpec(spec: ScenarioSpec): Scenario {
  const owner = 'scenarioFromSpec';
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new InvalidOptionError(owner, 'spec', spec, 'must be a ScenarioSpec object');
  const policy: unknown = spec.policy;
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy) || typeof (policy as { name?: unknown }).name !== 'string') {
    const hint = 'policies' in spec ? ' (a lab config file lists "policies": pass one of them as "policy")' : '';
    throw new InvalidOptionError(owner, 'policy', policy, `must be a PolicySpec { name, backoff, maxAttempts, budget? }${hint}`);
  }
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
      ...(spec.policy.budget === undefined ? {} : budgetFactory(spec.policy.budget)),
      ...(spec.policy.throttle === undefined ? {} : throttleFactory(spec.policy.throttle)),
    },
  };
}

function budgetFactory(spec: BudgetSpec): { budget: () => ReturnType<typeof budgetFromSpec> } {
  budgetFromSpec(spec, 'policy.budget'); // validate once, up front
  return { budget: () => budgetFromSpec(spec, 'policy.budget') };
}

function throttleFactory(spec: ThrottleSpec): { throttle: () => ReturnType<typeof throttleFromSpec> } {
  throttleFromSpec(spec, 'policy.throttle'); // validate once, up front
  return { throttle: () => throttleFromSpec(spec, 'policy.throttle') };
}

/** The JSON form of a scenario whose policy has no budget. @throws TypeError when it has one. */
export function scenarioToSpec(scenario: Scenario): ScenarioSpec {
  if (scenario.policy.budget || scenario.policy.throttle) throw new TypeError('scenarioToSpec: a policy with a budget or a throttle has no JSON form yet');
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
