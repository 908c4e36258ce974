/**
 * herdless/sim — the deterministic simulator behind the lab. It runs the library's own policy
 * objects (backoffs, budgets) against a model server in virtual time.
 * @packageDocumentation
 */
export { runScenario, type RunOptions, type RunResult, type PerTick } from './engine.js';
export { ARTICLE_SERVER, type Arrivals, type ClientPolicy, type Scenario, type ServerModel } from './scenario.js';
export { summarize, type Summary } from './stats.js';
export { formatFixed } from './format.js';
export {
  HERD_STRATEGIES,
  herdBackoff,
  herdScenario,
  herdRow,
  runHerd,
  type HerdOptions,
  type HerdRow,
  type HerdStrategy,
} from './experiments/herd.js';
export { scenarioFromSpec, scenarioToSpec, type PolicySpec, type ScenarioSpec } from './spec.js';
export {
  BUDGET_POLICIES,
  budgetPolicy,
  budgetScenario,
  budgetMetrics,
  budgetRow,
  budgetTrace,
  type BudgetPolicyName,
  type BudgetOptions,
  type BudgetMetrics,
  type BudgetRow,
  type BudgetTrace,
} from './experiments/budget.js';
export {
  FLEET_POLICIES,
  fleetPolicy,
  fleetScenario,
  fleetRow,
  fleetTrace,
  type FleetPolicyName,
  type FleetOptions,
  type FleetTrace,
} from './experiments/fleet.js';
export { LAYERS_POLICIES, layerNames, runLayers, type LayersOptions, type LayersRow } from './experiments/layers.js';
