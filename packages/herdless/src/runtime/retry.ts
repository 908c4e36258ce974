import { isAcceptedVerdict } from '../core/budget/adaptive-throttling.js';
import { classify, isTransientError } from '../core/classify/classify.js';
import { InvalidOptionError } from '../core/errors.js';
import { decide, startRetry, type HintedRetryBudget, type RetryState } from '../core/retry/decide.js';
import { AttemptTimeoutError, FailureLog } from '../core/retry/errors.js';
import type { RetryPolicy } from '../core/retry/policy.js';
import { signalOption, subscribe, unsubscribe } from './abort-link.js';
import { claimNested, newScope, retriesOnly } from './budget-scope.js';
import { nextMacrotask } from './macrotask.js';
import { FIRST_PLAIN_CONTEXT, Guard } from './retry-guard.js';
import { checkCallOptions, DEFAULT_SETTINGS, nowOf, readRetryOptions, type RetrySettings } from './retry-options.js';
import { abortReason, callTelemetry, giveUpError, reportRetry, type RetryStep } from './retry-report.js';
import type { Retrier, RetrierOptions, RetryCallOptions, RetryOperation, RetryOptions } from './retry-types.js';
import type { CallReporter } from './telemetry.js';

// The shell of one retry() call: the attempt loop. Each other concern sits in a file beside it —
// retry-options.ts (reading the options), retry-guard.ts (timers, aborts, the attempt's context),
// budget-scope.ts (nested layers sharing one budget), retry-report.ts (telemetry and hooks) — and
// the decision itself is core/retry/decide.ts, pure.

export type { RetryContext, RetryOperation, RetrierOptions, RetryOptions, RetryCallOptions, Retrier } from './retry-types.js';
export { RETRY_OBSERVER_KEYS, RETRY_POLICY_KEYS } from './retry-options.js';

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
  // The lean first attempt checks `operation` itself, for free (see firstAttempt).
  if (options === undefined) return firstAttempt(operation, DEFAULT_SETTINGS);
  if (typeof operation !== 'function') throw new InvalidOptionError('retry', 'operation', operation, 'must be a function');
  const settings = readRetryOptions(options, 'retry', true);
  return start(operation, settings, signalOption('retry', options.signal));
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
  const settings = readRetryOptions(options, 'createRetry', false);
  const retrier = <T>(operation: RetryOperation<T>, callOptions?: RetryCallOptions): Promise<T> => {
    // The lean first attempt checks `operation` itself, for free (see firstAttempt).
    // Stryker disable next-line ConditionalExpression: start() below makes the same choice; the lean path only spares a promise.
    if (callOptions === undefined && settings.lean) return firstAttempt(operation, settings);
    if (typeof operation !== 'function') throw new InvalidOptionError('createRetry', 'operation', operation, 'must be a function');
    return start(operation, settings, callOptions === undefined ? undefined : checkCallOptions(callOptions));
  };
  const policy: RetryPolicy = Object.freeze({
    maxAttempts: settings.maxAttempts,
    backoff: settings.backoff,
    throttlingBackoff: settings.throttlingBackoff,
    ignoreHints: settings.ignoreHints,
    retryable: settings.retryable,
    maxRetryAfterMs: settings.maxRetryAfterMs,
    deadlineMs: settings.deadlineMs,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    budget: settings.budget,
  });
  return Object.defineProperty(retrier, 'policy', { value: policy, enumerable: true }) as Retrier;
}

/**
 * @internal `retry()` for the HTTP adapters, with settings read once when the adapter was made (a
 * call's own `retryable` and `onRetry` set over them). `late`: for a call without a signal that may
 * come to need one — an undici request is aborted through its handler, so the signal is made only
 * once its first attempt has failed, never on the success path.
 */
export function retryWithSettings<T>(operation: RetryOperation<T>, settings: RetrySettings, signal: AbortSignal | undefined, late?: () => AbortSignal | undefined): Promise<T> {
  return signal === undefined && settings.lean ? firstAttempt(operation, settings, late) : run(operation, settings, signal, false, undefined);
}

function start<T>(operation: RetryOperation<T>, settings: RetrySettings, signal: AbortSignal | undefined): Promise<T> {
  // Stryker disable next-line ConditionalExpression: the loop runs a lean call to the same outcome; the lean first attempt only spares it promises.
  return signal === undefined && settings.lean ? firstAttempt(operation, settings) : run(operation, settings, signal, false, undefined);
}

/**
 * The loop's first attempt, written out for a call that needs nothing around it (no signal,
 * deadline, attempt timeout, budget or telemetry): chained with one `.then()` instead of entering the
 * async loop, which on success is one promise and one hop less — most of what retry() costs over a
 * bare `await operation()`. A failure enters the loop just after its first attempt.
 */
function firstAttempt<T>(operation: RetryOperation<T>, settings: RetrySettings, late?: () => AbortSignal | undefined): Promise<T> {
  let result: T | PromiseLike<T>;
  try {
    result = operation(FIRST_PLAIN_CONTEXT);
  } catch (error) {
    // Calling a non-function throws before anything runs: checked here rather than before the call,
    // where the check is not free (the call checks its target anyway). The throw is synchronous,
    // as on every other path.
    if (typeof operation !== 'function') throw new InvalidOptionError(settings.owner, 'operation', operation, 'must be a function');
    return run(operation, settings, late === undefined ? undefined : late(), true, error);
  }
  // A native promise (what an async operation returns) is chained as it is: Promise.resolve() would
  // hand back the same object after a constructor lookup, measurably dearer on this path.
  const settled = result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result);
  return settled.then(undefined, (error: unknown) => run(operation, settings, late === undefined ? undefined : late(), true, error));
}

/**
 * The attempt loop: attempt, and on a failure decide, report and wait, until a value, a give-up or
 * the caller's abort. `firstFailed`: the first attempt has already run and failed with `firstError`.
 */
async function run<T>(operation: RetryOperation<T>, settings: RetrySettings, signal: AbortSignal | undefined, firstFailed: boolean, firstError: unknown): Promise<T> {
  const tel = callTelemetry(settings);
  if (signal !== undefined && signal.aborted) throw abortReason(settings, tel, 0, signal);
  const budget = settings.budget as HintedRetryBudget | undefined;
  const throttle = settings.throttle;
  // Synchronously, before the first await: inside an enclosing layer's operation call.
  const nested = claimNested(budget);
  // Every stage (attempt or wait) runs under the guard: the timers, and the caller's abort if there
  // is a signal. One path for every call that reaches the loop: the lean first attempt already
  // spares a plain call all of this on success.
  const guard = new Guard(settings, signal);
  // Nothing can cut a plain call short, so it has no deadline to start from: the clock is read only
  // for a budget or a throttle (reading it anyway cost a 0 ms retry 7 % more instructions, valgrind).
  // Stryker disable next-line ConditionalExpression,EqualityOperator: whether the clock is read when nothing can cut the call short (its deadline is Infinity either way): instructions, not outcomes.
  const plain = signal === undefined && settings.plain;
  let state = startRetry(settings, plain ? 0 : nowOf(settings));
  const log = new FailureLog();
  let failed = firstFailed;
  let error = firstError;
  let delegated = false;
  if (signal !== undefined) subscribe(signal, guard);
  try {
    for (;;) {
      if (!failed) {
        // 1. The attempt, held to what is left of the deadline and to attemptTimeoutMs.
        const attempt = state.attempt;
        // Stryker disable next-line ConditionalExpression: reading the clock when nothing needs the time (no deadline, budget or throttle) costs instructions, not outcomes; a throttle's reading is stated by its tests.
        const now = plain && budget === undefined && throttle === undefined ? 0 : nowOf(settings);
        // Never more than the whole deadline: a clock that stepped backwards must not ask for a longer timer.
        const left = Math.min(state.deadlineAt - now, settings.deadlineMs);
        // A late timer brought us to the deadline: start no attempt that could not run.
        if (left <= 0) throw giveUpError(settings, tel, { kind: 'give-up', reason: 'deadline' }, attempt - 1, error, log);
        const byDeadline = left <= settings.attemptTimeoutMs;
        // Adaptive throttling may refuse any attempt, the first included: it is then not sent.
        if (throttle !== undefined && !throttle.admit(now, settings.random, attempt > 1)) throw giveUpError(settings, tel, THROTTLED, attempt - 1, error, log);
        if (budget !== undefined && !(nested && attempt === 1)) budget.onAttempt(now, attempt > 1);
        if (tel !== undefined) tel.attemptStarted(attempt);
        const scope = newScope(budget);
        let value: T;
        try {
          value = await guard.attempt(operation, attempt, byDeadline ? left : settings.attemptTimeoutMs, byDeadline, scope);
        } catch (thrown) {
          failed = true;
          error = thrown;
        }
        guard.settled();
        if (!failed) {
          if (tel !== undefined) tel.attemptEnd(attempt, 'success');
          // Stryker disable next-line ConditionalExpression: without a budget or a throttle the reading below goes nowhere: one clock read more, the same outcome.
          if (budget !== undefined || throttle !== undefined) {
            // One reading of the clock for both: the answer came at one moment.
            const answeredAt = nowOf(settings);
            if (budget !== undefined && !scope!.delegated) budget.onSuccess(answeredAt, attempt > 1);
            if (throttle !== undefined) throttle.onAnswer(answeredAt, true);
          }
          return value!;
        }
        if (tel !== undefined) tel.attemptEnd(attempt, outcomeOf(guard, error), error);
        if (guard.aborted) throw abortReason(settings, tel, attempt, signal!);
        delegated = scope !== undefined && scope.delegated;
      }
      // 2. The failure: classify it, decide (core/retry/decide.ts), report.
      failed = false;
      // The deadline timer fired, so the deadline has passed even if the clock reads a hair earlier.
      const failedAt = guard.byDeadline ? Math.max(nowOf(settings), state.deadlineAt) : nowOf(settings);
      const decided = afterFailure(settings, tel, state, error, failedAt, log, delegated);
      const step = decided instanceof Promise ? await decided : decided;
      state = step.next;
      // 3. The wait; the caller's abort ends it at once.
      if (step.delayMs > 0 && !guard.aborted) {
        try {
          await guard.wait(step.delayMs);
        } catch {
          // Only the caller's abort rejects a wait; handled just below.
        }
        guard.settled();
      } else if (step.delayMs === 0 && yieldsFirst(state.attempt) && !guard.aborted) {
        // A timer-driven abort or deadline can fire in this turn (see ZERO_WAIT_YIELD_EVERY).
        await nextMacrotask();
      }
      // The abort may also have come from a hook, synchronously.
      if (guard.aborted) throw abortReason(settings, tel, state.attempt - 1, signal!);
    }
  } finally {
    guard.settled();
    // Stryker disable next-line ConditionalExpression: unsubscribe(undefined) finds no relay (a WeakMap has no undefined key) and does nothing.
    if (signal !== undefined) unsubscribe(signal, guard);
  }
}

/**
 * How an attempt that threw ended, for the telemetry: only an attempt with a timer or a signal can
 * time out or be aborted (on a plain call, an inner layer's timeout is this attempt's failure).
 */
function outcomeOf(guard: Guard, error: unknown): 'failure' | 'timeout' | 'aborted' {
  if (guard.signal === undefined && guard.settings.plain) return 'failure';
  return guard.aborted ? 'aborted' : error instanceof AttemptTimeoutError ? 'timeout' : 'failure';
}

/**
 * Classifies a failure and decides; on a give-up, reports it and throws the RetryError; on a retry,
 * asks a budget that confirms asynchronously, then reports the retry. `delegated`: a nested layer
 * with the same budget has reported this attempt's failure, so the budget hears only the retry request.
 */
function afterFailure(
  settings: RetrySettings,
  tel: CallReporter | undefined,
  state: RetryState,
  error: unknown,
  now: number,
  log: FailureLog,
  delegated: boolean,
): RetryStep | Promise<RetryStep> {
  log.add(state.attempt, error);
  const verdict = classify(error, settings.retryable, state.attempt, !settings.ignoreHints);
  if (settings.throttle !== undefined) {
    // What the backend's answer says about its load: a 404 is an accept, a 503 or pushback a rejection.
    // A transient failure the call may not retry (a 503 to a POST) is still the backend's refusal.
    // Stryker disable next-line ConditionalExpression: for a retryable verdict both branches answer false (a retryable failure is the backend's refusal).
    const accepted = verdict.kind === 'fatal' && isTransientError(error) ? false : isAcceptedVerdict(verdict);
    if (accepted !== undefined) settings.throttle.onAnswer(now, accepted);
  }
  const policy: RetryPolicy = delegated ? { ...settings, budget: retriesOnly(settings.budget!) } : settings;
  const command = decide(policy, state, verdict, now, settings.random);
  if (command.kind === 'give-up') throw giveUpError(settings, tel, command, state.attempt, error, log);
  const confirm = settings.budget?.confirmRetry;
  if (confirm !== undefined) {
    // A budget kept outside the process (herdless/redis) gives its answer asynchronously; it bounds
    // the wait itself and never rejects.
    const answer = confirm.call(settings.budget, now);
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: a true answer taken through a promise confirms the same retry, one microtask later.
    if (answer !== true) return Promise.resolve(answer).then((allowed) => confirmed(settings, tel, state, error, command, allowed, log));
  }
  return confirmed(settings, tel, state, error, command, true, log);
}

/** The end of a retry decision, once the budget (if it confirms asynchronously) has answered. */
function confirmed(settings: RetrySettings, tel: CallReporter | undefined, state: RetryState, error: unknown, step: RetryStep, allowed: boolean, log: FailureLog): RetryStep {
  if (!allowed) throw giveUpError(settings, tel, { kind: 'give-up', reason: 'budget' }, state.attempt, error, log);
  reportRetry(settings, tel, state.attempt, step, error);
  return step;
}

const THROTTLED = /* @__PURE__ */ Object.freeze({ kind: 'give-up', reason: 'throttled' } as const);

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
