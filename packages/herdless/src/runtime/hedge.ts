import { isAcceptedVerdict, type AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import { classify, isTransientError } from '../core/classify/classify.js';
import { HerdlessError, InvalidOptionError } from '../core/errors.js';
import { hedgeAfterFailure, hedgeDelay, HEDGE_POLICY_KEYS, defaultHedgePolicy, readHedgePolicyOption, type HedgePolicy, type HedgePolicyOptions } from '../core/hedge/policy.js';
import { FailureLog, HedgeError, type GiveUpReason } from '../core/retry/errors.js';
import { checkedRng, type Rng } from '../core/rng.js';
import { checkedNow } from '../core/time.js';
import { unknownOption } from '../core/validate.js';
import { subscribe, unsubscribe } from './abort-link.js';
import { callHook, type GiveUpEvent, type HookName } from './hooks.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { systemRandom } from './system-random.js';
import { CallTelemetry, telemetryOption, type AttemptContext, type TelemetryCall, type TelemetryObserver } from './telemetry.js';

/**
 * What each attempt of a hedged call receives.
 * @example
 * ```ts
 * hedge(({ attempt, signal }: HedgeContext) => fetch(url, { signal, headers: { 'x-attempt': String(attempt) } }), { delayMs: 50 });
 * ```
 */
export interface HedgeContext {
  /** This attempt's number, from 1 (the first try); 2 and up are hedges. */
  readonly attempt: number;
  /**
   * Aborts when another attempt wins (reason: a {@link HerdlessError} with code
   * `ERR_HERDLESS_HEDGE_LOST`), when another attempt fails fatally (the same), or when the caller's
   * `signal` aborts (reason: the caller's reason). Pass it on to `fetch()` and the like: that is how
   * the losers are cancelled.
   */
  readonly signal: AbortSignal;
}

/**
 * The function a hedged call runs, once per attempt; several may run at once, so it must be
 * idempotent (a read, or a write with an idempotency key).
 * @example
 * ```ts
 * const op: HedgeOperation<Response> = ({ signal }) => fetch(url, { signal });
 * ```
 */
export type HedgeOperation<T> = (context: HedgeContext) => T | PromiseLike<T>;

/**
 * A hedge was sent (the `onHedge` hook).
 * @example
 * ```ts
 * onHedge: ({ attempt, trigger }: HedgeEvent) => log.debug(`hedge ${attempt} (${trigger})`);
 * ```
 */
export interface HedgeEvent {
  /** The hedge's attempt number, from 2. */
  readonly attempt: number;
  /** `'delay'`: the attempts in flight had not answered after the hedge delay; `'failure'`: an attempt failed with a non-fatal failure. */
  readonly trigger: 'delay' | 'failure';
  /** When it was sent, in ms after the call's start. */
  readonly afterMs: number;
}

/**
 * Options of {@link createHedger}: the hedging policy ({@link HedgePolicyOptions}) plus the runtime's ports and hooks.
 * @example
 * ```ts
 * const options: HedgerOptions = { maxAttempts: 3, delayMs: 40, budget: retryRatioBudget({ ratio: 0.1 }) };
 * ```
 */
export interface HedgerOptions extends HedgePolicyOptions {
  /**
   * Client-side adaptive throttling shared by many calls (`adaptiveThrottling()`, the SRE book's
   * "Handling Overload"), asked before *every* attempt, as `retry()` asks it: before the first
   * (a refusal ends the call unsent: a {@link HedgeError} with reason `'throttled'`, 0 attempts,
   * no `cause`) and before each hedge (a refused hedge is not sent, and no more follow; the attempts
   * in flight go on, and if they all fail the call gives up with `'throttled'`). Each answer is
   * reported to it: a success, or a failure that is not about load (a 404), as accepted; a
   * non-fatal failure (503, 429, a timeout), a transient failure `retryable` calls fatal, or
   * "don't retry" pushback as rejected. Losers aborted by the winner report nothing (no answer came).
   * Default: none.
   */
  throttle?: AttemptThrottle | undefined;
  /** The randomness `throttle` draws from. Default `systemRandom` (`Math.random`); pass a seeded `Rng` (`new PyRandom(seed)`) in tests. */
  random?: Rng | undefined;
  /** The clock and timers. Default `systemScheduler`; pass a `ManualClock` in tests. */
  clock?: Scheduler | undefined;
  /** `true` unrefs the hedge timer, so a pending hedge does not keep a Node.js process alive. Default false. */
  unref?: boolean | undefined;
  /** Called when a hedge is sent. An observer: never awaited; its failures go to `onHookError`. */
  onHedge?: ((event: HedgeEvent) => unknown) | undefined;
  /** Called once when the call ends without a result, just before it rejects. An observer, as `onHedge`. */
  onGiveUp?: ((event: GiveUpEvent) => unknown) | undefined;
  /** Receives a hook's failure. Default: a process warning `HERDLESS_HOOK_FAILED`. */
  onHookError?: ((error: unknown, hook: HookName) => void) | undefined;
  /**
   * Receives the call's events (layer `'hedge'`): each attempt's start and end (a loser's outcome is
   * `'aborted'`), each hedge (`type: 'hedge'`), a budget's refusal of a hedge, a throttle's
   * rejection of an attempt (`throttle-rejection`), the give-up.
   */
  telemetry?: TelemetryObserver | undefined;
}

/**
 * Options of {@link hedge}: everything {@link createHedger} takes, plus the call's `signal`.
 * @example
 * ```ts
 * const options: HedgeOptions = { delayMs: 40, signal: AbortSignal.timeout(2000) };
 * ```
 */
export interface HedgeOptions extends HedgerOptions {
  /** Aborting it ends the call at once: every attempt in flight is aborted, and the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/**
 * A hedging policy bound to the runtime, made once by {@link createHedger}: call it like `hedge()`.
 * @example
 * ```ts
 * const hedged: Hedger = createHedger({ delayMs: latencyPercentile() });
 * const value = await hedged(({ signal }) => read(key, signal), { signal });
 * ```
 */
export interface Hedger {
  <T>(operation: HedgeOperation<T>, options?: { signal?: AbortSignal | undefined }): Promise<T>;
  /** The normalised policy. */
  readonly policy: HedgePolicy;
}

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

/** @internal An operation of a protocol layer: it also receives the attempt's trace context, to carry in its request. */
type ReportedOperation<T> = (context: HedgeContext, trace: AttemptContext | undefined) => T | PromiseLike<T>;

/** The abort reason of an attempt that another one beat (or that a fatal failure elsewhere ended). */
const HEDGE_LOST = 'ERR_HERDLESS_HEDGE_LOST';

class HedgeRunner {
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

/** @internal The option names of {@link createHedger} beyond the policy's (`HEDGE_POLICY_KEYS`): its ports, hooks and throttle. */
export const HEDGE_RUNTIME_KEYS: readonly string[] = ['throttle', 'random', 'clock', 'unref', 'onHedge', 'onGiveUp', 'onHookError', 'telemetry'];

function functionOption<F>(owner: string, field: string, value: unknown): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value as F | undefined;
}

function parseHedger(options: HedgeOptions, owner: string, perCall: boolean): HedgeRunner {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const runner = new HedgeRunner(owner);
  for (const key in options) {
    const value: unknown = (options as unknown as Record<string, unknown>)[key];
    if (readHedgePolicyOption(owner, runner.policy, key, value)) continue;
    switch (key) {
      case 'clock': {
        if (value === undefined) break;
        const s = value as Scheduler;
        if (typeof s !== 'object' || s === null || typeof s.now !== 'function' || typeof s.setTimeout !== 'function' || typeof s.clearTimeout !== 'function') {
          throw new InvalidOptionError(owner, key, value, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
        }
        runner.clock = s;
        break;
      }
      case 'throttle':
        if (value !== undefined && (typeof value !== 'object' || value === null || typeof (value as AttemptThrottle).admit !== 'function' || typeof (value as AttemptThrottle).onAnswer !== 'function')) {
          throw new InvalidOptionError(owner, key, value, 'must be an AttemptThrottle (admit, onAnswer), e.g. adaptiveThrottling()');
        }
        runner.throttle = value as AttemptThrottle | undefined;
        break;
      case 'random':
        if (value === undefined) break;
        if (typeof value !== 'object' || value === null || typeof (value as Rng).random !== 'function') throw new InvalidOptionError(owner, key, value, 'must be an Rng ({ random(): number })');
        // Herdless's own source is known to be good; any other is checked draw by draw.
        runner.random = value === systemRandom ? systemRandom : checkedRng(value as Rng, owner, key);
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

function checkSignal(owner: string, signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (typeof signal !== 'object' || signal === null || typeof (signal as AbortSignal).addEventListener !== 'function' || typeof (signal as AbortSignal).aborted !== 'boolean') {
    throw new InvalidOptionError(owner, 'signal', signal, 'must be an AbortSignal');
  }
  return signal as AbortSignal;
}

/**
 * Runs an idempotent `operation` hedged (gRFC A6 "hedgingPolicy"; "The Tail at Scale", Dean and
 * Barroso 2013): the first attempt now, then — while no attempt has succeeded — one more attempt
 * every `delayMs` ms, up to `maxAttempts` in all, several in flight at once. The first success wins
 * and every other attempt is aborted through its `signal`. A non-fatal failure (a transient one, or
 * what `retryable` accepts) sends the next hedge at once, or after the server's hint (A6 pushback);
 * a fatal one ends the call and aborts the rest; a "do not retry" mark, an open circuit or a hint
 * over `maxRetryAfterMs` stops further hedges while the attempts in flight finish.
 *
 * With a `budget`, every hedge beyond the first attempt must be admitted by it (`allowRetry`), and
 * the call reports to it as `retry()` does — each send (`onAttempt`, hedges as retries), each
 * non-fatal failure (`onFailure`), the winner (`onSuccess`); aborted losers report nothing. This is
 * A6's rule that hedged attempts count against `retryThrottling`, and what keeps hedging from
 * multiplying the load of a slow server: a `retryRatioBudget({ ratio: 0.1 })` holds the extra
 * attempts to 10% of the calls. A refused hedge is not a failure: the call waits for the attempts in
 * flight.
 *
 * With a `throttle` (`adaptiveThrottling()`, the SRE book's client-side throttling), every attempt
 * — the first included — is asked about before it is sent, as `retry()` asks: a refused first try
 * ends the call unsent (reason `'throttled'`), a refused hedge is not sent and stops hedging while
 * the attempts in flight go on. The winner and each answered failure are reported to it (accepted,
 * or rejected for a failure about load); aborted losers report nothing.
 *
 * Composition: hedging answers slowness and retries answer failures, and A6 gives a method one or
 * the other. Use `hedge()` *instead of* `retry()` for an operation; it already retries non-fatal
 * failures at once. If layered anyway, neither multiplies the other: the give-up error either one
 * rejects with carries the "do not retry" mark, so `retry(() => hedge(op))` makes one hedged call, and in
 * `hedge(() => retry(op))` an inner give-up stops further hedges. Put a circuit breaker inside, per
 * attempt (`hedge(() => breaker.execute(op))`): each hedge then counts with the breaker, and an open
 * circuit (`CircuitOpenError`) stops hedging.
 *
 * Outcome: resolves with the first success; rejects with a {@link HedgeError} (a `RetryError`, code `ERR_HERDLESS_HEDGE`; `reason` `'fatal'`,
 * `'exhausted'`, `'budget'`, `'throttled'`, `'do-not-retry'`, `'circuit-open'` or `'hint-too-long'`; `attempts`
 * and `hedges` sent; the last failure as `cause`) when every attempt failed; rejects with `signal.reason` when the
 * caller aborts. It leaves no timer and no listener behind.
 *
 * @param operation called once per attempt with `{ attempt, signal }`; must be idempotent.
 * @param options see {@link HedgeOptions}; `delayMs` is required.
 * @throws InvalidOptionError (synchronously) for an `operation` that is not a function or an invalid option.
 * @example
 * ```ts
 * const body = await hedge(({ signal }) => fetch(url, { signal }).then((r) => r.text()), {
 *   maxAttempts: 2,
 *   delayMs: 50,
 *   budget: retryRatioBudget({ ratio: 0.1 }),
 * });
 * ```
 */
export function hedge<T>(operation: HedgeOperation<T>, options: HedgeOptions): Promise<T> {
  if (typeof operation !== 'function') throw new InvalidOptionError('hedge', 'operation', operation, 'must be a function');
  const runner = parseHedger(options, 'hedge', true);
  return run(operation, runner, checkSignal('hedge', options.signal), (options as { [HEDGE_REPORT]?: HedgeCallReport })[HEDGE_REPORT]);
}

/**
 * Validates the options once and returns a {@link Hedger}, called like `hedge()` with an optional
 * per-call `{ signal }`. Use it to share one policy, one budget and one {@link latencyPercentile}
 * between calls. Semantics are those of {@link hedge}.
 *
 * @throws InvalidOptionError for an invalid option (or a `signal`, which is per call).
 * @example
 * ```ts
 * const hedged = createHedger({ maxAttempts: 2, delayMs: latencyPercentile({ percentile: 95 }), budget: retryRatioBudget({ ratio: 0.05 }) });
 * const user = await hedged(({ signal }) => getUser(id, { signal }));
 * ```
 */
export function createHedger(options: HedgerOptions): Hedger {
  const runner = parseHedger(options, 'createHedger', false);
  const hedger = <T>(operation: HedgeOperation<T>, callOptions?: { signal?: AbortSignal | undefined }): Promise<T> => {
    if (typeof operation !== 'function') throw new InvalidOptionError('createHedger', 'operation', operation, 'must be a function');
    let signal: AbortSignal | undefined;
    let report: HedgeCallReport | undefined;
    if (callOptions !== undefined) {
      if (typeof callOptions !== 'object' || callOptions === null) {
        throw new InvalidOptionError('createHedger', 'callOptions', callOptions, 'must be an object: the per-call options ({ signal })');
      }
      for (const key in callOptions) {
        if (key !== 'signal' && (callOptions as Record<string, unknown>)[key] !== undefined) {
          throw new InvalidOptionError('createHedger', key, (callOptions as Record<string, unknown>)[key], 'is not a per-call option (only signal is)');
        }
      }
      signal = checkSignal('createHedger', callOptions.signal);
      report = (callOptions as { [HEDGE_REPORT]?: HedgeCallReport })[HEDGE_REPORT];
    }
    return run(operation, runner, signal, report);
  };
  return Object.defineProperty(hedger, 'policy', { value: runner.policy, enumerable: true }) as Hedger;
}

function run<T>(operation: HedgeOperation<T>, runner: HedgeRunner, signal: AbortSignal | undefined, report: HedgeCallReport | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    new HedgedCall(operation, runner, signal, resolve, reject, report).start();
  });
}

/** One attempt in flight. */
class Attempt {
  readonly controller = new AbortController();
  ended = false;
  constructor(
    readonly number: number,
    readonly startedAt: number,
  ) {}
}

/**
 * One hedged call: a small event-driven state machine (attempts in flight, the hedge timer, the
 * caller's signal), settled exactly once. Every transition runs synchronously from a timer, an
 * attempt's settlement or the abort, so no two interleave.
 */
class HedgedCall<T> {
  readonly #attempts: Attempt[] = [];
  readonly #log = new FailureLog();
  readonly #tel: CallTelemetry | undefined;
  readonly #startedAt: number;
  #inFlight = 0;
  #timer: unknown;
  #hasTimer = false;
  #settled = false;
  /** Why no more hedges may be sent (undefined: more may be). */
  #stopped: GiveUpReason | undefined;
  #lastError: unknown;
  /** A hedge is waiting for an asynchronous budget's answer. */
  #confirming = false;

  constructor(
    readonly operation: HedgeOperation<T>,
    readonly runner: HedgeRunner,
    readonly signal: AbortSignal | undefined,
    readonly resolve: (value: T) => void,
    readonly reject: (reason: unknown) => void,
    readonly report: HedgeCallReport | undefined,
  ) {
    this.#tel = runner.telemetry === undefined ? undefined : new CallTelemetry(runner.telemetry, report?.call ?? { layer: 'hedge' }, runner.clock, runner.onHookError);
    this.#startedAt = this.#now();
  }

  #now(): number {
    return checkedNow(this.runner.clock, this.runner.owner);
  }

  start(): void {
    const signal = this.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.#settled = true;
        this.#reportGiveUp('aborted', 0, signal.reason);
        this.reject(signal.reason);
        return;
      }
      subscribe(signal, this);
    }
    if (this.#admitted(1)) this.#send();
  }

  /**
   * Asks the throttle (if any) whether attempt `number` may be sent. A refusal is reported and
   * stops hedging; with nothing in flight (a first try, or a hedge after the last failure) the call
   * gives up with reason `'throttled'`.
   */
  #admitted(number: number): boolean {
    const throttle = this.runner.throttle;
    if (throttle === undefined) return true;
    let admitted: boolean;
    try {
      admitted = throttle.admit(this.#now(), this.runner.random, number > 1);
    } catch (error) {
      // A throttle that throws (or an Rng drawing outside [0, 1)): the call ends with what it threw —
      // from a hedge timer too, where a throw would otherwise escape as an uncaught exception.
      this.#endWith(error);
      return false;
    }
    if (admitted) return true;
    this.#tel?.throttleRejection(throttle, number);
    this.#stop('throttled');
    return false;
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    if (this.#settled) return;
    const reason: unknown = this.signal!.reason;
    this.#settle();
    this.#abortAll(reason, 'aborted');
    this.#reportGiveUp('aborted', this.#attempts.length, reason);
    this.reject(reason);
  }

  #send(): void {
    const policy = this.runner.policy;
    const attempt = new Attempt(this.#attempts.length + 1, this.#now());
    this.#attempts.push(attempt);
    this.#inFlight++;
    policy.budget?.onAttempt(attempt.startedAt, attempt.number > 1);
    const trace = this.#tel?.attemptStart(attempt.number);
    let result: T | PromiseLike<T>;
    try {
      result = (this.operation as ReportedOperation<T>)({ attempt: attempt.number, signal: attempt.controller.signal }, trace);
    } catch (error) {
      result = Promise.reject(error);
    }
    // A settlement after the call ended lands here and is ignored (handled: never unhandled).
    Promise.resolve(result).then(
      (value) => this.#succeeded(attempt, value),
      (error: unknown) => this.#failed(attempt, error),
    );
    if (!this.#settled && attempt.number < policy.maxAttempts && this.#stopped === undefined) this.#arm(hedgeDelay(policy), 'delay');
  }

  /** Sets the hedge timer (replacing any): the next hedge goes `ms` ms from now. */
  #arm(ms: number, trigger: 'delay' | 'failure'): void {
    this.#clearTimer();
    this.#timer = this.runner.clock.setTimeout(() => {
      this.#hasTimer = false;
      this.#hedge(trigger);
    }, ms);
    this.#hasTimer = true;
    if (this.runner.unref) {
      const handle = this.#timer as { unref?: () => unknown } | null;
      if (typeof handle === 'object' && handle !== null) handle.unref?.();
    }
  }

  #clearTimer(): void {
    if (!this.#hasTimer) return;
    this.#hasTimer = false;
    this.runner.clock.clearTimeout(this.#timer);
  }

  /** Time for a hedge: ask the budget, then send (or stop, and end the call if nothing is in flight). */
  #hedge(trigger: 'delay' | 'failure'): void {
    if (this.#settled || this.#stopped !== undefined || this.#confirming) return;
    const policy = this.runner.policy;
    if (this.#attempts.length >= policy.maxAttempts) return;
    // This runs from a timer: a budget (or an operation's synchronous setup) that throws here would
    // escape as an uncaught exception and leave the call pending, so the call ends with what it threw.
    try {
      const budget = policy.budget;
      if (budget !== undefined) {
        const now = this.#now();
        if (!budget.allowRetry(now)) return this.#refused();
        if (budget.confirmRetry !== undefined) {
          // A budget kept outside the process answers asynchronously; it bounds its wait.
          const answer = budget.confirmRetry(now);
          if (answer !== true) {
            this.#confirming = true;
            Promise.resolve(answer).then(
              (allowed) => {
                this.#confirming = false;
                if (this.#settled || this.#stopped !== undefined) return;
                try {
                  if (allowed) this.#sendHedge(trigger);
                  else this.#refused();
                } catch (error) {
                  this.#endWith(error);
                }
              },
              // A custom budget whose answer rejects: the call ends with its reason, never unhandled.
              (error: unknown) => {
                this.#confirming = false;
                if (!this.#settled) this.#endWith(error);
              },
            );
            return;
          }
        }
      }
      this.#sendHedge(trigger);
    } catch (error) {
      if (!this.#settled) this.#endWith(error);
    }
  }

  #sendHedge(trigger: 'delay' | 'failure'): void {
    const attempt = this.#attempts.length + 1;
    if (!this.#admitted(attempt)) return;
    const afterMs = Math.max(0, this.#now() - this.#startedAt);
    this.#tel?.hedge(attempt, trigger, afterMs);
    callHook(this.runner.onHedge, { attempt, trigger, afterMs }, 'onHedge', this.runner.onHookError);
    if (this.#settled) return; // the hook may have aborted the call
    this.#send();
  }

  #refused(): void {
    const budget = this.runner.policy.budget!;
    this.#tel?.budgetRefusal(budget, this.#attempts.length);
    this.#stop('budget');
  }

  /** No more hedges; if nothing is in flight, the call gives up now. */
  #stop(reason: GiveUpReason): void {
    if (this.#stopped === undefined) this.#stopped = reason;
    this.#clearTimer();
    if (this.#inFlight === 0) this.#giveUp(this.#stopped);
  }

  #succeeded(attempt: Attempt, value: T): void {
    if (attempt.ended) return;
    attempt.ended = true;
    this.#inFlight--;
    if (this.#settled) return;
    const now = this.#now();
    this.#settle();
    this.#tel?.attemptEnd(attempt.number, 'success', undefined, this.report?.status(value));
    this.runner.policy.budget?.onSuccess(now, attempt.number > 1);
    this.runner.throttle?.onAnswer(now, true);
    const delay = this.runner.policy.delayMs;
    // The first attempt's latency, or — when a hedge beat it — its age now, a lower bound: recording
    // only winners' latencies would let the percentile fall as hedging hides the tail, and hedge ever more.
    if (typeof delay !== 'number') delay.record(now - this.#attempts[0]!.startedAt);
    this.#abortAll(lost(), 'aborted');
    this.resolve(value);
  }

  #failed(attempt: Attempt, error: unknown): void {
    if (attempt.ended) return;
    attempt.ended = true;
    this.#inFlight--;
    if (this.#settled) return;
    const runner = this.runner;
    const policy = runner.policy;
    this.#tel?.attemptEnd(attempt.number, 'failure', error, this.report?.status(error));
    this.#log.add(attempt.number, error);
    this.#lastError = error;
    let verdict;
    try {
      verdict = classify(error, policy.retryable, attempt.number, !policy.ignoreHints);
    } catch (overrideError) {
      // A throwing `retryable` override: the call ends with what it threw, as retry() does.
      this.#endWith(overrideError);
      return;
    }
    const throttle = runner.throttle;
    if (throttle !== undefined) {
      // What the backend's answer says about its load (as retry() reads it): a 404 is an accept; a
      // non-fatal failure, pushback, or a transient failure the call does not hedge on is a refusal.
      const accepted = verdict.kind === 'fatal' && (isTransientError(error) || runner.loadFailure?.(error) === true) ? false : isAcceptedVerdict(verdict);
      if (accepted !== undefined) throttle.onAnswer(this.#now(), accepted);
    }
    const step = hedgeAfterFailure(policy, verdict);
    if (step.budgetFailure) policy.budget?.onFailure(this.#now(), verdict.kind === 'retryable' && verdict.timeout === true);
    switch (step.kind) {
      case 'fatal':
        this.#giveUp('fatal');
        return;
      case 'stop':
        this.#stop(step.reason);
        return;
      case 'next':
        if (this.#stopped !== undefined || this.#attempts.length >= policy.maxAttempts) {
          if (this.#inFlight === 0) this.#giveUp(this.#stopped ?? 'exhausted');
          return;
        }
        if (step.delayMs === 0) {
          this.#clearTimer();
          this.#hedge('failure');
          // The budget refused and stopped the call, or the hedge went: either way, nothing more here.
          if (!this.#settled && this.#stopped === undefined && this.#inFlight === 0 && !this.#confirming) this.#giveUp('exhausted');
        } else {
          this.#arm(step.delayMs, 'failure');
        }
    }
  }

  /** Ends the call with `error` itself (what a hook of the policy threw), aborting the attempts in flight. */
  #endWith(error: unknown): void {
    this.#settle();
    this.#abortAll(lost(), 'aborted');
    this.#reportGiveUp('fatal', this.#attempts.length, error);
    this.reject(error);
  }

  #giveUp(reason: GiveUpReason): void {
    if (this.#settled) return;
    this.#settle();
    this.#abortAll(lost(), 'aborted');
    const attempts = this.#attempts.length;
    this.#reportGiveUp(reason, attempts, this.#lastError);
    this.reject(new HedgeError(reason, attempts, this.#lastError, describe(reason, this.runner.policy, attempts), this.#log.kept, this.#log.omitted));
  }

  #settle(): void {
    this.#settled = true;
    this.#clearTimer();
    if (this.signal !== undefined) unsubscribe(this.signal, this);
  }

  /** Aborts every attempt still in flight, reporting it as `outcome`. */
  #abortAll(reason: unknown, outcome: 'aborted'): void {
    for (const attempt of this.#attempts) {
      if (attempt.ended) continue;
      attempt.ended = true;
      this.#inFlight--;
      this.#tel?.attemptEnd(attempt.number, outcome, reason);
      attempt.controller.abort(reason);
    }
  }

  #reportGiveUp(reason: GiveUpReason, attempts: number, error: unknown): void {
    // The budget's refusal was reported when it happened; the give-up itself here.
    this.#tel?.giveUp(reason, attempts, error, undefined, reason === 'aborted' ? undefined : this.report?.status(error));
    callHook(this.runner.onGiveUp, { reason, attempts, error }, 'onGiveUp', this.runner.onHookError);
  }
}

function lost(): HerdlessError {
  return new HerdlessError(HEDGE_LOST, 'hedged call: another attempt answered first, or the call ended');
}

function describe(reason: GiveUpReason, policy: HedgePolicy, attempts: number): string {
  switch (reason) {
    case 'exhausted':
      return `all ${policy.maxAttempts} hedged attempt${policy.maxAttempts === 1 ? '' : 's'} failed (maxAttempts ${policy.maxAttempts})`;
    case 'fatal':
      return 'an attempt failed with a fatal (not retryable) failure, which ends a hedged call; the attempts in flight were cancelled';
    case 'budget':
      return `the retry budget "${policy.budget?.name ?? ''}" refused the next hedge, and the attempts in flight failed`;
    case 'do-not-retry':
      return 'a failure said not to retry, so no more hedges were sent, and the attempts in flight failed';
    case 'circuit-open':
      return 'the circuit is open, so no more hedges were sent, and the attempts in flight failed';
    case 'throttled':
      return attempts === 0
        ? 'adaptive throttling rejected the call locally: no attempt was sent'
        : 'adaptive throttling rejected the next hedge locally, and the attempts in flight failed';
    case 'hint-too-long':
      return `the server asked to wait longer than maxRetryAfterMs (${policy.maxRetryAfterMs} ms) before the next hedge, and the attempts in flight failed`;
    default:
      return reason;
  }
}
