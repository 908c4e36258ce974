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
export {
  CONTENTION_STRATEGIES,
  CONTENTION_CLIENTS,
  contentionBackoff,
  contentionRun,
  runContention,
  type ContentionOptions,
  type ContentionRow,
  type ContentionRun,
  type ContentionStrategy,
} from './experiments/contention.js';
export {
  METASTABLE_POLICIES,
  METASTABLE_SERVERS,
  METASTABLE_SETUP,
  RECOVERY_RULE,
  TAIL_SECONDS,
  metastableCombinations,
  metastableRow,
  metastableRun,
  metastableSetup,
  recovery,
  runMetastable,
  type MetastableCombination,
  type MetastableRow,
  type MetastableRun,
  type MetastableOptions,
  type MetastableServer,
  type MetastableSetup,
  type MetastableTrigger,
} from './experiments/metastable.js';
export { LAYERS_POLICIES, layerNames, runLayers, type LayersOptions, type LayersRow } from './experiments/layers.js';

// The functional core the simulator drives, for writing a driver of your own: the per-call retry
// step function and its verdicts, the breaker's pure state machine, policies as JSON specs, and
// the CPython-compatible seeded generator the article's tables are computed with.
export { startRetry, decide, describeGiveUp, type RetryState, type RetryCommand } from '../core/retry/index.js';
export { RETRYABLE, RETRYABLE_TIMEOUT, RETRYABLE_THROTTLED, FATAL, DO_NOT_RETRY_VERDICT, CIRCUIT_OPEN_VERDICT } from '../core/classify/index.js';
export {
  CircuitBreakerMachine,
  circuitBreakerMachine,
  type BreakerOutcome,
  type BreakerPermit,
  type BreakerRejection,
  type MachineIsolation,
} from '../core/breaker/index.js';
export { backoffFromSpec, BACKOFF_KINDS } from '../core/backoff/index.js';
export { budgetFromSpec, BUDGET_KINDS, ARTICLE_RETRY_RATIO, throttleFromSpec, adaptiveThrottling, type ThrottleSpec } from '../core/budget/index.js';
export { PyRandom } from '../core/python-random.js';
export {
  HEDGING_SERVER,
  HEDGING_POLICIES,
  HEDGING_SETTINGS,
  HEDGING_LOADS,
  hedgingPolicy,
  hedgingRow,
  hedgingCrossover,
  meanServiceMs,
  runHedging,
  type HedgingServer,
  type HedgingPolicyName,
  type HedgingSettings,
  type HedgingRunOptions,
  type HedgingMetrics,
  type HedgingRow,
} from './experiments/hedging.js';
// Hedging's pure pieces, which hedge() and runHedging() both run.
export { hedgeDelay, hedgeAfterFailure, parseHedgePolicy, isLatencyPercentile, MAX_HEDGED_ATTEMPTS, type HedgeStep } from '../core/hedge/index.js';
