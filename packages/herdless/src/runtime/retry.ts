import { classify } from '../core/classify/classify.js';
import { InvalidOptionError } from '../core/errors.js';
import { decide, describeGiveUp, startRetry, type HintedRetryBudget, type RetryCommand, type RetryState } from '../core/retry/decide.js';
import { AttemptTimeoutError, FailureLog, RetryError, type GiveUpReason } from '../core/retry/errors.js';
import type { Backoff } from '../core/backoff/backoff.js';
import type { RetryBudget } from '../core/budget/budget.js';
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
  type RetryPolicy,
  type RetryPolicyOptions,
} from '../core/retry/policy.js';
import { checkedRng, type Rng } from '../core/rng.js';
import { checkedNow } from '../core/time.js';
import { subscribe, unsubscribe } from './abort-link.js';
import { nextMacrotask } from './macrotask.js';
import { callHook, type GiveUpEvent, type HookName, type RetryEvent } from './hooks.js';
import { CallTelemetry, telemetryOption, type TelemetryObserver } from './telemetry.js';
import type { Scheduler } from './scheduler.js';
import { systemScheduler } from './scheduler.js';
import { systemRandom } from './system-random.js';

/**
 * What each attempt of a `retry()` call receives.
 * @example
 * ```ts
 * retry(({ attempt, signal }: RetryContext) => fetch(url, { signal, headers: { 'x-attempt': String(attempt) } }));
 * ```
 */
export interface RetryContext {
  /** This attempt's number, counting from 1. */
  readonly attempt: number;
  /**
   * Aborts when the caller's `signal` aborts (reason: the caller's reason) or when this attempt
   * runs out of time (`attemptTimeoutMs` or the call's deadline; reason: an `AttemptTimeoutError`).
   * Pass it on to `fetch()` and the like. It is created on first read, so an operation that never
   * reads it costs nothing. On a call that nothing can abort (no `signal`, `deadlineMs` or
   * `attemptTimeoutMs`) it is a signal that never aborts — on the first attempt, a new one at each read.
   * When only the caller's `signal` can abort the call, it is that signal itself: `retry()` removes
   * every listener it adds, but a consumer may leave its own on it (Node.js's `fetch` leaves one per
   * request until the request is garbage-collected, as when you pass the signal to `fetch`
   * directly). Otherwise it is the attempt's own signal: it follows the caller's while the attempt
   * runs and adds nothing to it (all calls on one caller signal share one listener, removed when the
   * last of them ends). Do not wrap a long-lived signal in `AbortSignal.any([signal, …])` per attempt
   * or per request: on Node.js 20 every such call leaves an entry on the long-lived signal for as long
   * as that signal lives.
   */
  readonly signal: AbortSignal;
}

/**
 * The function `retry()` runs: one call per attempt. It may return a value or a promise.
 * @example
 * ```ts
 * const op: RetryOperation<Response> = ({ signal }) => fetch(url, { signal });
 * ```
 */
export type RetryOperation<T> = (context: RetryContext) => T | PromiseLike<T>;

/**
 * Options of {@link createRetry}: the policy (see {@link RetryPolicyOptions}) plus the runtime's ports and hooks.
 * @example
 * ```ts
 * const options: RetrierOptions = { maxAttempts: 4, clock: new ManualClock(), random: new PyRandom(1) };
 * ```
 */
export interface RetrierOptions extends RetryPolicyOptions {
  /** The randomness the backoff draws from. Default `systemRandom` (`Math.random`); pass a seeded `Rng` (`new PyRandom(seed)` from `herdless/sim`) for repeatable waits. */
  random?: Rng | undefined;
  /** The clock and timers. Default `systemScheduler` (`performance.now`, `setTimeout`); pass a {@link ManualClock} in tests. */
  clock?: Scheduler | undefined;
  /**
   * `true` unrefs every timer the call schedules, so a pending retry does not keep a Node.js process
   * alive (background work). Default `false`: a foreground call is allowed to finish.
   */
  unref?: boolean | undefined;
  /**
   * Called before each wait: attempt `attempt` failed with `error`, the next starts after `delayMs` ms.
   * An observer — see {@link createRetry} for what happens if it throws or rejects.
   */
  onRetry?: ((event: RetryEvent) => unknown) | undefined;
  /** Called once when the call stops without a result, just before it rejects. An observer, as `onRetry`. */
  onGiveUp?: ((event: GiveUpEvent) => unknown) | undefined;
  /**
   * Receives a hook's failure (a throw, or the rejection of the promise it returned). Default: a
   * process warning `HERDLESS_HOOK_FAILED` (`console.error` outside Node.js).
   */
  onHookError?: ((error: unknown, hook: HookName) => void) | undefined;
  /**
   * Receives the call's events — attempt started and ended (outcome, duration in ms), retry
   * scheduled (delay in ms and its source), give-up (reason), budget refusal — see
   * {@link TelemetryEvent}. An observer, as `onRetry` (its failures go to `onHookError` as
   * `'telemetry'`). `herdless/otel` turns them into OpenTelemetry metrics. Default: none, and then
   * nothing is built.
   */
  telemetry?: TelemetryObserver | undefined;
}

/**
 * Options of {@link retry}: everything {@link createRetry} takes, plus the call's `signal`.
 * @example
 * ```ts
 * const options: RetryOptions = { maxAttempts: 4, deadlineMs: 10_000, signal: request.signal };
 * ```
 */
export interface RetryOptions extends RetrierOptions {
  /**
   * Aborting it ends the call at once — during an attempt or a wait — and the call rejects with the
   * signal's `reason` itself (as `fetch()` does), not with a `RetryError`. The pending timer is
   * cleared, no further attempt starts, and the listener `retry()` added is removed.
   */
  signal?: AbortSignal | undefined;
}

/**
 * Per-call options of a {@link Retrier}.
 * @example
 * ```ts
 * await withRetry(op, { signal: AbortSignal.timeout(5000) } satisfies RetryCallOptions);
 * ```
 */
export interface RetryCallOptions {
  /** As {@link RetryOptions.signal}. */
  signal?: AbortSignal | undefined;
}

/**
 * A retry policy bound to the runtime, made once by {@link createRetry}: call it like `retry()`.
 * @example
 * ```ts
 * const withRetry: Retrier = createRetry({ maxAttempts: 4 });
 * const value = await withRetry(op);
 * ```
 */
export interface Retrier {
  <T>(operation: RetryOperation<T>, options?: RetryCallOptions): Promise<T>;
  /** The normalised policy, e.g. for the lab or for logging. */
  readonly policy: RetryPolicy;
}

/**
 * A call's options, read and validated: the policy (the runner *is* the {@link RetryPolicy} that
 * `decide()` reads — one object per call, not two) plus the runtime's ports and hooks.
 */
class Runner implements PolicyDraft {
  maxAttempts = DEFAULT_MAX_ATTEMPTS;
  backoff: Backoff = DEFAULT_BACKOFF;
  throttlingBackoff: Backoff = DEFAULT_THROTTLING_BACKOFF;
  ignoreHints = false;
  retryable: RetryableOverride | undefined;
  maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS;
  deadlineMs = Infinity;
  attemptTimeoutMs = Infinity;
  budget: RetryBudget | undefined;
  random: Rng = systemRandom;
  clock: Scheduler = systemScheduler;
  unref = false;
  onRetry: ((event: RetryEvent) => unknown) | undefined;
  onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  telemetry: TelemetryObserver | undefined;
  /** No deadline and no attempt timeout: without a signal, the call needs no guard at all. */
  plain = true;
  /** `plain`, no budget and no telemetry: a call without a signal touches nothing of the runner until an attempt fails. */
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
export const RETRY_OBSERVER_KEYS: readonly string[] = ['onRetry', 'onGiveUp', 'telemetry'];

// Local, not core/validate's functionOption: this reader runs on every call given options, and the
// shared one measured a few more instructions per call (valgrind, as in BENCHMARKS.md section 1b).
function functionOption<F>(owner: string, field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value;
}

function isRng(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as Rng).random === 'function';
}

function isScheduler(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Scheduler;
  return typeof s.now === 'function' && typeof s.setTimeout === 'function' && typeof s.clearTimeout === 'function';
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const name of names) if (typeof (value as Record<string, unknown>)[name] !== 'function') return false;
  return true;
}

/**
 * Reads and validates `options` as they are now, in one pass over their own keys: every given value
 * is checked (the defaults are known to be good), and a key that is no option is an error, so a
 * misspelling never falls back silently to a default. `perCall`: `retry()`, whose `signal` is an
 * option (read by the caller); `createRetry()` refuses it.
 */
function parseRunner(options: RetryOptions, owner: string, perCall: boolean): Runner {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const runner = new Runner(owner);
  for (const key in options) {
    const value: unknown = (options as Record<string, unknown>)[key];
    switch (key) {
      case 'maxAttempts':
        runner.maxAttempts = maxAttemptsOption(owner, value);
        break;
      case 'backoff':
        runner.backoff = backoffOption(owner, value);
        break;
      case 'retryable':
        runner.retryable = retryableOption(owner, value);
        break;
      case 'throttlingBackoff':
        runner.throttlingBackoff = throttlingBackoffOption(owner, value);
        break;
      case 'ignoreHints':
        runner.ignoreHints = ignoreHintsOption(owner, value);
        break;
      case 'maxRetryAfterMs':
        runner.maxRetryAfterMs = maxRetryAfterOption(owner, value);
        break;
      case 'deadlineMs':
        runner.deadlineMs = limitOption(owner, key, value);
        break;
      case 'attemptTimeoutMs':
        runner.attemptTimeoutMs = limitOption(owner, key, value);
        break;
      case 'budget':
        runner.budget = budgetOption(owner, value);
        break;
      case 'random':
        if (value !== undefined) {
          if (!isRng(value)) throw new InvalidOptionError(owner, key, value, 'must be an Rng ({ random(): number })');
          // Herdless's own source is known to be good; any other is checked draw by draw.
          runner.random = value === systemRandom ? systemRandom : checkedRng(value as Rng, owner, 'random');
        }
        break;
      case 'clock':
        if (value !== undefined) {
          if (!isScheduler(value)) {
            throw new InvalidOptionError(owner, key, value, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
          }
          runner.clock = value as Scheduler;
        }
        break;
      case 'unref':
        if (value !== undefined && typeof value !== 'boolean') throw new InvalidOptionError(owner, key, value, 'must be a boolean');
        runner.unref = value === true;
        break;
      case 'onRetry':
        runner.onRetry = functionOption(owner, key, value as Runner['onRetry']);
        break;
      case 'onGiveUp':
        runner.onGiveUp = functionOption(owner, key, value as Runner['onGiveUp']);
        break;
      case 'onHookError':
        runner.onHookError = functionOption(owner, key, value as Runner['onHookError']);
        break;
      case 'telemetry':
        runner.telemetry = telemetryOption(owner, value as TelemetryObserver | undefined);
        break;
      case 'signal':
        if (perCall || value === undefined) break;
        throw new InvalidOptionError(owner, key, value, 'is a per-call option: pass it with each call');
      default:
        throw new InvalidOptionError(owner, key, value, `is not a retry option (check the spelling; options: ${[...RETRY_POLICY_KEYS, ...RETRY_OBSERVER_KEYS, ...(perCall ? ['signal'] : [])].join(', ')})`);
    }
  }
  runner.throttlingBackoff = throttlingDefault(runner, options.throttlingBackoff);
  runner.plain = runner.deadlineMs === Infinity && runner.attemptTimeoutMs === Infinity;
  runner.lean = runner.plain && runner.budget === undefined && runner.telemetry === undefined;
  return runner;
}

/** The clock's reading, checked: a NaN or infinite "now" would silently disable the deadline. */
function nowOf(runner: Runner): number {
  return checkedNow(runner.clock, runner.owner);
}

function checkSignal(owner: string, signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!hasMethods(signal, ['addEventListener', 'removeEventListener']) || typeof (signal as AbortSignal).aborted !== 'boolean') {
    throw new InvalidOptionError(owner, 'signal', signal, 'must be an AbortSignal');
  }
  return signal as AbortSignal;
}

/** The runner of `retry(op)`: the defaults, known to be valid. */
const DEFAULT_RUNNER = /* @__PURE__ */ parseRunner({}, 'retry', false);

/**
 * Runs `operation` until it succeeds, retrying transient failures with capped exponential backoff
 * and full jitter — and stopping at `maxAttempts`, the deadline, a fatal error, a server's "do not
 * retry", a too-long `Retry-After`, a refusing retry budget, or the caller's abort. Nothing can
 * make it hang past its `deadlineMs`, retry forever, or leave a timer or a listener behind.
 *
 * Defaults: `maxAttempts` 3 (the first try included), full jitter from 100 ms doubling to a 10 s cap
 * (AWS "Exponential Backoff And Jitter"), from 500 ms after a throttling answer without a hint
 * (`throttlingBackoff`), server hints honoured up to `maxRetryAfterMs` 60 000, no deadline, no
 * attempt timeout, no budget. Only transient failures are retried (see `isTransientError`: network error codes,
 * fetch's "fetch failed", attempt timeouts, HTTP 408/429/500/502/503/504, gRPC UNAVAILABLE);
 * everything else — TypeErrors (bugs), 4xx, the caller's abort — ends the call after one attempt.
 *
 * Outcome:
 * - resolves with the first successful attempt's value;
 * - rejects with a {@link RetryError} (code `ERR_HERDLESS_RETRY`; `reason`, `attempts`, the last
 *   failure as `cause`, and every attempt's failure in `failures`, bounded) when it gives up; that error carries the "do not retry" mark, so an outer
 *   `retry()` never multiplies this one's attempts;
 * - rejects with `signal.reason` itself when the caller's signal aborts (before or during the call).
 *
 * Hooks (`onRetry`, `onGiveUp`) are observers: they are not awaited, and a throw or rejected promise
 * from them never changes the outcome and never becomes an unhandled rejection — it goes to
 * `onHookError`, or else to a process warning.
 *
 * Each call reads its options as they are at that call, and validates every given value before
 * anything runs (an invalid one throws at once); the call keeps what it read — changing the object
 * afterwards affects the next call, never a running one. Reading them costs about as much as the
 * call itself (docs/retry.md "Cost"); {@link createRetry} validates once, up front, for a hot path.
 *
 * @param operation called once per attempt with `{ attempt, signal }`.
 * @param options see {@link RetryOptions}; each field documents its unit (ms) and default.
 * @throws InvalidOptionError (synchronously) for an `operation` that is not a function or an
 *   invalid option — the message names the field and the value.
 * @example
 * ```ts
 * const user = await retry(async ({ signal }) => {
 *   const res = await fetch(`https://api.example.com/users/${id}`, { signal });
 *   if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
 *   return res.json();
 * }, { maxAttempts: 4, deadlineMs: 10_000 });
 * ```
 */
export function retry<T>(operation: RetryOperation<T>, options?: RetryOptions): Promise<T> {
  // The lean path checks `operation` itself, for free (see startLean).
  if (options === undefined) return startLean(operation, DEFAULT_RUNNER);
  if (typeof operation !== 'function') throw new InvalidOptionError('retry', 'operation', operation, 'must be a function');
  const runner = parseRunner(options, 'retry', true);
  const signal = checkSignal('retry', options.signal);
  if (signal !== undefined) return runGuarded(operation, runner, signal);
  return runner.lean ? startLean(operation, runner) : runner.plain ? runPlain(operation, runner, 1, undefined) : runGuarded(operation, runner, undefined);
}

/**
 * Validates and normalises the options once and returns a {@link Retrier}: a function you call like
 * `retry()`, with an optional per-call `{ signal }`. Use it on hot paths and to share one policy —
 * and one retry budget — between calls. Semantics are those of {@link retry}.
 *
 * @throws InvalidOptionError for an invalid option (or a `signal`, which is per call).
 * @example
 * ```ts
 * const withRetry = createRetry({ maxAttempts: 4, attemptTimeoutMs: 2000, budget: retryThrottlingBudget() });
 * const body = await withRetry(({ signal }) => fetch(url, { signal }).then(readBody), { signal: request.signal });
 * ```
 */
export function createRetry(options: RetrierOptions = {}): Retrier {
  const runner = parseRunner(options, 'createRetry', false);
  const retrier = <T>(operation: RetryOperation<T>, callOptions?: RetryCallOptions): Promise<T> => {
    // The lean path checks `operation` itself, for free (see startLean).
    if (callOptions === undefined && runner.lean) return startLean(operation, runner);
    if (typeof operation !== 'function') throw new InvalidOptionError('createRetry', 'operation', operation, 'must be a function');
    const signal = callOptions === undefined ? undefined : checkCallOptions(callOptions);
    if (signal !== undefined || !runner.plain) return runGuarded(operation, runner, signal);
    return runner.lean ? startLean(operation, runner) : runPlain(operation, runner, 1, undefined);
  };
  const policy: RetryPolicy = Object.freeze({
    maxAttempts: runner.maxAttempts,
    backoff: runner.backoff,
    throttlingBackoff: runner.throttlingBackoff,
    ignoreHints: runner.ignoreHints,
    retryable: runner.retryable,
    maxRetryAfterMs: runner.maxRetryAfterMs,
    deadlineMs: runner.deadlineMs,
    attemptTimeoutMs: runner.attemptTimeoutMs,
    budget: runner.budget,
  });
  return Object.defineProperty(retrier, 'policy', { value: policy, enumerable: true }) as Retrier;
}

/**
 * The per-call options of a {@link Retrier}: only `signal`. Anything else is an error (a policy option
 * such as `maxAttempts` belongs to `createRetry()`, and passing it per call would be silently ignored).
 */
function checkCallOptions(callOptions: RetryCallOptions): AbortSignal | undefined {
  // Not an object: `null` would fail reading its signal, and a string's indices would be named as options.
  if (typeof callOptions !== 'object' || callOptions === null || Array.isArray(callOptions)) {
    throw new InvalidOptionError('createRetry', 'callOptions', callOptions, 'must be an object: the per-call options ({ signal })');
  }
  for (const key in callOptions) {
    if (key !== 'signal' && (callOptions as Record<string, unknown>)[key] !== undefined) {
      const why = [...RETRY_POLICY_KEYS, 'onRetry', 'onGiveUp', 'telemetry'].includes(key) ? 'is a createRetry() option, fixed when the retrier is made: not a per-call option' : 'is not a per-call option (only signal is)';
      throw new InvalidOptionError('createRetry', key, (callOptions as Record<string, unknown>)[key], why);
    }
  }
  return checkSignal('createRetry', callOptions.signal);
}

// ─── the shell ──────────────────────────────────────────────────────────────────────────────────

/**
 * The first attempt's context on the plain path, shared by every call: nothing can abort a plain
 * attempt, so any never-aborting signal will do. Each read makes a fresh one (a signal is never
 * shared between calls: listeners a consumer leaves on it must not pile up), and an operation that
 * ignores the signal costs nothing — not even the context's allocation.
 */
const FIRST_PLAIN_CONTEXT: RetryContext = /* @__PURE__ */ Object.freeze({
  attempt: 1,
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
});

/**
 * A later attempt's context on the plain path, where nothing can abort it: a never-aborting signal,
 * made on first read, so an operation that ignores it costs nothing.
 */
class PlainContext implements RetryContext {
  readonly attempt: number;
  private cached: AbortSignal | undefined;

  constructor(attempt: number) {
    this.attempt = attempt;
  }

  get signal(): AbortSignal {
    return (this.cached ??= new AbortController().signal);
  }
}

/** An attempt's context on the guarded path. Its signal, too, is made on first read. */
class AttemptContext implements RetryContext {
  readonly attempt: number;
  #guard: Guard;
  #signal: AbortSignal | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  constructor(attempt: number, guard: Guard) {
    this.attempt = attempt;
    this.#guard = guard;
  }

  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    const guard = this.#guard;
    // Only the caller can abort this attempt: hand over the caller's own signal, no controller needed.
    if (guard.runner.plain && guard.signal !== undefined && !this.#aborted) {
      return (this.#signal = guard.signal);
    }
    const controller = new AbortController();
    if (this.#aborted) controller.abort(this.#reason);
    this.#controller = controller;
    return (this.#signal = controller.signal);
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

function unrefTimer(handle: unknown): void {
  if (typeof handle === 'object' && handle !== null) (handle as { unref?: () => unknown }).unref?.();
}

/** Runs a call's stages (attempts and waits) so that an abort or a timeout ends the current one at once. */
class Guard {
  readonly runner: Runner;
  readonly signal: AbortSignal | undefined;
  /** The caller's signal aborted. */
  aborted = false;
  /** The last attempt was cut short by the deadline. */
  byDeadline = false;
  #reject: ((reason: unknown) => void) | undefined;
  #timer: unknown;
  #hasTimer = false;
  #context: AttemptContext | undefined;

  constructor(runner: Runner, signal: AbortSignal | undefined) {
    this.runner = runner;
    this.signal = signal;
  }

  /** The caller's signal fired (`this` is the listener object, so no closure is allocated). */
  handleEvent(): void {
    this.aborted = true;
    this.#clearTimer();
    const reason = this.signal!.reason;
    this.#context?.abort(reason);
    const reject = this.#reject;
    this.#reject = undefined;
    reject?.(reason);
  }

  #setTimer(callback: () => void, ms: number): void {
    this.#timer = this.runner.clock.setTimeout(callback, ms);
    this.#hasTimer = true;
    if (this.runner.unref) unrefTimer(this.#timer);
  }

  #clearTimer(): void {
    if (this.#hasTimer) {
      this.#hasTimer = false;
      this.runner.clock.clearTimeout(this.#timer);
    }
  }

  /** Runs one attempt, failing it with an AttemptTimeoutError after `timeoutMs` (if finite). */
  attempt<T>(operation: RetryOperation<T>, attempt: number, timeoutMs: number, byDeadline: boolean, scope: BudgetScope | undefined): Promise<T> {
    const context = new AttemptContext(attempt, this);
    this.#context = context;
    this.byDeadline = false;
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      if (timeoutMs !== Infinity) {
        this.#setTimer(() => {
          this.#hasTimer = false;
          this.#reject = undefined;
          this.byDeadline = byDeadline;
          const timeout = new AttemptTimeoutError(attempt, timeoutMs, byDeadline);
          reject(timeout);
          context.abort(timeout);
        }, timeoutMs);
      }
      let result: T | PromiseLike<T>;
      try {
        result = callOperation(operation, context, scope);
      } catch (error) {
        reject(error);
        return;
      }
      // A late settlement after a timeout or an abort lands on a settled promise: ignored, and
      // handled, so it never becomes an unhandled rejection.
      Promise.resolve(result).then(resolve, reject);
    });
  }

  /** Waits `ms` ms (> 0); rejects at once if the caller aborts. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#reject = reject;
      this.#setTimer(() => {
        this.#hasTimer = false;
        this.#reject = undefined;
        resolve();
      }, ms);
    });
  }

  /** The current stage is over: drop its timer and its hooks into the attempt. */
  settled(): void {
    this.#clearTimer();
    this.#reject = undefined;
    this.#context = undefined;
  }
}

/** The call's reporter, or `undefined` (nothing built) without an observer. */
function callTelemetry(runner: Runner): CallTelemetry | undefined {
  return runner.telemetry === undefined ? undefined : new CallTelemetry(runner.telemetry, { layer: 'retry' }, runner.clock, runner.onHookError);
}

function sleep(runner: Runner, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const handle = runner.clock.setTimeout(resolve, ms);
    if (runner.unref) unrefTimer(handle);
  });
}

/** Classifies a failure and decides; on give-up, reports and throws the RetryError; else reports the retry. */
function afterFailure(
  runner: Runner,
  state: RetryState,
  error: unknown,
  now: number,
  log: FailureLog,
  delegated: boolean,
  tel: CallTelemetry | undefined,
): RetryStep | Promise<RetryStep> {
  log.add(state.attempt, error);
  const verdict = classify(error, runner.retryable, state.attempt, !runner.ignoreHints);
  // A nested layer with the same budget reported this attempt's failure: only a retry is asked for.
  const policy: RetryPolicy = delegated ? { ...runner, budget: retriesOnly(runner.budget!) } : runner;
  const command = decide(policy, state, verdict, now, runner.random);
  if (command.kind === 'give-up') throw giveUp(runner, command, state.attempt, error, log, tel);
  const budget = runner.budget;
  if (budget !== undefined && budget.confirmRetry !== undefined) {
    // A budget kept outside the process (herdless/redis) gives its answer asynchronously; it bounds
    // the wait itself and never rejects.
    const answer = budget.confirmRetry(now);
    if (answer !== true) return Promise.resolve(answer).then((allowed) => confirmed(runner, state, error, command, allowed, log, tel));
  }
  return confirmed(runner, state, error, command, true, log, tel);
}

type RetryStep = Extract<RetryCommand, { kind: 'retry' }>;
type GiveUp = Extract<RetryCommand, { kind: 'give-up' }>;

/** The end of a retry decision, once the budget (if it confirms asynchronously) has answered. */
function confirmed(runner: Runner, state: RetryState, error: unknown, command: RetryStep, allowed: boolean, log: FailureLog, tel: CallTelemetry | undefined): RetryStep {
  if (!allowed) {
    throw giveUp(runner, { kind: 'give-up', reason: 'budget' }, state.attempt, error, log, tel);
  }
  if (tel !== undefined) tel.retry(state.attempt, command.delayMs, command.hinted ? 'server-hint' : 'backoff', error);
  if (runner.onRetry !== undefined) {
    callHook(runner.onRetry, { attempt: state.attempt, delayMs: command.delayMs, hinted: command.hinted, error }, 'onRetry', runner.onHookError);
  }
  return command;
}

/** Reports a call that ends without a result: to the telemetry, then to `onGiveUp`. */
function reportGiveUp(runner: Runner, reason: GiveUpReason, attempts: number, error: unknown, tel: CallTelemetry | undefined): void {
  if (tel !== undefined) tel.giveUp(reason, attempts, error, runner.budget);
  if (runner.onGiveUp !== undefined) callHook(runner.onGiveUp, { reason, attempts, error }, 'onGiveUp', runner.onHookError);
}

/** Reports the give-up and returns the RetryError to throw; `error` is the last failure (if any). */
function giveUp(runner: Runner, command: GiveUp, attempts: number, error: unknown, log: FailureLog, tel: CallTelemetry | undefined): RetryError {
  reportGiveUp(runner, command.reason, attempts, error, tel);
  return new RetryError(command.reason, attempts, error, describeGiveUp(runner, command, error), log.kept, log.omitted);
}

/** Reports the caller's abort and returns its reason, which the call rejects with. */
function aborted(runner: Runner, attempts: number, signal: AbortSignal, tel: CallTelemetry | undefined): unknown {
  const reason: unknown = signal.reason;
  reportGiveUp(runner, 'aborted', attempts, reason, tel);
  return reason;
}

/**
 * The lean path: no signal, no deadline, no attempt timeout, no budget. The first attempt is
 * chained with one `.then()` instead of an async function: on success that is one promise and one
 * hop less, which is most of what retry() costs over a bare `await operation()`.
 */
function startLean<T>(operation: RetryOperation<T>, runner: Runner): Promise<T> {
  let result: T | PromiseLike<T>;
  try {
    result = operation(FIRST_PLAIN_CONTEXT);
  } catch (error) {
    // Calling a non-function throws before anything runs: checked here rather than before the call,
    // where the check is not free (the call checks its target anyway). The throw is synchronous,
    // as on every other path.
    if (typeof operation !== 'function') throw new InvalidOptionError(runner.owner, 'operation', operation, 'must be a function');
    return runPlain(operation, runner, 2, error);
  }
  // A native promise (what an async operation returns) is chained as it is: Promise.resolve() would
  // hand back the same object after a constructor lookup, measurably dearer on this path.
  const settled = result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result);
  return settled.then(undefined, (error: unknown) => runPlain(operation, runner, 2, error));
}

/**
 * One budgeted layer's attempt, while its operation is being called. A retry budget counts each
 * logical call once, however many herdless layers it crosses: when a call with a budget starts
 * inside the operation of an enclosing layer's attempt with the same budget (a `createRetry`
 * wrapping a `withRetry`, both given one budget), the inner call takes over the accounting of that
 * attempt — it does not count its own first send (the enclosing layer counted it) but counts its
 * retries and outcomes — and the enclosing layer, seeing `delegated`, does not count that attempt's
 * outcome again. Found through the synchronous part of the operation call (how nested layers start),
 * so it needs no async context and works the same in browsers.
 */
interface BudgetScope {
  readonly budget: RetryBudget;
  readonly parent: BudgetScope | undefined;
  delegated: boolean;
}

let enclosingScope: BudgetScope | undefined;

/** True when an enclosing layer's attempt with this budget is running: that layer then leaves the attempt's accounting to this call. */
function claimNested(budget: RetryBudget | undefined): boolean {
  if (budget === undefined) return false;
  for (let scope = enclosingScope; scope !== undefined; scope = scope.parent) {
    if (scope.budget === budget) {
      scope.delegated = true;
      return true;
    }
  }
  return false;
}

/** Calls the operation with `scope` as the enclosing budgeted attempt (undefined: no budget, no scope). */
function callOperation<T>(operation: RetryOperation<T>, context: RetryContext, scope: BudgetScope | undefined): T | PromiseLike<T> {
  if (scope === undefined) return operation(context);
  enclosingScope = scope;
  try {
    return operation(context);
  } finally {
    enclosingScope = scope.parent;
  }
}

function newScope(budget: RetryBudget | undefined): BudgetScope | undefined {
  return budget === undefined ? undefined : { budget, parent: enclosingScope, delegated: false };
}

/** A budget that hears nothing but retry requests: for an attempt whose outcome a nested layer already reported. */
function retriesOnly(budget: RetryBudget): RetryBudget {
  return { name: budget.name, onAttempt: noop, onSuccess: noop, onFailure: noop, allowRetry: (now) => budget.allowRetry(now) };
}
function noop(): void {}

/**
 * The plain retry loop. It starts at attempt `attempt`, or, with `attempt` 2 and the first
 * attempt's failure in `firstError`, right after a failed first attempt.
 */
async function runPlain<T>(operation: RetryOperation<T>, runner: Runner, attempt: number, firstError: unknown): Promise<T> {
  const budget = runner.budget as HintedRetryBudget | undefined;
  // Synchronously, before the first await: inside an enclosing layer's operation call.
  const nested = claimNested(budget);
  const tel = callTelemetry(runner);
  // No deadline on this path, so the start time does not matter.
  let state = startRetry(runner, 0);
  const log = new FailureLog();
  if (attempt === 2) {
    state = await failed(runner, state, firstError, log, false, tel);
  }
  for (;;) {
    if (budget !== undefined && !(nested && state.attempt === 1)) budget.onAttempt(nowOf(runner), state.attempt > 1);
    if (tel !== undefined) tel.attemptStart(state.attempt);
    const scope = newScope(budget);
    let value: T;
    try {
      value = await callOperation(operation, new PlainContext(state.attempt), scope);
    } catch (error) {
      if (tel !== undefined) tel.attemptEnd(state.attempt, 'failure', error);
      state = await failed(runner, state, error, log, scope !== undefined && scope.delegated, tel);
      continue;
    }
    if (tel !== undefined) tel.attemptEnd(state.attempt, 'success');
    if (budget !== undefined && !scope!.delegated) budget.onSuccess(nowOf(runner), state.attempt > 1);
    return value;
  }
}

/** After a failure on the plain path: decide, then wait (no timer for a 0 ms wait); the next state. */
function failed(runner: Runner, state: RetryState, error: unknown, log: FailureLog, delegated: boolean, tel: CallTelemetry | undefined): RetryState | Promise<RetryState> {
  const step = afterFailure(runner, state, error, nowOf(runner), log, delegated, tel);
  return step instanceof Promise ? step.then((command) => waited(runner, command)) : waited(runner, step);
}

function waited(runner: Runner, command: RetryStep): RetryState | Promise<RetryState> {
  const next = command.next;
  if (command.delayMs > 0) return sleep(runner, command.delayMs).then(() => next);
  return yieldsFirst(next.attempt) ? nextMacrotask().then(() => next) : next;
}

/**
 * A 0 ms wait starts the next attempt in the same chain of microtasks, with no timer; but an
 * operation that fails without touching I/O would then never let the event loop turn: no timer, no
 * I/O callback and no timer-driven abort could run until the call ended (2,000,000 attempts held the
 * loop for 12 s). So before every 16th attempt, a 0 ms wait yields one macrotask. Up to 15 attempts
 * of zero waits run without it, the common case unchanged.
 */
const ZERO_WAIT_YIELD_EVERY = 16;

function yieldsFirst(attempt: number): boolean {
  return attempt % ZERO_WAIT_YIELD_EVERY === 0;
}

/** The guarded path: a signal, a deadline or an attempt timeout is in play. */
async function runGuarded<T>(operation: RetryOperation<T>, runner: Runner, signal: AbortSignal | undefined): Promise<T> {
  const tel = callTelemetry(runner);
  if (signal !== undefined && signal.aborted) throw aborted(runner, 0, signal, tel);
  const budget = runner.budget as HintedRetryBudget | undefined;
  const nested = claimNested(budget);
  const guard = new Guard(runner, signal);
  let state = startRetry(runner, nowOf(runner));
  let lastError: unknown;
  const log = new FailureLog();
  if (signal !== undefined) subscribe(signal, guard);
  try {
    for (;;) {
      const now = nowOf(runner);
      // Never more than the whole deadline: a clock that stepped backwards must not ask for a longer timer.
      const left = Math.min(state.deadlineAt - now, runner.deadlineMs);
      if (left <= 0) {
        // A late timer brought us to the deadline: start no attempt that could not run.
        throw giveUp(runner, { kind: 'give-up', reason: 'deadline' }, state.attempt - 1, lastError, log, tel);
      }
      const byDeadline = left <= runner.attemptTimeoutMs;
      if (budget !== undefined && !(nested && state.attempt === 1)) budget.onAttempt(now, state.attempt > 1);
      if (tel !== undefined) tel.attemptStart(state.attempt);
      const scope = newScope(budget);
      let value: T;
      try {
        value = await guard.attempt(operation, state.attempt, byDeadline ? left : runner.attemptTimeoutMs, byDeadline, scope);
      } catch (error) {
        guard.settled();
        if (tel !== undefined) tel.attemptEnd(state.attempt, guard.aborted ? 'aborted' : error instanceof AttemptTimeoutError ? 'timeout' : 'failure', error);
        if (guard.aborted) throw aborted(runner, state.attempt, signal!, tel);
        lastError = error;
        // The deadline timer fired, so the deadline has passed even if the clock reads a hair earlier.
        const failedAt = guard.byDeadline ? Math.max(nowOf(runner), state.deadlineAt) : nowOf(runner);
        const step = afterFailure(runner, state, error, failedAt, log, scope !== undefined && scope.delegated, tel);
        const command = step instanceof Promise ? await step : step;
        state = command.next;
        if (command.delayMs > 0 && !guard.aborted) {
          try {
            await guard.wait(command.delayMs);
          } catch {
            // Only the caller's abort rejects a wait; handled just below.
          }
          guard.settled();
        } else if (yieldsFirst(state.attempt) && !guard.aborted) {
          // A timer-driven abort or deadline can fire in this turn (see ZERO_WAIT_YIELD_EVERY).
          await nextMacrotask();
        }
        // The abort may also have come from a hook, synchronously.
        if (guard.aborted) throw aborted(runner, state.attempt - 1, signal!, tel);
        continue;
      }
      guard.settled();
      if (tel !== undefined) tel.attemptEnd(state.attempt, 'success');
      if (budget !== undefined && !scope!.delegated) budget.onSuccess(nowOf(runner), state.attempt > 1);
      return value;
    }
  } finally {
    guard.settled();
    if (signal !== undefined) unsubscribe(signal, guard);
  }
}
