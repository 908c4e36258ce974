import type { GiveUpReason } from '../core/retry/errors.js';

/**
 * What `onRetry` is told: attempt `attempt` failed with `error`; attempt `attempt + 1` starts after `delayMs` ms.
 * @example
 * ```ts
 * retry(op, { onRetry: ({ attempt, delayMs, error }: RetryEvent) => log.warn({ attempt, delayMs, error }, 'retrying') });
 * ```
 */
export interface RetryEvent {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** The wait before the next attempt, in ms (0: it starts at once). */
  readonly delayMs: number;
  /** Where the wait came from: `'server-hint'` (the failure's `retryAfterMs`: `Retry-After`, `retry-after-ms`) or `'backoff'`. */
  readonly delaySource: 'backoff' | 'server-hint';
  /** What the failed attempt threw or rejected with. */
  readonly error: unknown;
}

/**
 * What `onGiveUp` is told when a call stops without a result.
 * @example
 * ```ts
 * retry(op, { onGiveUp: ({ reason, attempts }: GiveUpEvent) => log.error({ reason, attempts }, 'gave up') });
 * ```
 */
export interface GiveUpEvent {
  /** Why the call stopped. */
  readonly reason: GiveUpReason;
  /** Attempts started, the first included (0 when the signal had aborted before the first). */
  readonly attempts: number;
  /** The last failure, or for `'aborted'` the signal's abort reason. */
  readonly error: unknown;
}

/**
 * The names of the hooks, as passed to `onHookError` (`'telemetry'`: the `telemetry` observer).
 * @example
 * ```ts
 * retry(op, { onHookError: (error, hook: HookName) => log.error({ error, hook }, 'retry hook failed') });
 * ```
 */
export type HookName = 'onRetry' | 'onGiveUp' | 'telemetry';

/** @internal Reports a hook's failure: to `onHookError` if given, else as a process warning or on the console. */
export function reportHookError(onHookError: ((error: unknown, hook: HookName) => void) | undefined, hook: HookName, error: unknown): void {
  let label = `the ${hook} hook`;
  if (onHookError !== undefined) {
    try {
      onHookError(error, hook);
      return;
    } catch (reportError) {
      error = reportError;
      label = `the onHookError hook (reporting a failure of ${hook})`;
    }
  }
  const message = `herdless: ${label} failed; the call's outcome is unchanged: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  const process = (globalThis as { process?: { emitWarning?: (warning: string, options: object) => void } }).process;
  if (typeof process?.emitWarning === 'function') {
    process.emitWarning(message, { type: 'HerdlessWarning', code: 'HERDLESS_HOOK_FAILED' });
  } else {
    console.error(message, error);
  }
}

/**
 * @internal Calls a hook as an observer: what it returns is not awaited, and a throw or a rejection
 * is reported, never allowed to reach the call's outcome or to become an unhandled rejection.
 */
export function callHook<E>(
  hook: ((event: E) => unknown) | undefined,
  event: E,
  name: HookName,
  onHookError: ((error: unknown, hook: HookName) => void) | undefined,
): void {
  if (hook === undefined) return;
  try {
    const result = hook(event);
    if (result !== null && (typeof result === 'object' || typeof result === 'function') && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, (error: unknown) => reportHookError(onHookError, name, error));
    }
  } catch (error) {
    reportHookError(onHookError, name, error);
  }
}
