import type { RetryBudget } from '../../core/budget/budget.js';
import { adaptiveThrottling, type AttemptThrottle } from '../../core/budget/adaptive-throttling.js';
import type { Rng } from '../../core/rng.js';
import { retryRatioBudget } from '../../core/budget/retry-ratio.js';
import { retryThrottlingBudget } from '../../core/budget/retry-throttling.js';
import { InvalidOptionError } from '../../core/errors.js';
import { numberOption, objectOption } from '../../core/validate.js';
import type { ClientPolicy, Scenario } from '../scenario.js';
import { budgetPolicy, budgetRow, budgetScenario, perSecondTraffic, type BudgetRow } from './budget.js';

/** The fleet experiment's policies, in table order. */
export const FLEET_POLICIES = [
  '4 attempts',
  '4 attempts + gRPC throttling per process',
  '4 attempts + 10% retry ratio per process',
  '4 attempts + 10% ratio per process (no floor)',
  '4 attempts + shared gRPC throttling',
  '4 attempts + shared 10% retry ratio',
  '4 attempts + shared gRPC throttling (batched)',
  '4 attempts + shared 10% retry ratio (batched)',
  '4 attempts + adaptive throttling per process',
  '4 attempts + shared adaptive throttling',
] as const;
/** One of {@link FLEET_POLICIES}. */
export type FleetPolicyName = (typeof FLEET_POLICIES)[number];

/** Knobs of the fleet experiment; the defaults spread the budget experiment's traffic over a fleet. */
export interface FleetOptions {
  /** Processes alive at any moment. Default 200. Integer in [1, 100 000]. */
  processes?: number | undefined;
  /** How long each process lives, ms; then a new one, with a fresh budget, takes its place. Default 2000. Range [10, 3 600 000]. */
  lifetimeMs?: number | undefined;
  /** New requests per second, the whole fleet together (Poisson). Default 300, as in the budget experiment. Range (0, 1 000 000]. */
  ratePerSecond?: number | undefined;
  /** The downstream outage, ms. Default 5000–15 000. */
  outage?: { startMs: number; endMs: number } | undefined;
  /** The horizon, ms. Default 40 000. */
  horizonMs?: number | undefined;
  /**
   * The batched shared budgets' `flushIntervalMs`, as `herdless/redis` has it: a process's
   * successes and first tries reach the shared budget this long after the first of them (or with
   * its next retry decision, if sooner). Default 100. Range [0, 60 000].
   */
  flushIntervalMs?: number | undefined;
}

/** The options, checked, with their defaults. */
interface FleetSettings {
  processes: number;
  lifetimeMs: number;
  ratePerSecond: number;
  flushIntervalMs: number;
  outage: { startMs: number; endMs: number } | undefined;
  horizonMs: number | undefined;
}

function fleetSettings(options: FleetOptions | undefined): FleetSettings {
  const owner = 'fleet';
  const o = objectOption(owner, 'options', options, ['processes', 'lifetimeMs', 'ratePerSecond', 'outage', 'horizonMs', 'flushIntervalMs']);
  return {
    processes: numberOption(owner, 'processes', o.processes, 200, { min: 1, max: 100_000, integer: true }),
    lifetimeMs: numberOption(owner, 'lifetimeMs', o.lifetimeMs, 2000, { min: 10, max: 3_600_000 }),
    ratePerSecond: numberOption(owner, 'ratePerSecond', o.ratePerSecond, 300, { min: 0, minExclusive: true, max: 1_000_000 }),
    flushIntervalMs: numberOption(owner, 'flushIntervalMs', o.flushIntervalMs, 100, { min: 0, max: 60_000 }),
    outage: o.outage,
    horizonMs: o.horizonMs,
  };
}

/**
 * A budget slot that a sequence of short-lived processes hold in turn: every `lifetimeMs` (from
 * `phaseMs` on) the process is replaced and a fresh budget made, as a new serverless instance or pod
 * starts with a full bucket and an empty window. A request's later retries are decided by the
 * process alive when they are due (the model keeps one request queue per slot).
 */
class RestartingBudget implements RetryBudget {
  readonly name: string;
  private budget: RetryBudget;
  private generation = 0;
  constructor(
    private readonly make: () => RetryBudget,
    private readonly lifetimeMs: number,
    private readonly phaseMs: number,
  ) {
    this.budget = make();
    this.name = this.budget.name;
  }
  private current(now: number): RetryBudget {
    const generation = Math.floor((now + this.phaseMs) / this.lifetimeMs);
    if (generation !== this.generation) {
      this.generation = generation;
      this.budget = this.make();
    }
    return this.budget;
  }
  onAttempt(now: number, isRetry: boolean): void {
    this.current(now).onAttempt(now, isRetry);
  }
  onSuccess(now: number, isRetry?: boolean): void {
    this.current(now).onSuccess(now, isRetry);
  }
  onFailure(now: number, isTimeout?: boolean): void {
    this.current(now).onFailure(now, isTimeout);
  }
  allowRetry(now: number): boolean {
    return this.current(now).allowRetry(now);
  }
}

/** The throttle of a slot held by short-lived processes in turn: see {@link RestartingBudget}. */
class RestartingThrottle implements AttemptThrottle {
  readonly name = 'adaptive throttling';
  private throttle: AttemptThrottle;
  private generation = 0;
  constructor(
    private readonly lifetimeMs: number,
    private readonly phaseMs: number,
  ) {
    this.throttle = adaptiveThrottling();
  }
  private current(now: number): AttemptThrottle {
    const generation = Math.floor((now + this.phaseMs) / this.lifetimeMs);
    if (generation !== this.generation) {
      this.generation = generation;
      this.throttle = adaptiveThrottling();
    }
    return this.throttle;
  }
  admit(now: number, rng: Rng, isRetry: boolean): boolean {
    return this.current(now).admit(now, rng, isRetry);
  }
  onAnswer(now: number, accepted: boolean): void {
    this.current(now).onAnswer(now, accepted);
  }
}

/**
 * The batching of `herdless/redis`, in virtual time: one budget shared by every process, which
 * each process reaches through a {@link BatchedView}. Successes and first tries wait in the
 * process's batch and reach the shared budget `flushMs` after the first of them — the flush timer —
 * or earlier, with the process's next failure (whose retry decision carries the batch, successes
 * first). Failures and decisions are never delayed. Batches fall due in the order they opened (time
 * never goes back), so a FIFO is the flush timers' queue.
 */
class BatchedShared {
  private readonly due: { at: number; view: BatchedView }[] = [];
  private head = 0;
  constructor(
    readonly budget: RetryBudget,
    readonly flushMs: number,
  ) {}
  /** Applies every batch whose timer has fired by `now`. */
  catchUp(now: number): void {
    const due = this.due;
    while (this.head < due.length && due[this.head]!.at <= now) {
      const { at, view } = due[this.head++]!;
      view.apply(at);
    }
    if (this.head > 1024 && this.head * 2 > due.length) {
      due.splice(0, this.head);
      this.head = 0;
    }
  }
  open(view: BatchedView, now: number): void {
    this.due.push({ at: now + this.flushMs, view });
  }
}

/** One process's way to the shared budget: its own batch (see {@link BatchedShared}). */
class BatchedView implements RetryBudget {
  readonly name: string;
  private successes = 0;
  private firstTries = 0;
  private open = false;
  constructor(private readonly shared: BatchedShared) {
    this.name = shared.budget.name;
  }
  /** Sends the batch (at `now`); a batch a decision already took is empty. */
  apply(now: number): void {
    const b = this.shared.budget;
    for (; this.firstTries > 0; this.firstTries--) b.onAttempt(now, false);
    for (; this.successes > 0; this.successes--) b.onSuccess(now);
    this.open = false;
  }
  private add(now: number): void {
    if (this.open) return;
    this.open = true;
    this.shared.open(this, now);
  }
  onAttempt(now: number, isRetry: boolean): void {
    this.shared.catchUp(now);
    if (isRetry) this.shared.budget.onAttempt(now, true);
    else {
      this.firstTries++;
      this.add(now);
    }
  }
  onSuccess(now: number): void {
    this.shared.catchUp(now);
    this.successes++;
    this.add(now);
  }
  onFailure(now: number, isTimeout?: boolean): void {
    this.shared.catchUp(now);
    this.apply(now);
    this.shared.budget.onFailure(now, isTimeout);
  }
  allowRetry(now: number): boolean {
    this.shared.catchUp(now);
    return this.shared.budget.allowRetry(now);
  }
}

const throttling = (): RetryBudget => retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
// The SRE 10% over the last second with herdless's defaults (counted when granted, a floor of 1
// retry per window): what a user deploys. The floor-0 variant shows the other failure of a
// per-process ratio: a process that sees fewer than 9 requests a second never retries at all.
const ratio = (): RetryBudget => retryRatioBudget({ ratio: 0.1 });
const ratioNoFloor = (): RetryBudget => retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 0 });

/**
 * The policy behind each row: gRFC A6's example retryPolicy (as in the budget experiment) with no
 * budget, a budget per process (each process starts a fresh one), or one budget object shared by
 * every process of the run — the model of `herdless/redis`'s budgets — with no lag (successes reach
 * it at once) or, for the `batched` rows, with `herdless/redis`'s batching: a process's successes
 * and first tries reach it up to `flushIntervalMs` later (see the option).
 *
 * @throws InvalidOptionError for an unknown name or an option out of range.
 * @example
 * ```ts
 * const policy = fleetPolicy('4 attempts + shared gRPC throttling'); // policy.budget(slot): the run's one bucket
 * ```
 */
export function fleetPolicy(name: FleetPolicyName, options?: FleetOptions): ClientPolicy {
  const s = fleetSettings(options);
  const base = budgetPolicy('4 attempts');
  const perProcess = (make: () => RetryBudget): ClientPolicy => ({
    ...base,
    name,
    // Phases spread evenly: the processes do not all restart at the same instant.
    budget: (slot) => new RestartingBudget(make, s.lifetimeMs, (slot * s.lifetimeMs) / s.processes),
  });
  const shared = (make: () => RetryBudget): ClientPolicy => {
    let one: RetryBudget | undefined;
    // The engine makes the budgets of a run in slot order: slot 0 makes the run's one object.
    return { ...base, name, budget: (slot) => (slot === 0 || one === undefined ? (one = make()) : one) };
  };
  const batched = (make: () => RetryBudget): ClientPolicy => {
    let one: BatchedShared | undefined;
    return {
      ...base,
      name,
      budget: (slot) => {
        if (slot === 0 || one === undefined) one = new BatchedShared(make(), s.flushIntervalMs);
        return new BatchedView(one);
      },
    };
  };
  switch (name) {
    case '4 attempts':
      return { ...base, name };
    case '4 attempts + shared gRPC throttling (batched)':
      return batched(throttling);
    case '4 attempts + shared 10% retry ratio (batched)':
      return batched(ratio);
    case '4 attempts + gRPC throttling per process':
      return perProcess(throttling);
    case '4 attempts + 10% retry ratio per process':
      return perProcess(ratio);
    case '4 attempts + 10% ratio per process (no floor)':
      return perProcess(ratioNoFloor);
    case '4 attempts + shared gRPC throttling':
      return shared(throttling);
    case '4 attempts + shared 10% retry ratio':
      return shared(ratio);
    case '4 attempts + adaptive throttling per process':
      return { ...base, name, throttle: (slot) => new RestartingThrottle(s.lifetimeMs, (slot * s.lifetimeMs) / s.processes) };
    case '4 attempts + shared adaptive throttling': {
      let one: AttemptThrottle | undefined;
      return { ...base, name, throttle: (slot) => (slot === 0 || one === undefined ? (one = adaptiveThrottling()) : one) };
    }
    default:
      throw new InvalidOptionError('fleetPolicy', 'name', name, `must be one of ${FLEET_POLICIES.join(', ')}`);
  }
}

/**
 * The fleet experiment as a {@link Scenario}: the budget experiment's outage (the downstream down
 * from 5 s to 15 s, 40 s in all) and its total traffic (300 new requests a second, Poisson), sent
 * by `processes` processes alive at once, each replaced after `lifetimeMs` — with the defaults
 * 200 processes of 2 s, 4000 in the run, each sending about 3 requests in its life.
 *
 * @throws InvalidOptionError naming the option for a value out of range.
 * @example
 * ```ts
 * const r = runScenario(fleetScenario('4 attempts + gRPC throttling per process'), 0, { perTick: true });
 * ```
 */
export function fleetScenario(policy: FleetPolicyName | ClientPolicy, options?: FleetOptions): Scenario {
  const s = fleetSettings(options);
  const scenario = budgetScenario(typeof policy === 'string' ? fleetPolicy(policy, options) : policy, {
    clients: s.processes,
    ratePerSecond: s.ratePerSecond / s.processes,
    outage: s.outage,
    horizonMs: s.horizonMs,
  });
  return scenario;
}

/**
 * Runs one fleet policy over the seeds: the budget experiment's measures (load, crashes, recovery, retry share).
 * @example
 * ```ts
 * fleetRow('4 attempts + shared gRPC throttling', [0, 1, 2]).load.mean; // about 1.00
 * ```
 */
export function fleetRow(policy: FleetPolicyName | ClientPolicy, seeds: readonly number[], options?: FleetOptions): BudgetRow {
  return budgetRow(fleetScenario(policy, options), seeds);
}

/** Per second, for one policy and seed: new requests, arrivals, successes and retries (one entry per second). */
export interface FleetTrace {
  policy: string;
  fresh: number[];
  arrivals: number[];
  successes: number[];
  retries: number[];
}

/**
 * The figure's data for one seed: per-second traffic of each policy.
 * @example
 * ```ts
 * fleetTrace(0, ['4 attempts'])[0].arrivals; // 40 numbers, one per second
 * ```
 */
export function fleetTrace(seed: number, policies: readonly FleetPolicyName[] = FLEET_POLICIES, options?: FleetOptions): FleetTrace[] {
  return policies.map((name) => perSecondTraffic(name, fleetScenario(name, options), seed));
}
