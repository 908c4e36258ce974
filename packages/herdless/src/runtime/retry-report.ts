import { describeGiveUp, type RetryCommand } from '../core/retry/decide.js';
import { RetryError, type FailureLog, type GiveUpReason } from '../core/retry/errors.js';
import { callHook } from './hooks.js';
import type { RetrySettings } from './retry-options.js';
import { CallReporter } from './telemetry.js';

// What a retry() call tells the world: the telemetry observer's events and the onRetry/onGiveUp
// hooks, and the RetryError it ends with. Nothing here is built for a call without an observer.

/** @internal A retry command: wait `delayMs`, then the next attempt. */
export type RetryStep = Extract<RetryCommand, { kind: 'retry' }>;

/** @internal The call's reporter, or `undefined` (nothing built) without an observer. */
export function callTelemetry(settings: RetrySettings): CallReporter | undefined {
  return settings.telemetry === undefined ? undefined : new CallReporter(settings.telemetry, settings.name === undefined ? { layer: 'retry' } : { layer: 'retry', name: settings.name }, settings.clock, settings.onHookError);
}

/** @internal A retry is scheduled after attempt `attempt` failed with `error`: telemetry, then `onRetry`. */
export function reportRetry(settings: RetrySettings, tel: CallReporter | undefined, attempt: number, step: RetryStep, error: unknown): void {
  if (tel !== undefined) tel.retry(attempt, step.delayMs, step.delaySource, error);
  // Stryker disable next-line ConditionalExpression: callHook returns at once for an undefined hook; this only skips building the event.
  if (settings.onRetry !== undefined) {
    callHook(settings.onRetry, { attempt, delayMs: step.delayMs, delaySource: step.delaySource, error }, 'onRetry', settings.onHookError);
  }
}

/** Reports a call that ends without a result: to the telemetry, then to `onGiveUp`. */
function reportGiveUp(settings: RetrySettings, tel: CallReporter | undefined, reason: GiveUpReason, attempts: number, error: unknown): void {
  if (tel !== undefined) tel.giveUp(reason, attempts, error, reason === 'throttled' ? settings.throttle : settings.budget);
  // Stryker disable next-line ConditionalExpression: callHook returns at once for an undefined hook; this only skips building the event.
  if (settings.onGiveUp !== undefined) callHook(settings.onGiveUp, { reason, attempts, error }, 'onGiveUp', settings.onHookError);
}

/**
 * @internal Reports the give-up and returns the RetryError to throw; `error` is the last failure (if
 * any), `log` every failure so far.
 */
export function giveUpError(
  settings: RetrySettings,
  tel: CallReporter | undefined,
  command: Extract<RetryCommand, { kind: 'give-up' }>,
  attempts: number,
  error: unknown,
  log: FailureLog,
): RetryError {
  reportGiveUp(settings, tel, command.reason, attempts, error);
  return new RetryError(command.reason, attempts, error, describeGiveUp(settings, command, error), log.kept, log.omitted);
}

/** @internal Reports the caller's abort and returns its reason, which the call rejects with. */
export function abortReason(settings: RetrySettings, tel: CallReporter | undefined, attempts: number, signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  reportGiveUp(settings, tel, 'aborted', attempts, reason);
  return reason;
}
