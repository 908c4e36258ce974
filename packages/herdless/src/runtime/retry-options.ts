import { InvalidOptionError } from '../core/errors.js';
import type { Backoff } from '../core/backoff/backoff.js';
import type { RetryBudget } from '../core/budget/budget.js';
import { throttleOption, type AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import type { RetryableOverride } from '../core/classify/classify.js';
import {
  DEFAULT_BACKOFF,
  DEFAULT_THROTTLING_BACKOFF,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  backoffOption,
  budgetOption,
  ignoreHintsOption,
  limitOption,
  maxAttemptsOption,
  maxRetryAfterOption,
  retryableOption,
  throttlingBackoffOption,
  throttlingDefault,
  type PolicyDraft,
} from '../core/retry/policy.js';
import type { Rng } from '../core/rng.js';
import { checkedNow } from '../core/time.js';
import { hasMethods, unknownOption } from '../core/validate.js';
import type { GiveUpEvent, HookName, RetryEvent } from './hooks.js';
import type { RetryCallOptions, RetryOptions } from './retry-types.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { signalOption } from './abort-link.js';
import { randomOption, systemRandom } from './system-random.js';
import { telemetryOption, type TelemetryObserver } from './telemetry.js';

// A call's options, read and checked once: what `retry()` and `createRetry()` do before anything runs.

/**
 * @internal A call's options, read and validated: the policy `decide()` reads (these settings are
 * that {@link RetryPolicy}: one object per call, not two) plus the runtime's ports and hooks.
 */
export class RetrySettings implements PolicyDraft {
  maxAttempts = DEFAULT_MAX_ATTEMPTS;
  backoff: Backoff = DEFAULT_BACKOFF;
  throttlingBackoff: Backoff = DEFAULT_THROTTLING_BACKOFF;
  ignoreHints = false;
  retryable: RetryableOverride | undefined;
  maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS;
  deadlineMs = Infinity;
  attemptTimeoutMs = Infinity;
  budget: RetryBudget | undefined;
  throttle: AttemptThrottle | undefined;
  random: Rng = systemRandom;
  clock: Scheduler = systemScheduler;
  unref = false;
  onRetry: ((event: RetryEvent) => unknown) | undefined;
  onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  telemetry: TelemetryObserver | undefined;
  /** The dependency's name, on every telemetry event (`TelemetryCall.name`). */
  name: string | undefined;
  /** No deadline and no attempt timeout: without a signal, nothing can cut an attempt short. */
  // Stryker disable next-line BooleanLiteral: readRetryOptions sets it from the options before any call reads it.
  plain = true;
  /** `plain`, no budget, no throttle and no telemetry: the first attempt needs nothing but the operation. */
  // Stryker disable next-line BooleanLiteral: readRetryOptions sets it from the options before any call reads it.
  lean = true;
  /** `retry` or `createRetry`: the name errors give. */
  readonly owner: string;
  constructor(owner: string) {
    this.owner = owner;
  }
}

/**
 * The option names of `retry()` that shape the policy (everything but the hooks `onRetry`/`onGiveUp`,
 * the `telemetry` observer and the per-call `signal`). The HTTP adapter passes exactly these through.
 * @internal
 */
export const RETRY_POLICY_KEYS: readonly string[] = [
  'maxAttempts',
  'backoff',
  'throttlingBackoff',
  'ignoreHints',
  'retryable',
  'maxRetryAfterMs',
  'deadlineMs',
  'attemptTimeoutMs',
  'budget',
  'throttle',
  'random',
  'clock',
  'unref',
  'onHookError',
];

/**
 * The options of `retry()` that observe a call rather than shape it (the rest are
 * {@link RETRY_POLICY_KEYS}); the HTTP adapter takes them too, and wraps them.
 * @internal
 */
export const RETRY_OBSERVER_KEYS: readonly string[] = ['onRetry', 'onGiveUp', 'telemetry', 'name'];

// Local, not core/validate's functionOption: this reader runs on every call given options, and the
// shared one measured a few more instructions per call (valgrind, as in BENCHMARKS.md section 1b).
function functionOption<F>(owner: string, field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value;
}

/**
 * @internal Reads and validates `options` as they are now, in one pass over their own keys: every
 * given value is checked (the defaults are known to be good), and a key that is no option is an
 * error, so a misspelling never falls back silently to a default. `perCall`: `retry()`, whose
 * `signal` is an option (read by the caller); `createRetry()` refuses it.
 */
export function readRetryOptions(options: RetryOptions, owner: string, perCall: boolean): RetrySettings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const settings = new RetrySettings(owner);
  for (const key in options) {
    const value: unknown = (options as Record<string, unknown>)[key];
    switch (key) {
      case 'maxAttempts':
        settings.maxAttempts = maxAttemptsOption(owner, value);
        break;
      case 'backoff':
        settings.backoff = backoffOption(owner, value);
        break;
      case 'retryable':
        settings.retryable = retryableOption(owner, value);
        break;
      case 'throttlingBackoff':
        settings.throttlingBackoff = throttlingBackoffOption(owner, value);
        break;
      case 'ignoreHints':
        settings.ignoreHints = ignoreHintsOption(owner, value);
        break;
      case 'maxRetryAfterMs':
        settings.maxRetryAfterMs = maxRetryAfterOption(owner, value);
        break;
      case 'deadlineMs':
        settings.deadlineMs = limitOption(owner, key, value);
        break;
      case 'attemptTimeoutMs':
        settings.attemptTimeoutMs = limitOption(owner, key, value);
        break;
      case 'budget':
        settings.budget = budgetOption(owner, value);
        break;
      case 'throttle':
        settings.throttle = throttleOption(owner, key, value);
        break;
      case 'random':
        settings.random = randomOption(owner, key, value) ?? settings.random;
        break;
      case 'clock':
        // Checked here rather than by scheduler.ts's schedulerOption (hedge()'s check): this reader
        // runs on every call given options, and the call measured 120 more instructions per call
        // (valgrind, as in BENCHMARKS.md section 1b).
        if (value !== undefined) {
          if (!hasMethods(value, ['now', 'setTimeout', 'clearTimeout'])) {
            throw new InvalidOptionError(owner, key, value, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
          }
          settings.clock = value as Scheduler;
        }
        break;
      case 'unref':
        if (value !== undefined && typeof value !== 'boolean') throw new InvalidOptionError(owner, key, value, 'must be a boolean');
        settings.unref = value === true;
        break;
      case 'onRetry':
        settings.onRetry = functionOption(owner, key, value as RetrySettings['onRetry']);
        break;
      case 'onGiveUp':
        settings.onGiveUp = functionOption(owner, key, value as RetrySettings['onGiveUp']);
        break;
      case 'onHookError':
        settings.onHookError = functionOption(owner, key, value as RetrySettings['onHookError']);
        break;
      case 'telemetry':
        settings.telemetry = telemetryOption(owner, value);
        break;
      case 'name':
        settings.name = nameOption(owner, value);
        break;
      case 'signal':
        if (perCall || value === undefined) break;
        throw new InvalidOptionError(owner, key, value, 'is a per-call option: pass it with each call');
      default:
        throw new InvalidOptionError(owner, key, value, unknownOption('a retry option', key, [...RETRY_POLICY_KEYS, ...RETRY_OBSERVER_KEYS, ...(perCall ? ['signal'] : [])]));
    }
  }
  settings.throttlingBackoff = throttlingDefault(settings, options.throttlingBackoff);
  settings.plain = settings.deadlineMs === Infinity && settings.attemptTimeoutMs === Infinity;
  // Stryker disable next-line ConditionalExpression: a call that is not lean runs its first attempt in the loop, to the same outcome; only the cost differs.
  settings.lean = settings.plain && settings.budget === undefined && settings.throttle === undefined && settings.telemetry === undefined;
  return settings;
}

/**
 * @internal The `name` option: the dependency a call goes to, as telemetry reports it. A label, so
 * a short printable string: 1–128 characters, no control characters.
 */
export function nameOption(owner: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length === 0 || value.length > 128 || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new InvalidOptionError(owner, 'name', value, 'must be a string of 1 to 128 characters without control characters');
  }
  return value;
}

/** @internal The settings of `retry(op)`: the defaults, known to be valid. */
export const DEFAULT_SETTINGS = /* @__PURE__ */ readRetryOptions({}, 'retry', false);

/** @internal The clock's reading, checked: a NaN or infinite "now" would silently disable the deadline. */
export function nowOf(settings: RetrySettings): number {
  return checkedNow(settings.clock, settings.owner);
}

/**
 * @internal The per-call options of a {@link Retrier}: only `signal`. Anything else is an error (a
 * policy option such as `maxAttempts` belongs to `createRetry()`, and passing it per call would be
 * silently ignored).
 */
export function checkCallOptions(callOptions: RetryCallOptions): AbortSignal | undefined {
  // Not an object: `null` would fail reading its signal, and a string's indices would be named as options.
  if (typeof callOptions !== 'object' || callOptions === null || Array.isArray(callOptions)) {
    throw new InvalidOptionError('createRetry', 'callOptions', callOptions, 'must be an object: the per-call options ({ signal })');
  }
  for (const key in callOptions) {
    const value = (callOptions as Record<string, unknown>)[key];
    if (key !== 'signal' && value !== undefined) {
      const why = [...RETRY_POLICY_KEYS, ...RETRY_OBSERVER_KEYS].includes(key) ? 'is a createRetry() option, fixed when the retrier is made: not a per-call option' : 'is not a per-call option (only signal is)';
      throw new InvalidOptionError('createRetry', key, value, why);
    }
  }
  return signalOption('createRetry', callOptions.signal);
}
