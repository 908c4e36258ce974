import { throttleOption, type AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import { InvalidOptionError } from '../core/errors.js';
import { HEDGE_POLICY_KEYS, defaultHedgePolicy, readHedgePolicyOption, type HedgePolicy } from '../core/hedge/policy.js';
import type { Rng } from '../core/rng.js';
import { unknownOption } from '../core/validate.js';
import type { HedgeEvent, HedgeOptions } from './hedge-types.js';
import type { GiveUpEvent, HookName } from './hooks.js';
import { schedulerOption, systemScheduler, type Scheduler } from './scheduler.js';
import { randomOption, systemRandom } from './system-random.js';
import { telemetryOption, type TelemetryCall, type TelemetryObserver } from './telemetry.js';

// A hedged call's options, read and checked once: what hedge() and createHedger() do before anything
// runs; and what a protocol layer (the hedging HTTP adapters, the gRPC interceptors) adds to them.

/**
 * @internal What a protocol layer (the hedging HTTP adapters, the gRPC interceptors) adds to one
 * hedged call's telemetry, passed under {@link HEDGE_REPORT} in the call's options: the call as its
 * protocol describes it, and the status each attempt's outcome carries.
 */
export interface HedgeCallReport {
  /** The call on every event: layer `'hedge'`, with the protocol's `client`, `method`, `url` and `name`. */
  readonly call: TelemetryCall;
  /** The status of an attempt's value or failure (an HTTP status, a gRPC code), or `undefined`. */
  status(outcome: unknown): number | undefined;
}

/** @internal The key of a {@link HedgeCallReport} in `hedge()`'s options or a hedger's per-call options (a symbol: no user option can clash). */
export const HEDGE_REPORT: unique symbol = Symbol('herdless.hedgeReport');

/**
 * @internal The key, in `hedge()`'s options, of a protocol layer's test for a failure that speaks of
 * load even when the call does not hedge on it (gRPC's DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED): the
 * throttle hears it as a rejection.
 */
export const HEDGE_LOAD_FAILURE: unique symbol = Symbol('herdless.hedgeLoadFailure');

/** @internal A hedged call's options, read and validated: the policy plus the runtime's ports and hooks. */
export class HedgeRunner {
  policy: { -readonly [K in keyof HedgePolicy]: HedgePolicy[K] } = defaultHedgePolicy();
  clock: Scheduler = systemScheduler;
  unref = false;
  onHedge: ((event: HedgeEvent) => unknown) | undefined;
  onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  telemetry: TelemetryObserver | undefined;
  throttle: AttemptThrottle | undefined;
  random: Rng = systemRandom;
  loadFailure: ((error: unknown) => boolean) | undefined;
  constructor(readonly owner: string) {}
}

/** @internal The option names of `createHedger()` beyond the policy's (`HEDGE_POLICY_KEYS`): its ports, hooks and throttle. */
export const HEDGE_RUNTIME_KEYS: readonly string[] = ['throttle', 'random', 'clock', 'unref', 'onHedge', 'onGiveUp', 'onHookError', 'telemetry'];

function functionOption<F>(owner: string, field: string, value: unknown): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value as F | undefined;
}

/**
 * @internal Reads and validates the options of `hedge()` in one pass; a key that is no option is an
 * error. `perCall`: `hedge()`, whose `signal` is an option; `createHedger()` refuses it.
 */
export function parseHedger(options: HedgeOptions, owner: string, perCall: boolean): HedgeRunner {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const runner = new HedgeRunner(owner);
  for (const key in options) {
    const value: unknown = (options as unknown as Record<string, unknown>)[key];
    if (readHedgePolicyOption(owner, runner.policy, key, value)) continue;
    switch (key) {
      case 'clock':
        runner.clock = schedulerOption(owner, value) ?? runner.clock;
        break;
      case 'throttle':
        runner.throttle = throttleOption(owner, key, value);
        break;
      case 'random':
        runner.random = randomOption(owner, key, value) ?? runner.random;
        break;
      case 'unref':
        if (value !== undefined && typeof value !== 'boolean') throw new InvalidOptionError(owner, key, value, 'must be a boolean');
        runner.unref = value === true;
        break;
      case 'onHedge':
        runner.onHedge = functionOption(owner, key, value);
        break;
      case 'onGiveUp':
        runner.onGiveUp = functionOption(owner, key, value);
        break;
      case 'onHookError':
        runner.onHookError = functionOption(owner, key, value);
        break;
      case 'telemetry':
        runner.telemetry = telemetryOption(owner, value);
        break;
      case 'signal':
        if (perCall || value === undefined) break;
        throw new InvalidOptionError(owner, key, value, 'is a per-call option: pass it with each call');
      default:
        throw new InvalidOptionError(owner, key, value, unknownOption('a hedging option', key, [...HEDGE_POLICY_KEYS, ...HEDGE_RUNTIME_KEYS, ...(perCall ? ['signal'] : [])]));
    }
  }
  if (options.delayMs === undefined) readHedgePolicyOption(owner, runner.policy, 'delayMs', undefined);
  const loadFailure = (options as { [HEDGE_LOAD_FAILURE]?: (error: unknown) => boolean })[HEDGE_LOAD_FAILURE];
  if (typeof loadFailure === 'function') runner.loadFailure = loadFailure;
  Object.freeze(runner.policy);
  return runner;
}
