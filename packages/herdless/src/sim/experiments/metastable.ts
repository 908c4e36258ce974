import type { Backoff } from '../../core/backoff/backoff.js';
import { backoffFromSpec } from '../../core/backoff/spec.js';
import type { RetryBudget } from '../../core/budget/budget.js';
import { budgetFromSpec } from '../../core/budget/spec.js';
import { throttleFromSpec, type AttemptThrottle } from '../../core/budget/adaptive-throttling.js';
import { InvalidOptionError } from '../../core/errors.js';
import { PyRandom } from '../../core/python-random.js';
import { numberOption, objectOption } from '../../core/validate.js';
import { ManualClock } from '../../runtime/manual-clock.js';
import { LoadShedder, type Admission } from '../../server/shedder.js';
import { EventQueue } from '../event-queue.js';
import type { PolicySpec } from '../spec.js';
import { summarize, type Summary } from '../stats.js';

/*
 * The metastable queue (N. Bronson et al., "Metastable Failures in Distributed Systems", HotOS 2021;
 * L. Huang et al., "Metastable Failures in the Wild", OSDI 2022): a server with workers and a queue,
 * open-loop Poisson arrivals, clients that give up after a timeout and retry by their policy while
 * the server still serves what is queued. A trigger (the server slowed down, or a load spike) for a
 * few seconds can leave the system in a state that sustains itself after the trigger is gone:
 * every answer comes after its client left, every timeout adds a retry, the queue never drains.
 */

/** How the server takes work from its queue, and what protects it. */
export interface MetastableServer {
  /** Requests served at once. Default 50. Range 1–10 000. */
  workers: number;
  /** Mean service time, ms. Default 200 (so 50 workers serve 250 requests a second). Range (0, 60 000]. */
  serviceMs: number;
  /** The service-time distribution: exponential (default) or constant. */
  service: 'exponential' | 'constant';
  /** `fifo` (default): the oldest queued request first; `lifo`: the newest first. */
  discipline: 'fifo' | 'lifo';
  /**
   * Deadline propagation: the server knows each request's deadline (sent + the client's timeout),
   * drops a queued request whose deadline has passed without serving it, and stops serving one when
   * its deadline passes (as a gRPC handler's context is cancelled). Default false.
   */
  dropExpired: boolean;
  /**
   * `herdless/server`'s `LoadShedder` in front, with `maxInFlight` = workers and no queue: a request
   * that finds every worker busy is answered "overloaded" at once, marked "don't retry" when it is a
   * retry or retries are above 10% of recent requests (SRE book, "Handling Overload"). Default false.
   */
  shedding: boolean;
}

/** What pushes the system over the edge, for a while. */
export interface MetastableTrigger {
  /** `capacity`: the server runs at `factor` × its speed (service times ÷ factor); `spike`: new requests arrive at `factor` × the rate. */
  kind: 'capacity' | 'spike';
  /** When it starts and ends, ms from the start of the run. */
  startMs: number;
  endMs: number;
  /** Capacity: in (0, 1]; spike: ≥ 1. */
  factor: number;
}

/** One metastable run's setup, except the policy and the seed. */
export interface MetastableSetup {
  /** New requests per second, Poisson (open loop: they keep coming whatever happens). Default 200. */
  ratePerSecond: number;
  /** Client processes the requests are spread over, round robin; each holds its own budget. Default 10. */
  processes: number;
  /** A client gives up waiting for an attempt after this long, ms, then retries by its policy. Default 1000. */
  timeoutMs: number;
  /** The run's length, ms (whole seconds). Default 60 000. */
  horizonMs: number;
  server: MetastableServer;
  trigger: MetastableTrigger;
}

/** The default setup: 200 new requests a second against 250 of capacity (80% load), the server at half speed from 10 s to 15 s. */
export const METASTABLE_SETUP: Readonly<MetastableSetup> = Object.freeze({
  ratePerSecond: 200,
  processes: 10,
  timeoutMs: 1000,
  horizonMs: 60_000,
  server: Object.freeze({ workers: 50, serviceMs: 200, service: 'exponential' as const, discipline: 'fifo' as const, dropExpired: false, shedding: false }),
  trigger: Object.freeze({ kind: 'capacity' as const, startMs: 10_000, endMs: 15_000, factor: 0.5 }),
});

const RETRY_BACKOFF = { initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000 } as const;

/** The client policies of the metastable table, as data (their names are the table's). */
export const METASTABLE_POLICIES: readonly PolicySpec[] = Object.freeze([
  { name: 'no retry', backoff: { kind: 'exponential', ...RETRY_BACKOFF }, maxAttempts: 1 },
  { name: '3 retries', backoff: { kind: 'exponential', ...RETRY_BACKOFF }, maxAttempts: 4 },
  { name: '3 retries + jitter', backoff: { kind: 'full jitter', ...RETRY_BACKOFF }, maxAttempts: 4 },
  { name: '3 retries + gRPC throttling', backoff: { kind: 'full jitter', ...RETRY_BACKOFF }, maxAttempts: 4, budget: { kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 } },
  {
    name: '3 retries + 10% retry ratio',
    backoff: { kind: 'full jitter', ...RETRY_BACKOFF },
    maxAttempts: 4,
    budget: { kind: 'retry ratio', ratio: 0.1, minRetriesPerWindow: 0, windowMs: 1000, buckets: 10, countAt: 'decision' },
  },
  // Finagle's and the AWS SDK's budgets with their defaults, as in the budget experiment.
  {
    name: '3 retries + Finagle budget',
    backoff: { kind: 'full jitter', ...RETRY_BACKOFF },
    maxAttempts: 4,
    budget: { kind: 'finagle', ttlMs: 10_000, minRetriesPerSec: 10, percentCanRetry: 0.2 },
  },
  {
    name: '3 retries + AWS retry quota',
    backoff: { kind: 'full jitter', ...RETRY_BACKOFF },
    maxAttempts: 4,
    budget: { kind: 'aws retry quota', capacity: 500, retryCost: 5, timeoutCost: 10, successIncrement: 1 },
  },
] as PolicySpec[]);

/** The server variants of the metastable table, by name. */
export const METASTABLE_SERVERS: Readonly<Record<string, Partial<MetastableServer>>> = Object.freeze({
  FIFO: {},
  LIFO: { discipline: 'lifo' },
  'drop expired': { dropExpired: true },
  shedding: { shedding: true },
});

/** When a run counts as recovered: goodput ≥ `share` × the new requests in each of `seconds` consecutive seconds after the trigger. */
export const RECOVERY_RULE = Object.freeze({ share: 0.9, seconds: 3 });

/** One run's per-second series (index = second) and its verdict. */
export interface MetastableRun {
  /** New requests per second (first attempts created). */
  fresh: number[];
  /** Attempts that reached the server per second, first tries and retries: the offered load. */
  offered: number[];
  /** Answers per second that reached a client still waiting for them. */
  goodput: number[];
  /** Requests waiting in the server's queue at the end of each second. */
  queue: number[];
  /** Services per second, finished or cut at the deadline, whose client had already given up: wasted work. */
  wasted: number[];
  /** Attempts per second answered "overloaded" by the shedder. */
  shed: number[];
  /** Requests that gave up (attempts exhausted, budget, or "don't retry"). */
  gaveUp: number;
  /**
   * Seconds from the trigger's end until goodput first held ≥ 90% of the new requests for 3 seconds
   * in a row (the first of those seconds), or null when it never did before the horizon: metastable.
   */
  recoveryS: number | null;
}

const OWNER = 'metastable';

/** A setup as options: any field left out takes {@link METASTABLE_SETUP}'s value. */
export type MetastableOptions = Partial<Omit<MetastableSetup, 'server' | 'trigger'>> & {
  server?: Partial<MetastableServer> | undefined;
  trigger?: Partial<MetastableTrigger> | undefined;
};

/**
 * Fills a setup's missing fields from {@link METASTABLE_SETUP} and checks every field. A trigger of
 * another kind than the default's without a factor gets 2 (a spike that doubles the rate).
 * @throws InvalidOptionError naming the field (`server.workers`, `trigger.factor`, …) and the value.
 * @example
 * ```ts
 * metastableSetup({ trigger: { kind: 'spike', factor: 3 } }); // the default setup, with new requests at 3× the rate 10–15 s
 * ```
 */
export function metastableSetup(options: MetastableOptions = {}): MetastableSetup {
  return checkSetup(options);
}

function checkSetup(setup: MetastableOptions): MetastableSetup {
  const s = objectOption(OWNER, 'setup', setup, ['ratePerSecond', 'processes', 'timeoutMs', 'horizonMs', 'server', 'trigger']);
  const rate = numberOption(OWNER, 'ratePerSecond', s.ratePerSecond, METASTABLE_SETUP.ratePerSecond, { min: 0, minExclusive: true, max: 100_000 });
  const processes = numberOption(OWNER, 'processes', s.processes, METASTABLE_SETUP.processes, { integer: true, min: 1, max: 100_000 });
  const timeoutMs = numberOption(OWNER, 'timeoutMs', s.timeoutMs, METASTABLE_SETUP.timeoutMs, { min: 0, minExclusive: true, max: 3_600_000 });
  // At least one second before the recovery rule's seconds: a trigger, then time to judge recovery.
  const horizonMs = numberOption(OWNER, 'horizonMs', s.horizonMs, METASTABLE_SETUP.horizonMs, { integer: true, min: (RECOVERY_RULE.seconds + 1) * 1000, max: 3_600_000 });
  if (horizonMs % 1000 !== 0) throw new InvalidOptionError(OWNER, 'horizonMs', horizonMs, 'must be a whole number of seconds');
  const sv = objectOption<Partial<MetastableServer>>(OWNER, 'server', s.server ?? {}, ['workers', 'serviceMs', 'service', 'discipline', 'dropExpired', 'shedding']);
  const d = METASTABLE_SETUP.server;
  const server: MetastableServer = {
    workers: numberOption(OWNER, 'server.workers', sv.workers, d.workers, { integer: true, min: 1, max: 10_000 }),
    serviceMs: numberOption(OWNER, 'server.serviceMs', sv.serviceMs, d.serviceMs, { min: 0, minExclusive: true, max: 60_000 }),
    service: oneOf('server.service', sv.service, d.service, ['exponential', 'constant'] as const),
    discipline: oneOf('server.discipline', sv.discipline, d.discipline, ['fifo', 'lifo'] as const),
    dropExpired: flag('server.dropExpired', sv.dropExpired, d.dropExpired),
    shedding: flag('server.shedding', sv.shedding, d.shedding),
  };
  const tv = objectOption<Partial<MetastableTrigger>>(OWNER, 'trigger', s.trigger ?? {}, ['kind', 'startMs', 'endMs', 'factor']);
  const dt = METASTABLE_SETUP.trigger;
  const kind = oneOf('trigger.kind', tv.kind, dt.kind, ['capacity', 'spike'] as const);
  const startMs = numberOption(OWNER, 'trigger.startMs', tv.startMs, Math.min(dt.startMs, horizonMs - RECOVERY_RULE.seconds * 1000), { min: 0, max: horizonMs });
  // Recovery is judged over RECOVERY_RULE.seconds whole seconds after the trigger: the run must have them.
  const lastEnd = horizonMs - RECOVERY_RULE.seconds * 1000;
  const endMs = numberOption(OWNER, 'trigger.endMs', tv.endMs, Math.min(dt.endMs, lastEnd), { min: startMs, max: lastEnd });
  const factor = numberOption(
    OWNER,
    'trigger.factor',
    tv.factor,
    kind === dt.kind ? dt.factor : 2,
    kind === 'capacity' ? { min: 0, minExclusive: true, max: 1 } : { min: 1, max: 1000 },
  );
  // Every new request is an event; keep one run's work bounded.
  const peak = kind === 'spike' ? factor : 1;
  if (rate * peak * (horizonMs / 1000) > 5_000_000) {
    throw new InvalidOptionError(OWNER, 'ratePerSecond', rate, `× horizon (and a spike's factor) must stay ≤ 5000000 new requests a run`);
  }
  return { ratePerSecond: rate, processes, timeoutMs, horizonMs, server, trigger: { kind, startMs, endMs, factor } };
}

function oneOf<T extends string>(field: string, value: unknown, fallback: T, allowed: readonly T[]): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidOptionError(OWNER, field, value, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function flag(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionError(OWNER, field, value, 'must be true or false');
  return value;
}

/** A policy ready to run: the library's backoff object and a budget factory. */
interface Policy {
  backoff: Backoff;
  maxAttempts: number;
  budget: (() => RetryBudget) | null;
  throttle: (() => AttemptThrottle) | null;
}

function policyOf(spec: PolicySpec): Policy {
  if (typeof spec !== 'object' || spec === null) throw new InvalidOptionError(OWNER, 'policy', spec, 'must be a PolicySpec { name, backoff, maxAttempts, budget?, throttle? }');
  const backoff = backoffFromSpec(spec.backoff, 'policy.backoff');
  // No "no cap" (null) here: an open-loop client always gives up at some point, and the events
  // carry the attempt number in 10 bits.
  const maxAttempts = numberOption(OWNER, 'policy.maxAttempts', spec.maxAttempts, 1, { integer: true, min: 1, max: 1000 });
  const budgetSpec = spec.budget;
  if (budgetSpec !== undefined) budgetFromSpec(budgetSpec, 'policy.budget');
  const throttleSpec = spec.throttle;
  if (throttleSpec !== undefined) throttleFromSpec(throttleSpec, 'policy.throttle');
  return {
    backoff,
    maxAttempts,
    budget: budgetSpec === undefined ? null : () => budgetFromSpec(budgetSpec, 'policy.budget'),
    throttle: throttleSpec === undefined ? null : () => throttleFromSpec(throttleSpec, 'policy.throttle'),
  };
}

// Events: one number each, index × KINDS + kind (the index an attempt's, or for SEND request × 1024 + attempt number).
const ARRIVAL = 0; // the next new request (Poisson, thinned for a spike)
const SEND = 1; // attempt i reaches the server (a retry after its wait)
const TIMEOUT = 2; // attempt i's client stops waiting
const DONE = 3; // attempt i's service ends
const SECOND = 4; // the end of a second: sample the queue
const KINDS = 8;

// Attempt states.
const QUEUED = 0;
const SERVING = 1;
const FINISHED = 2;

/**
 * One run of the metastable queue in virtual time. Every number is drawn from one CPython-compatible
 * generator seeded with `seed`: arrival gaps (thinned at the spike's rate), service times and jitter,
 * in event order. The client's side: a new request goes to process `i mod processes`; each attempt
 * has `timeoutMs`; on a timeout, or an "overloaded" answer from the shedder not marked "don't retry",
 * the process's budget hears of the failure, and if attempts remain and the budget allows, the next
 * attempt is sent after `backoff.delay(n)`. A policy with a `throttle` (adaptive throttling) holds
 * one per process, asked before every attempt (a refused one is not sent, and the request gives up)
 * and told of every answer: served in time (accepted), or a timeout or "overloaded" (rejected).
 * The server's side: free workers take queued requests in
 * `discipline` order; an answer that comes after its client gave up is wasted work.
 *
 * @throws InvalidOptionError naming the field for a bad setup, policy or seed.
 * @example
 * ```ts
 * const run = metastableRun(METASTABLE_POLICIES[1]!, METASTABLE_SETUP, 0);
 * run.recoveryS; // null: with 3 plain retries the queue never drains after the trigger
 * ```
 */
export function metastableRun(policySpec: PolicySpec, setup: MetastableSetup, seed: number): MetastableRun {
  const s = checkSetup(setup);
  const policy = policyOf(policySpec);
  numberOption(OWNER, 'seed', seed, 0, { integer: true, min: 0, max: Number.MAX_SAFE_INTEGER });
  return simulate(policy, s, seed);
}

function simulate(policy: Policy, s: MetastableSetup, seed: number): MetastableRun {
  const rng = new PyRandom(seed);
  const seconds = s.horizonMs / 1000;
  const zeros = (): number[] => new Array<number>(seconds).fill(0);
  const run: MetastableRun = { fresh: zeros(), offered: zeros(), goodput: zeros(), queue: zeros(), wasted: zeros(), shed: zeros(), gaveUp: 0, recoveryS: null };
  const { server, trigger, timeoutMs } = s;
  const budgets = policy.budget === null ? null : Array.from({ length: s.processes }, policy.budget);
  const throttles = policy.throttle === null ? null : Array.from({ length: s.processes }, policy.throttle);
  const shedder = server.shedding ? new LoadShedder({ maxInFlight: server.workers, maxQueue: 0, clock: new ManualClock(), random: rng }) : null;
  const releases: (() => void)[] = [];

  // Per request: its process and its previous wait (decorrelated jitter's state).
  const reqProcess: number[] = [];
  const reqLastWait: number[] = [];
  // Per attempt: its request, number (1 = first try), state, and whether its client left.
  const attRequest: number[] = [];
  const attNumber: number[] = [];
  const attState: number[] = [];
  const attLeft: boolean[] = [];
  const queue: number[] = []; // attempt indices; FIFO reads from `head`, LIFO pops the end
  let head = 0;
  let busy = 0;
  let newRequests = 0;

  const events = new EventQueue<number>();
  const at = (t: number, kind: number, index: number): void => events.push(t, index * KINDS + kind);
  const secondOf = (t: number): number => Math.min(seconds - 1, Math.floor(t / 1000));
  const inTrigger = (t: number): boolean => t >= trigger.startMs && t < trigger.endMs;
  const peakRate = s.ratePerSecond * (trigger.kind === 'spike' ? trigger.factor : 1);

  const serviceTime = (t: number): number => {
    const mean = trigger.kind === 'capacity' && inTrigger(t) ? server.serviceMs / trigger.factor : server.serviceMs;
    return server.service === 'constant' ? mean : rng.expovariate(1 / mean);
  };

  const start = (a: number, t: number): void => {
    attState[a] = SERVING;
    busy++;
    at(t + serviceTime(t), DONE, a);
  };

  /** A worker is free: the next queued attempt, skipping (with deadline propagation) those whose client left. */
  const next = (t: number): void => {
    while (busy < server.workers && queue.length > head) {
      const a = server.discipline === 'fifo' ? queue[head++]! : queue.pop()!;
      if (server.dropExpired && attLeft[a]) {
        attState[a] = FINISHED;
        continue;
      }
      start(a, t);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };

  const send = (r: number, number: number, t: number): void => {
    // Adaptive throttling (SRE book, "Handling Overload") may refuse any attempt, a first try too:
    // the request is rejected locally and never reaches the server.
    if (throttles !== null && !throttles[reqProcess[r]!]!.admit(t, rng, number > 1)) {
      run.gaveUp++;
      return;
    }
    const a = attRequest.length;
    attRequest.push(r);
    attNumber.push(number);
    attState.push(QUEUED);
    attLeft.push(false);
    run.offered[secondOf(t)]!++;
    budgets?.[reqProcess[r]!]!.onAttempt(t, number > 1);
    if (shedder !== null) {
      // With no queue (maxQueue 0) the shedder decides at once: admitted or shed, never a promise.
      const admission = shedder.admit(number) as Admission;
      if (admission.kind === 'shed') {
        attState[a] = FINISHED;
        attLeft[a] = true;
        run.shed[secondOf(t)]!++;
        fail(a, t, false, admission.doNotRetry);
        return;
      }
      releases[a] = admission.release;
      start(a, t);
      at(t + timeoutMs, TIMEOUT, a);
      return;
    }
    at(t + timeoutMs, TIMEOUT, a);
    if (busy < server.workers && queue.length === head) start(a, t);
    else queue.push(a);
  };

  /** Attempt `a` failed at `t`: the retry decision of its request. */
  const fail = (a: number, t: number, isTimeout: boolean, doNotRetry: boolean): void => {
    const r = attRequest[a]!;
    const n = attNumber[a]!;
    const budget = budgets === null ? null : budgets[reqProcess[r]!]!;
    // A timeout and an "overloaded" answer are both the backend turning the attempt away.
    throttles?.[reqProcess[r]!]!.onAnswer(t, false);
    budget?.onFailure(t, isTimeout);
    if (doNotRetry || n >= policy.maxAttempts || (budget !== null && !budget.allowRetry(t))) {
      run.gaveUp++;
      return;
    }
    const wait = policy.backoff.delay(n, reqLastWait[r]!, rng);
    reqLastWait[r] = wait;
    const when = t + wait;
    if (when < s.horizonMs) at(when, SEND, r * 1024 + n + 1);
  };

  const finish = (a: number): void => {
    busy--;
    attState[a] = FINISHED;
    if (releases[a] !== undefined) {
      releases[a]!();
      releases[a] = undefined as never;
    }
  };

  at(rng.expovariate(peakRate / 1000), ARRIVAL, 0);
  for (let sec = 1; sec <= seconds; sec++) at(sec * 1000, SECOND, 0);
  while (events.size > 0) {
    const e = events.pop();
    const t = events.lastTime;
    if (t >= s.horizonMs && e % KINDS !== SECOND) break;
    const index = Math.floor(e / KINDS);
    switch (e % KINDS) {
      case ARRIVAL: {
        // Thinning (Lewis and Shedler, 1979): candidates at the peak rate, kept at rate(t) / peak.
        const keep = trigger.kind !== 'spike' || inTrigger(t) || rng.random() * trigger.factor < 1;
        if (keep) {
          const r = newRequests++;
          reqProcess.push(r % s.processes);
          reqLastWait.push(0);
          run.fresh[secondOf(t)]!++;
          send(r, 1, t);
        }
        at(t + rng.expovariate(peakRate / 1000), ARRIVAL, 0);
        break;
      }
      case SEND:
        send(Math.floor(index / 1024), index % 1024, t);
        break;
      case TIMEOUT:
        if (attState[index] === FINISHED) break;
        attLeft[index] = true;
        if (server.dropExpired && attState[index] === SERVING) {
          // Deadline propagation cancels the work in progress: the worker is free now.
          run.wasted[secondOf(t)]!++;
          finish(index);
          next(t);
        }
        fail(index, t, true, false);
        break;
      case DONE:
        if (attState[index] !== SERVING) break; // cut at its deadline already
        if (attLeft[index]) {
          run.wasted[secondOf(t)]!++;
        } else {
          const r = attRequest[index]!;
          run.goodput[secondOf(t)]!++;
          budgets?.[reqProcess[r]!]!.onSuccess(t, attNumber[index]! > 1);
          throttles?.[reqProcess[r]!]!.onAnswer(t, true);
        }
        finish(index);
        next(t);
        break;
      default:
        run.queue[t / 1000 - 1] = queue.length - head;
    }
    if (t >= s.horizonMs) break;
  }
  run.recoveryS = recovery(run, trigger.endMs);
  return run;
}

/** The seconds from `endMs` until goodput holds ≥ share × new requests for the rule's seconds in a row, or null. */
export function recovery(run: Pick<MetastableRun, 'fresh' | 'goodput'>, endMs: number): number | null {
  const first = Math.ceil(endMs / 1000);
  const { share, seconds } = RECOVERY_RULE;
  for (let sec = first; sec + seconds <= run.goodput.length; sec++) {
    let ok = true;
    for (let k = sec; k < sec + seconds && ok; k++) ok = run.goodput[k]! >= share * run.fresh[k]!;
    if (ok) return sec - endMs / 1000;
  }
  return null;
}

/** One row of the metastable table: a (policy, server) combination over the seeds. */
export interface MetastableRow {
  policy: string;
  server: string;
  /** Seeds that recovered by the horizon (see {@link RECOVERY_RULE}); the rest stayed down: metastable. */
  recovered: number;
  runs: number;
  /** Seconds from the trigger's end to recovery, over the recovered seeds; null when none recovered. */
  recoveryS: Summary | null;
  /** Goodput over the last 10 seconds as a share of the new requests then, over the seeds. */
  goodputShare: Summary;
  /** Offered load over the last 10 seconds as a multiple of the new requests then. */
  offeredRatio: Summary;
  /** Wasted services per second over the last 10 seconds. */
  wastedPerS: Summary;
  /** The longest queue sampled at a second's end. */
  peakQueue: Summary;
}

/** The last seconds a row's "after" columns average over. */
export const TAIL_SECONDS = 10;

/** Folds one combination's runs (one per seed) into a table row. */
export function metastableRow(policy: string, server: string, runs: readonly MetastableRun[]): MetastableRow {
  const tail = (xs: number[]): number => xs.slice(-TAIL_SECONDS).reduce((a, b) => a + b, 0);
  const recovered = runs.filter((r) => r.recoveryS !== null);
  return {
    policy,
    server,
    recovered: recovered.length,
    runs: runs.length,
    recoveryS: recovered.length === 0 ? null : summarize(recovered.map((r) => r.recoveryS!)),
    goodputShare: summarize(runs.map((r) => tail(r.goodput) / Math.max(1, tail(r.fresh)))),
    offeredRatio: summarize(runs.map((r) => tail(r.offered) / Math.max(1, tail(r.fresh)))),
    wastedPerS: summarize(runs.map((r) => tail(r.wasted) / TAIL_SECONDS)),
    peakQueue: summarize(runs.map((r) => Math.max(...r.queue))),
  };
}

/** A combination to run: a policy and a named server variant. */
export interface MetastableCombination {
  policy: PolicySpec;
  /** The variant's name, for the table. */
  server: string;
  /** The variant's overrides of the setup's server. */
  overrides: Partial<MetastableServer>;
}

/** The default table's combinations: every policy against a FIFO server, then plain retries against each protected server. */
export function metastableCombinations(): MetastableCombination[] {
  const plain = METASTABLE_POLICIES[1]!;
  return [
    ...METASTABLE_POLICIES.map((policy) => ({ policy, server: 'FIFO', overrides: METASTABLE_SERVERS.FIFO! })),
    ...(['LIFO', 'drop expired', 'shedding'] as const).map((server) => ({ policy: plain, server, overrides: METASTABLE_SERVERS[server]! })),
  ];
}

/**
 * Runs every combination over every seed in this thread and returns the table's rows.
 * @throws InvalidOptionError naming the field for a bad setup, policy or seed.
 */
export function runMetastable(
  combinations: readonly MetastableCombination[] = metastableCombinations(),
  seeds: readonly number[] = Array.from({ length: 20 }, (_, i) => i),
  setup: MetastableSetup = METASTABLE_SETUP,
): MetastableRow[] {
  if (seeds.length === 0) throw new InvalidOptionError(OWNER, 'seeds', seeds, 'must list at least one seed');
  for (const seed of seeds) numberOption(OWNER, 'seed', seed, 0, { integer: true, min: 0, max: Number.MAX_SAFE_INTEGER });
  return combinations.map((c) => {
    const s = checkSetup({ ...setup, server: { ...setup.server, ...c.overrides } });
    const policy = policyOf(c.policy);
    return metastableRow(c.policy.name, c.server, seeds.map((seed) => simulate(policy, s, seed)));
  });
}
