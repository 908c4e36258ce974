import { InvalidOptionError } from '../core/errors.js';
import { HEDGE_POLICY_KEYS, defaultHedgePolicy, readHedgePolicyOption, type HedgePolicy } from '../core/hedge/policy.js';
import type { HedgeEvent, HedgeOptions } from './hedge-types.js';
import type { GiveUpEvent, HookName } from './hooks.js';
import { schedulerOption, systemScheduler, type Scheduler } from './scheduler.js';
import { telemetryOption, type TelemetryObserver } from './telemetry.js';

// A hedged call's options, read and checked once: what hedge() and createHedger() do before anything runs.

/** @internal A hedged call's options, read and validated: the policy plus the runtime's ports and hooks. */
export class HedgeRunner {
  policy: { -readonly [K in keyof HedgePolicy]: HedgePolicy[K] } = defaultHedgePolicy();
  clock: Scheduler = systemScheduler;
  unref = false;
  onHedge: ((event: HedgeEvent) => unknown) | undefined;
  onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  telemetry: TelemetryObserver | undefined;
  constructor(readonly owner: string) {}
}

const RUNTIME_KEYS = ['clock', 'unref', 'onHedge', 'onGiveUp', 'onHookError', 'telemetry'];

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
        throw new InvalidOptionError(owner, key, value, `is not a hedging option (check the spelling; options: ${[...HEDGE_POLICY_KEYS, ...RUNTIME_KEYS, ...(perCall ? ['signal'] : [])].join(', ')})`);
    }
  }
  if (options.delayMs === undefined) readHedgePolicyOption(owner, runner.policy, 'delayMs', undefined);
  Object.freeze(runner.policy);
  return runner;
}
