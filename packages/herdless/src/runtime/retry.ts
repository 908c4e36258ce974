import { classify } from '../core/classify/classify.js';
import { InvalidOptionError } from '../core/errors.js';
import { decide, describeGiveUp, startRetry, type HintedRetryBudget, type RetryCommand, type RetryState } from '../core/retry/decide.js';
import { AttemptTimeoutError, RetryError, type GiveUpReason } from '../core/retry/errors.js';
import { parseRetryPolicy, readRetryPolicy, type RetryPolicy, type RetryPolicyOptions } from '../core/retry/policy.js';
import type { Rng } from '../core/rng.js';
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
   * request, as it does when you pass the signal to `fetch` directly) — give a long-lived signal
   * a per-request `AbortSignal.any([signal])` if that matters.
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
  /** The randomness the backoff draws from. Default `systemRandom` (`Math.random`); pass `new PyRandom(seed)` for repeatable waits. */
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

interface Runner {
  readonly policy: RetryPolicy;
  readonly random: Rng;
  readonly clock: Scheduler;
  readonly unref: boolean;
  readonly onRetry: ((event: RetryEvent) => unknown) | undefined;
  readonly onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  readonly onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  readonly telemetry: TelemetryObserver | undefined;
  /** `retry` or `createRetry`: the name errors give. */
  readonly owner: string;
  /** No deadline and no attempt timeout: without a signal, the call needs no guard at all. */
  readonly plain: boolean;
  /** `plain`, no budget and no telemetry: a call without a signal touches nothing of the runner until an attempt fails. */
  readonly lean: boolean;
  /**
   * The cache entry of `retry(op, options)` this runner was made for: after a failed first attempt
   * on the lean path, the options object is re-read (see {@link reread}). `undefined` for a final
   * runner (createRetry, the defaults).
   */
  readonly source: CachedRunner | undefined;
}

/**
 * The option names of `retry()` that shape the policy (everything but the hooks `onRetry`/`onGiveUp`,
 * the `telemetry` observer and the per-call `signal`). The HTTP adapter passes exactly these through.
 * @internal
 */
export const RETRY_POLICY_KEYS: readonly string[] = [
  'maxAttempts',
  'backoff',
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

const KNOWN_OPTIONS: ReadonlySet<string> = new Set([...RETRY_POLICY_KEYS, 'onRetry', 'onGiveUp', 'telemetry', 'signal']);

function functionOption<F>(owner: string, field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value;
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const name of names) if (typeof (value as Record<string, unknown>)[name] !== 'function') return false;
  return true;
}

/**
 * Validates `options` and builds their runner. `source`: the cache entry being made for `options`
 * by `retry(op, options)`, whose runner re-reads the object after a failed first attempt (see
 * {@link reread}); without it (createRetry, the defaults) the runner is final.
 */
function parseRunner(options: RetryOptions, owner: string, allowSignal: boolean, source?: CachedRunner): Runner {
  // createRetry() hands its policy out (frozen); retry()'s lives for one call.
  const policy = allowSignal ? readRetryPolicy(options, owner) : parseRetryPolicy(options, owner);
  for (const key in options) {
    if (!KNOWN_OPTIONS.has(key) || (key === 'signal' && !allowSignal && (options as { signal?: unknown }).signal !== undefined)) {
      const why = key === 'signal' ? 'is a per-call option: pass it with each call' : 'is not a retry option (check the spelling)';
      throw new InvalidOptionError(owner, key, (options as Record<string, unknown>)[key], why);
    }
  }
  // Only what was given is checked: the defaults are known to be good.
  const random = options.random;
  if (random !== undefined && !hasMethods(random, ['random'])) throw new InvalidOptionError(owner, 'random', random, 'must be an Rng ({ random(): number })');
  const clock = options.clock;
  if (clock !== undefined && !hasMethods(clock, ['now', 'setTimeout', 'clearTimeout'])) {
    throw new InvalidOptionError(owner, 'clock', clock, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
  }
  const unref = options.unref;
  if (unref !== undefined && typeof unref !== 'boolean') throw new InvalidOptionError(owner, 'unref', unref, 'must be a boolean');
  const plain = policy.deadlineMs === Infinity && policy.attemptTimeoutMs === Infinity;
  const telemetry = telemetryOption(owner, options.telemetry);
  // Internal and never handed out, so not frozen: retry(op, options) builds one per call.
  return {
    owner,
    policy,
    random: random ?? systemRandom,
    clock: clock ?? systemScheduler,
    unref: unref === true,
    onRetry: functionOption(owner, 'onRetry', options.onRetry),
    onGiveUp: functionOption(owner, 'onGiveUp', options.onGiveUp),
    onHookError: functionOption(owner, 'onHookError', options.onHookError),
    telemetry,
    plain,
    lean: plain && policy.budget === undefined && telemetry === undefined,
    source,
  };
}

function checkSignal(owner: string, signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!hasMethods(signal, ['addEventListener', 'removeEventListener']) || typeof (signal as AbortSignal).aborted !== 'boolean') {
    throw new InvalidOptionError(owner, 'signal', signal, 'must be an AbortSignal');
  }
  return signal as AbortSignal;
}

/** The runner of `retry(op)`: the defaults, known to be valid. */
const DEFAULT_RUNNER = parseRunner({}, 'retry', false);

/**
 * What `retry(op, options)` remembers of an options object it has validated: every option's value
 * as read then (one field per option of {@link RetrierOptions}, so a new option fails to compile
 * here until `remember` records it — and `unchanged` must compare it too), the runner, and the object
 * itself, to re-read it after a failed first attempt (a WeakMap value may point at its key).
 */
type CachedRunner = { readonly [K in keyof RetrierOptions]-?: unknown } & { readonly runner: Runner; readonly options: RetryOptions };

/**
 * Runners of the options objects `retry()` has seen. A caller on a hot path passes the same object
 * (or a few) every time; re-validating it on each call cost more than the rest of a successful call.
 *
 * Two tiers, because most objects are *not* reused: `retry(op, { maxAttempts: 4 })` makes a fresh
 * literal per call, and putting each one in a WeakMap would cost several times the validation
 * itself (a WeakMap insert of a new object runs to hundreds of ns, with its GC work). So the last
 * few objects sit in a small ring (pointer comparisons); an object found there again has proved
 * it is reused, and is moved to the WeakMap when the ring lets it go. The ring holds those few
 * objects strongly until newer ones push them out.
 */
const RING_SIZE = 4;
const ringOptions: (object | undefined)[] = [undefined, undefined, undefined, undefined];
const ringCached: (CachedRunner | undefined)[] = [undefined, undefined, undefined, undefined];
const ringReused: boolean[] = [false, false, false, false];
let ringNext = 0;
const reusedRunners = new WeakMap<object, CachedRunner>();

/**
 * The object the last call found in the cache, and its entry: `retry()` checks it inline first, the
 * same object as last time being the commonest case by far. Only an object seen at least twice
 * becomes the last (a fresh literal per call never does, and costs nothing here).
 */
const last: { options: object | undefined; cached: CachedRunner | undefined } = { options: undefined, cached: undefined };

/**
 * The runner for `options`: validated on first sight, and compared field by field with what was
 * validated on every later sight that comes here — any change is validated afresh, before the call,
 * exactly as a new object would be. (The inline path of `retry()` compares less; see {@link reread}.)
 */
function runnerFor(options: RetryOptions): Runner {
  for (let i = 0; i < RING_SIZE; i++) {
    if (ringOptions[i] === options) {
      ringReused[i] = true;
      if (!unchanged(ringCached[i]!, options)) ringCached[i] = remember(options);
      return becomeLast(options, ringCached[i]!).runner;
    }
  }
  return admit(options);
}

/** A reused object's entry becomes the last, if its calls can take the inline path (lean runners only). */
function becomeLast(options: RetryOptions, cached: CachedRunner): CachedRunner {
  const lean = cached.runner.lean;
  last.options = lean ? options : undefined;
  last.cached = lean ? cached : undefined;
  return cached;
}

/** An object not in the ring (kept apart from runnerFor so that its hit path stays small). */
function admit(options: RetryOptions): Runner {
  const known = reusedRunners.get(options);
  let cached: CachedRunner;
  if (known === undefined) {
    cached = remember(options);
  } else {
    // Known to be reused: it may become the last.
    cached = unchanged(known, options) ? known : remember(options);
    becomeLast(options, cached);
  }
  // Into the ring; the object it pushes out goes to the WeakMap if it was found there again.
  const slot = ringNext;
  ringNext = slot === RING_SIZE - 1 ? 0 : slot + 1;
  const evicted = ringOptions[slot];
  if (evicted !== undefined && ringReused[slot]) reusedRunners.set(evicted, ringCached[slot]!);
  ringOptions[slot] = options;
  ringCached[slot] = cached;
  ringReused[slot] = known !== undefined;
  return cached.runner;
}

/** The options that decide how a call starts (telemetry too: it takes a call off the lean path): compared on every call, even on the inline path. */
function sameStart(c: CachedRunner, o: RetryOptions): boolean {
  return c.deadlineMs === o.deadlineMs && c.attemptTimeoutMs === o.attemptTimeoutMs && c.budget === o.budget && c.telemetry === o.telemetry;
}

/**
 * A call that took the inline path (only the start options compared) and whose first attempt failed:
 * the runner it carries on with, its options object (`entry.options`) read again. Unchanged since `entry` was
 * validated: `entry`'s runner. Changed: validated afresh (an invalid value throws, and the call
 * rejects with that error) and cached in `entry`'s place. If the start options themselves changed
 * while the call ran, the call keeps the start it had (it began without a deadline, a timeout or a
 * budget, and cannot take one on halfway); the next call reads everything anew.
 */
function reread(entry: CachedRunner): Runner {
  const options = entry.options;
  if (unchanged(entry, options)) return entry.runner;
  if (!sameStart(entry, options)) {
    const asStarted = { ...options, deadlineMs: entry.deadlineMs, attemptTimeoutMs: entry.attemptTimeoutMs, budget: entry.budget, telemetry: entry.telemetry, signal: undefined };
    return parseRunner(asStarted as RetryOptions, 'retry', true);
  }
  const fresh = remember(options);
  for (let i = 0; i < RING_SIZE; i++) if (ringCached[i] === entry) ringCached[i] = fresh;
  if (last.cached === entry) last.cached = fresh;
  if (reusedRunners.get(options) === entry) reusedRunners.set(options, fresh);
  return fresh.runner;
}

function unchanged(c: CachedRunner, o: RetryOptions): boolean {
  return (
    c.maxAttempts === o.maxAttempts &&
    c.backoff === o.backoff &&
    c.retryable === o.retryable &&
    c.maxRetryAfterMs === o.maxRetryAfterMs &&
    c.deadlineMs === o.deadlineMs &&
    c.attemptTimeoutMs === o.attemptTimeoutMs &&
    c.budget === o.budget &&
    c.random === o.random &&
    c.clock === o.clock &&
    c.unref === o.unref &&
    c.onRetry === o.onRetry &&
    c.onGiveUp === o.onGiveUp &&
    c.onHookError === o.onHookError &&
    c.telemetry === o.telemetry
  );
}

function remember(o: RetryOptions): CachedRunner {
  const entry: { -readonly [K in keyof CachedRunner]: CachedRunner[K] } = {
    runner: DEFAULT_RUNNER, // replaced just below, once the object has been validated
    options: o,
    maxAttempts: o.maxAttempts,
    backoff: o.backoff,
    retryable: o.retryable,
    maxRetryAfterMs: o.maxRetryAfterMs,
    deadlineMs: o.deadlineMs,
    attemptTimeoutMs: o.attemptTimeoutMs,
    budget: o.budget,
    random: o.random,
    clock: o.clock,
    unref: o.unref,
    onRetry: o.onRetry,
    onGiveUp: o.onGiveUp,
    onHookError: o.onHookError,
    telemetry: o.telemetry,
  };
  // Validates (and throws): nothing invalid is ever cached.
  entry.runner = parseRunner(o, 'retry', true, entry);
  return entry;
}

/**
 * Runs `operation` until it succeeds, retrying transient failures with capped exponential backoff
 * and full jitter — and stopping at `maxAttempts`, the deadline, a fatal error, a server's "do not
 * retry", a too-long `Retry-After`, a refusing retry budget, or the caller's abort. Nothing can
 * make it hang past its `deadlineMs`, retry forever, or leave a timer or a listener behind.
 *
 * Defaults: `maxAttempts` 3 (the first try included), full jitter from 100 ms doubling to a 10 s cap
 * (AWS "Exponential Backoff And Jitter"), `maxRetryAfterMs` 60 000, no deadline, no attempt timeout,
 * no budget. Only transient failures are retried (see `isTransientError`: network error codes,
 * fetch's "fetch failed", attempt timeouts, HTTP 408/429/500/502/503/504, gRPC UNAVAILABLE);
 * everything else — TypeErrors (bugs), 4xx, the caller's abort — ends the call after one attempt.
 *
 * Outcome:
 * - resolves with the first successful attempt's value;
 * - rejects with a {@link RetryError} (code `ERR_HERDLESS_RETRY`; `reason`, `attempts`, and the last
 *   failure as `cause`) when it gives up; that error carries the "do not retry" mark, so an outer
 *   `retry()` never multiplies this one's attempts;
 * - rejects with `signal.reason` itself when the caller's signal aborts (before or during the call).
 *
 * Hooks (`onRetry`, `onGiveUp`) are observers: they are not awaited, and a throw or rejected promise
 * from them never changes the outcome and never becomes an unhandled rejection — it goes to
 * `onHookError`, or else to a process warning.
 *
 * An options object is validated the first time `retry()` sees it, and normalised once. Passed again
 * (the same object, as a hot path does), it is re-read when its options are needed, and a change is
 * validated before it is used: `signal`, `deadlineMs`, `attemptTimeoutMs`, `budget` and `telemetry` decide how a
 * call starts and are compared on every call (an invalid value throws at once); the others matter
 * only once an attempt has failed, and a call reads them once, at its first failure, before any
 * retry. For an object seen at least twice, with no other reused object in between (the hot
 * path), that is the only comparison: an invalid value rejects the call whose attempt failed with
 * the `InvalidOptionError`, and a call that succeeds never reads them; any other object is also
 * compared in full when the call starts (an invalid value throws at once). docs/retry.md "Cost" has the details. Only a
 * misspelt key *added* to an object already in use goes unreported. {@link createRetry} validates
 * once, up front, and is not re-read.
 *
 * @param operation called once per attempt with `{ attempt, signal }`.
 * @param options see {@link RetryOptions}; each field documents its unit (ms) and default.
 * @throws InvalidOptionError (synchronously) for an `operation` that is not a function or an
 *   invalid option — the message names the field and the value. (A reused options object changed
 *   to an invalid value after its first use: see above for when it is reported.)
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
  // The same object as last time, on the lean path: only the options that decide how the call
  // starts are compared now; the rest when (and if) an attempt fails — see reread().
  if (options === last.options && options.signal === undefined) {
    const cached = last.cached!;
    if (sameStart(cached, options)) return startLean(operation, cached.runner);
  }
  // Anything but a plain object is left to parseRunner to reject (never cached).
  const runner = typeof options === 'object' && options !== null ? runnerFor(options) : parseRunner(options, 'retry', true);
  const signal = checkSignal('retry', options.signal);
  return signal === undefined && runner.plain ? startPlain(operation, runner) : runGuarded(operation, runner, signal);
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
    return signal === undefined && runner.plain ? startPlain(operation, runner) : runGuarded(operation, runner, signal);
  };
  return Object.defineProperty(retrier, 'policy', { value: runner.policy, enumerable: true }) as Retrier;
}

/**
 * The per-call options of a {@link Retrier}: only `signal`. Anything else is an error (a policy option
 * such as `maxAttempts` belongs to `createRetry()`, and passing it per call would be silently ignored).
 */
function checkCallOptions(callOptions: RetryCallOptions): AbortSignal | undefined {
  for (const key in callOptions) {
    if (key !== 'signal' && (callOptions as Record<string, unknown>)[key] !== undefined) {
      const why = KNOWN_OPTIONS.has(key) ? 'is a createRetry() option, fixed when the retrier is made: not a per-call option' : 'is not a per-call option (only signal is)';
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
const FIRST_PLAIN_CONTEXT: RetryContext = Object.freeze({
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
    this.cached = undefined;
  }

  get signal(): AbortSignal {
    return (this.cached ??= new AbortController().signal);
  }
}

/** An attempt's context on the guarded path. Its signal, too, is made on first read. */
class AttemptContext implements RetryContext {
  readonly attempt: number;
  #guard: Guard;
  #signal: AbortSignal | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #reason: unknown = undefined;

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
  #reject: ((reason: unknown) => void) | undefined = undefined;
  #timer: unknown = undefined;
  #hasTimer = false;
  #context: AttemptContext | undefined = undefined;

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
  attempt<T>(operation: RetryOperation<T>, attempt: number, timeoutMs: number, byDeadline: boolean): Promise<T> {
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
        result = operation(context);
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
function afterFailure(runner: Runner, state: RetryState, error: unknown, now: number, tel: CallTelemetry | undefined): RetryStep | Promise<RetryStep> {
  const policy = runner.policy;
  const verdict = classify(error, policy.retryable, state.attempt);
  const command = decide(policy, state, verdict, now, runner.random);
  if (command.kind === 'give-up') throw giveUp(runner, command.reason, state.attempt, error, describeGiveUp(policy, command, error), tel);
  const budget = policy.budget;
  if (budget !== undefined && budget.confirmRetry !== undefined) {
    // A budget kept outside the process (herdless/redis) gives its answer asynchronously; it bounds
    // the wait itself and never rejects.
    const answer = budget.confirmRetry(now);
    if (answer !== true) return Promise.resolve(answer).then((allowed) => confirmed(runner, state, error, command, allowed, tel));
  }
  return confirmed(runner, state, error, command, true, tel);
}

type RetryStep = Extract<RetryCommand, { kind: 'retry' }>;

/** The end of a retry decision, once the budget (if it confirms asynchronously) has answered. */
function confirmed(runner: Runner, state: RetryState, error: unknown, command: RetryStep, allowed: boolean, tel: CallTelemetry | undefined): RetryStep {
  if (!allowed) {
    throw giveUp(runner, 'budget', state.attempt, error, describeGiveUp(runner.policy, { kind: 'give-up', reason: 'budget' }, error), tel);
  }
  if (tel !== undefined) tel.retry(state.attempt, command.delayMs, command.hinted ? 'server-hint' : 'backoff', error);
  if (runner.onRetry !== undefined) {
    callHook(runner.onRetry, { attempt: state.attempt, delayMs: command.delayMs, hinted: command.hinted, error }, 'onRetry', runner.onHookError);
  }
  return command;
}

function giveUp(runner: Runner, reason: GiveUpReason, attempts: number, error: unknown, detail: string, tel: CallTelemetry | undefined): RetryError {
  if (tel !== undefined) tel.giveUp(reason, attempts, error, runner.policy.budget);
  if (runner.onGiveUp !== undefined) callHook(runner.onGiveUp, { reason, attempts, error }, 'onGiveUp', runner.onHookError);
  return new RetryError(reason, attempts, error, detail);
}

function aborted(runner: Runner, attempts: number, signal: AbortSignal, tel: CallTelemetry | undefined): unknown {
  const reason: unknown = signal.reason;
  if (tel !== undefined) tel.giveUp('aborted', attempts, reason, undefined);
  if (runner.onGiveUp !== undefined) callHook(runner.onGiveUp, { reason: 'aborted', attempts, error: reason }, 'onGiveUp', runner.onHookError);
  return reason;
}

/** The lean path after a failed first attempt: the options re-read if they come from a reused object, then the loop. */
function afterFirst<T>(operation: RetryOperation<T>, runner: Runner, error: unknown): Promise<T> {
  const source = runner.source;
  if (source === undefined) return runPlain(operation, runner, 2, error);
  let current: Runner;
  try {
    current = reread(source);
  } catch (invalid) {
    // Never a synchronous throw (a first attempt's own throw comes here from retry()).
    return Promise.reject(invalid);
  }
  return runPlain(operation, current, 2, error);
}

/** The plain path (no signal, no deadline, no attempt timeout): lean, or the loop when a budget counts every attempt. */
function startPlain<T>(operation: RetryOperation<T>, runner: Runner): Promise<T> {
  return runner.lean ? startLean(operation, runner) : runPlain(operation, runner, 1, undefined);
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
    return afterFirst(operation, runner, error);
  }
  // A native promise (what an async operation returns) is chained as it is: Promise.resolve() would
  // hand back the same object after a constructor lookup, measurably dearer on this path.
  const settled = result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result);
  return settled.then(undefined, (error: unknown) => afterFirst(operation, runner, error));
}

/**
 * The plain retry loop. It starts at attempt `attempt`, or, with `attempt` 2 and the first
 * attempt's failure in `firstError`, right after a failed first attempt.
 */
async function runPlain<T>(operation: RetryOperation<T>, runner: Runner, attempt: number, firstError: unknown): Promise<T> {
  const budget = runner.policy.budget as HintedRetryBudget | undefined;
  const tel = callTelemetry(runner);
  // No deadline on this path, so the start time does not matter.
  let state = startRetry(runner.policy, 0);
  if (attempt === 2) {
    state = await failed(runner, state, firstError, tel);
  }
  for (;;) {
    if (budget !== undefined) budget.onAttempt(runner.clock.now(), state.attempt > 1);
    if (tel !== undefined) tel.attemptStart(state.attempt);
    let value: T;
    try {
      value = await operation(new PlainContext(state.attempt));
    } catch (error) {
      if (tel !== undefined) tel.attemptEnd(state.attempt, 'failure', error);
      state = await failed(runner, state, error, tel);
      continue;
    }
    if (tel !== undefined) tel.attemptEnd(state.attempt, 'success');
    if (budget !== undefined) budget.onSuccess(runner.clock.now(), state.attempt > 1);
    return value;
  }
}

/** After a failure on the plain path: decide, then wait (no timer for a 0 ms wait); the next state. */
function failed(runner: Runner, state: RetryState, error: unknown, tel: CallTelemetry | undefined): RetryState | Promise<RetryState> {
  const step = afterFailure(runner, state, error, runner.clock.now(), tel);
  return step instanceof Promise ? step.then((command) => waited(runner, command)) : waited(runner, step);
}

function waited(runner: Runner, command: RetryStep): RetryState | Promise<RetryState> {
  const next = command.next;
  return command.delayMs > 0 ? sleep(runner, command.delayMs).then(() => next) : next;
}

/** The guarded path: a signal, a deadline or an attempt timeout is in play. */
async function runGuarded<T>(operation: RetryOperation<T>, runner: Runner, signal: AbortSignal | undefined): Promise<T> {
  const tel = callTelemetry(runner);
  if (signal !== undefined && signal.aborted) throw aborted(runner, 0, signal, tel);
  const { policy, clock } = runner;
  const budget = policy.budget as HintedRetryBudget | undefined;
  const guard = new Guard(runner, signal);
  let state = startRetry(policy, clock.now());
  let lastError: unknown;
  signal?.addEventListener('abort', guard);
  try {
    for (;;) {
      const now = clock.now();
      const left = state.deadlineAt - now;
      if (left <= 0) {
        // A late timer brought us to the deadline: start no attempt that could not run.
        throw giveUp(runner, 'deadline', state.attempt - 1, lastError, describeGiveUp(policy, { kind: 'give-up', reason: 'deadline' }), tel);
      }
      const byDeadline = left <= policy.attemptTimeoutMs;
      if (budget !== undefined) budget.onAttempt(now, state.attempt > 1);
      if (tel !== undefined) tel.attemptStart(state.attempt);
      let value: T;
      try {
        value = await guard.attempt(operation, state.attempt, byDeadline ? left : policy.attemptTimeoutMs, byDeadline);
      } catch (error) {
        guard.settled();
        if (tel !== undefined) tel.attemptEnd(state.attempt, guard.aborted ? 'aborted' : error instanceof AttemptTimeoutError ? 'timeout' : 'failure', error);
        if (guard.aborted) throw aborted(runner, state.attempt, signal!, tel);
        lastError = error;
        // The deadline timer fired, so the deadline has passed even if the clock reads a hair earlier.
        const failedAt = guard.byDeadline ? Math.max(clock.now(), state.deadlineAt) : clock.now();
        const step = afterFailure(runner, state, error, failedAt, tel);
        const command = step instanceof Promise ? await step : step;
        state = command.next;
        if (command.delayMs > 0 && !guard.aborted) {
          try {
            await guard.wait(command.delayMs);
          } catch {
            // Only the caller's abort rejects a wait; handled just below.
          }
          guard.settled();
        }
        // The abort may also have come from a hook, synchronously.
        if (guard.aborted) throw aborted(runner, state.attempt - 1, signal!, tel);
        continue;
      }
      guard.settled();
      if (tel !== undefined) tel.attemptEnd(state.attempt, 'success');
      if (budget !== undefined) budget.onSuccess(clock.now(), state.attempt > 1);
      return value;
    }
  } finally {
    guard.settled();
    signal?.removeEventListener('abort', guard);
  }
}
