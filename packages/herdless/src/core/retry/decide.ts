import { checkedDelay } from '../backoff/backoff.js';
import { isDoNotRetry } from '../classify/hints.js';
import { describe } from '../errors.js';
import type { RetryBudget } from '../budget/budget.js';
import type { Verdict } from '../classify/verdict.js';
import type { Rng } from '../rng.js';
import { formatMs, type RetryErrorReason } from './errors.js';
import type { RetryPolicy } from './policy.js';

/**
 * The per-call retry state: a small immutable value, one per call, never shared.
 * `decide()` returns the next one inside a `retry` command.
 *
 * @example
 * ```ts
 * let state: RetryState = startRetry(policy, now);
 * ```
 */
export interface RetryState {
  /** The attempt that is running or has just failed, from 1. */
  readonly attempt: number;
  /**
   * The backoff's last wait in ms (0 before the first, and after a server hint, which restarts the
   * backoff); decorrelated jitter reads it.
   */
  readonly previousDelayMs: number;
  /**
   * The attempt whose failure last carried a server hint (`retryAfterMs`), after which the backoff
   * starts again from its first step; 0 (or absent) when there was none. The backoff's retry number
   * is `attempt − backoffRestartedAt`.
   */
  readonly backoffRestartedAt?: number;
  /** When the call's deadline passes, on the driver's clock (ms); `Infinity` without `deadlineMs`. */
  readonly deadlineAt: number;
}

/**
 * What the driver must do after a failed attempt:
 * - `retry`: wait `delayMs` ms (0: start at once, no timer), then start attempt `next.attempt`
 *   with state `next`. `delaySource` says where the wait came from: `'server-hint'` (the failure's
 *   `retryAfterMs`) or `'backoff'`.
 * - `give-up`: stop with `reason`. For `'deadline'` and `'hint-too-long'`, `delayMs` is the wait that
 *   was refused and `limitMs` what it exceeded (`maxRetryAfterMs`, or the ms left before the
 *   deadline).
 *
 * @example
 * ```ts
 * const command: RetryCommand = decide(policy, state, verdict, now, rng);
 * if (command.kind === 'retry') schedule(command.delayMs, command.next);
 * else finish(command.reason);
 * ```
 */
export type RetryCommand =
  | { readonly kind: 'retry'; readonly delayMs: number; readonly delaySource: 'backoff' | 'server-hint'; readonly next: RetryState }
  | { readonly kind: 'give-up'; readonly reason: RetryErrorReason; readonly delayMs?: number; readonly limitMs?: number };

/**
 * The budget protocol with its optional second arguments (`onSuccess(now, isRetry)`,
 * `onFailure(now, isTimeout)`, read by the AWS retry quota); budgets that ignore them are fine.
 */
/** @internal */
export type HintedRetryBudget = RetryBudget & {
  onSuccess(now: number, isRetry?: boolean): void;
  onFailure(now: number, isTimeout?: boolean): void;
};

type GiveUp = Extract<RetryCommand, { kind: 'give-up' }>;

const giveUp = (reason: RetryErrorReason): GiveUp => Object.freeze({ kind: 'give-up', reason });
const EXHAUSTED = /* @__PURE__ */ giveUp('exhausted');
const FATAL = /* @__PURE__ */ giveUp('fatal');
const DO_NOT_RETRY = /* @__PURE__ */ giveUp('do-not-retry');
const DEADLINE = /* @__PURE__ */ giveUp('deadline');
const BUDGET = /* @__PURE__ */ giveUp('budget');
const CIRCUIT_OPEN = /* @__PURE__ */ giveUp('circuit-open');

/**
 * The state of a call before its first attempt, which starts at `now` (ms on the driver's clock).
 *
 * @example
 * ```ts
 * const state = startRetry(policy, clock.now()); // { attempt: 1, previousDelayMs: 0, deadlineAt: … }
 * ```
 */
export function startRetry(policy: RetryPolicy, now: number): RetryState {
  return { attempt: 1, previousDelayMs: 0, deadlineAt: now + policy.deadlineMs };
}

/**
 * The retry state machine's step: given the policy, the call's state, the failed attempt's
 * {@link Verdict}, the time `now` (ms) and an {@link Rng}, what to do next. Pure apart from the
 * policy's retry budget, which it informs (`onFailure`) and asks (`allowRetry`) — the driver calls
 * the budget's `onAttempt(now, isRetry)` and `onSuccess(now, isRetry)` itself. Checks, in order:
 *
 * 1. `fatal` → give up `'fatal'`; `circuit-open` (the breaker refused the attempt) → give up
 *    `'circuit-open'` at once, with no sleep (neither is reported to the budget);
 * 2. the budget's `onFailure(now, isTimeout)` (`isTimeout`: the verdict's `timeout`);
 * 3. `do-not-retry` → give up `'do-not-retry'`;
 * 4. `attempt ≥ maxAttempts` → give up `'exhausted'` (maxAttempts counts the first try);
 * 5. `now ≥ deadlineAt` → give up `'deadline'`;
 * 6. the wait: the hint `retryAfterMs` if any and `ignoreHints` is off (longer than
 *    `maxRetryAfterMs` → give up `'hint-too-long'`), else `backoff.delay(attempt − backoffRestartedAt,
 *    previousDelayMs, rng)` — `throttlingBackoff`'s for a `throttled` verdict — held to
 *    [0, 2^31 − 1]. A hinted wait restarts the backoff: the next unhinted wait is the backoff's first
 *    step again (gRFC A6 pushback: "the next retry attempt … uses initialBackoff");
 * 7. `now + wait ≥ deadlineAt` → give up (`'hint-too-long'` for a hint, else `'deadline'`): a wait
 *    that would cross the deadline is not started;
 * 8. the budget's `allowRetry(now)` false → give up `'budget'` (asked last, so a budget that counts
 *    retries when it allows them only counts retries that happen);
 * 9. retry after the wait.
 *
 * Sources: gRFC A6 (maxAttempts includes the first try; pushback replaces the backoff and restarts
 * it; throttling),
 * RFC 9110 §10.2.3 (Retry-After).
 *
 * @example
 * ```ts
 * const policy = parseRetryPolicy({ maxAttempts: 2, backoff: constantBackoff({ delayMs: 50 }) });
 * let state = startRetry(policy, 0);
 * decide(policy, state, RETRYABLE, 10, systemRandom); // { kind: 'retry', delayMs: 50, delaySource: 'backoff', next: { attempt: 2, … } }
 * ```
 */
export function decide(policy: RetryPolicy, state: RetryState, verdict: Verdict, now: number, rng: Rng): RetryCommand {
  if (verdict.kind === 'fatal') return FATAL;
  if (verdict.kind === 'circuit-open') return CIRCUIT_OPEN;
  const budget = policy.budget as HintedRetryBudget | undefined;
  // Stryker disable next-line ConditionalExpression: only a retryable verdict has a `timeout` field (a do-not-retry one reaching here has none), so the kind check only narrows the type.
  if (budget !== undefined) budget.onFailure(now, verdict.kind === 'retryable' && verdict.timeout === true);
  if (verdict.kind === 'do-not-retry') return DO_NOT_RETRY;
  if (state.attempt >= policy.maxAttempts) return EXHAUSTED;
  const deadlineAt = state.deadlineAt;
  if (now >= deadlineAt) return DEADLINE;
  const hint = policy.ignoreHints === true ? undefined : verdict.retryAfterMs;
  let delay: number;
  /** The backoff that drew the wait (none for a hint). */
  let used: RetryPolicy['backoff'] | undefined;
  if (hint !== undefined) {
    // The server's hint replaces the backoff for this wait; never retry sooner than it asked.
    if (hint > policy.maxRetryAfterMs) {
      return { kind: 'give-up', reason: 'hint-too-long', delayMs: hint, limitMs: policy.maxRetryAfterMs };
    }
    delay = hint;
  } else {
    const restartedAt = state.backoffRestartedAt;
    const retry = restartedAt === undefined ? state.attempt : state.attempt - restartedAt;
    // A throttling answer without a hint backs off from a larger base (a policy built by hand may lack one).
    const throttling = verdict.throttled === true ? policy.throttlingBackoff : undefined;
    used = throttling ?? policy.backoff;
    delay =
      throttling === undefined
        ? checkedDelay('retry', policy.backoff.delay(retry, state.previousDelayMs, rng))
        : checkedDelay('retry', throttling.delay(retry, state.previousDelayMs, rng), 'throttlingBackoff.delay()');
  }
  // Stryker disable next-line ConditionalExpression: without a deadline, now + delay (a delay ≤ 2^31 − 1) is never ≥ Infinity; the check only skips an addition.
  if (deadlineAt !== Infinity && now + delay >= deadlineAt) {
    return { kind: 'give-up', reason: hint !== undefined ? 'hint-too-long' : 'deadline', delayMs: delay, limitMs: deadlineAt - now };
  }
  if (budget !== undefined && !budget.allowRetry(now)) return BUDGET;
  if (hint !== undefined) {
    // gRFC A6: after a pushback the backoff starts over from initialBackoff (grpc-js does the same).
    return {
      kind: 'retry',
      delayMs: delay,
      delaySource: 'server-hint',
      next: { attempt: state.attempt + 1, previousDelayMs: 0, deadlineAt, backoffRestartedAt: state.attempt },
    };
  }
  const restartedAt = state.backoffRestartedAt;
  const attempt = state.attempt + 1;
  // A backoff that carries its own per-call value (decorrelated jitter V2: the total so far) gets it back.
  const previousDelayMs = carried(used!, state.previousDelayMs, delay);
  return {
    kind: 'retry',
    delayMs: delay,
    delaySource: 'backoff',
    next:
      // Stryker disable next-line ConditionalExpression: `backoffRestartedAt: undefined` reads as absent (`=== undefined` above); the branch keeps the state's shape small.
      restartedAt === undefined ? { attempt, previousDelayMs, deadlineAt } : { attempt, previousDelayMs, deadlineAt, backoffRestartedAt: restartedAt },
  };
}

/** What the next retry's `previousDelayMs` is: see {@link Backoff.carry}. */
function carried(used: RetryPolicy['backoff'], previousMs: number, delay: number): number {
  return used.carry === undefined ? delay : used.carry(previousMs, delay);
}

/**
 * A human sentence for a give-up command, used in `RetryError`'s message, e.g.
 * `all 4 attempts failed` or `the server asked to wait 120000 ms, more than maxRetryAfterMs (60000 ms)`.
 * With the failure (`error`), a `'do-not-retry'` caused by a malformed `retryAfterMs` names that
 * field and its value.
 *
 * @example
 * ```ts
 * describeGiveUp(policy, { kind: 'give-up', reason: 'exhausted' }); // 'all 3 attempts failed'
 * ```
 */
export function describeGiveUp(policy: RetryPolicy, command: Extract<RetryCommand, { kind: 'give-up' }>, error?: unknown): string {
  // Stryker disable next-line StringLiteral: the empty text is never shown: a sentence reads `wait` only for a command with delayMs.
  const wait = command.delayMs === undefined ? '' : formatMs(command.delayMs);
  // Stryker disable next-line StringLiteral: likewise for limitMs, which decide() gives with every delayMs.
  const limit = command.limitMs === undefined ? '' : formatMs(command.limitMs);
  switch (command.reason) {
    case 'exhausted':
      return `all ${policy.maxAttempts} attempt${policy.maxAttempts === 1 ? '' : 's'} failed (maxAttempts ${policy.maxAttempts})`;
    case 'fatal':
      return 'the failure is not retryable';
    case 'do-not-retry':
      // Not the mark, but a malformed hint (gRFC A6: don't retry): name it, with its value.
      if (!isDoNotRetry(error) && typeof error === 'object' && error !== null && 'retryAfterMs' in error) {
        return `the failure's retryAfterMs is not a number of ms ≥ 0 (got ${describe((error as { retryAfterMs: unknown }).retryAfterMs)}): a malformed hint means "do not retry" (gRFC A6)`;
      }
      return 'the failure says not to retry';
    case 'deadline':
      return command.delayMs === undefined
        ? `the deadline (deadlineMs ${policy.deadlineMs}) passed`
        : `the next wait (${wait} ms) would cross the deadline (${limit} ms left)`;
    case 'hint-too-long':
      return command.delayMs! > policy.maxRetryAfterMs
        ? `the server asked to wait ${wait} ms, more than maxRetryAfterMs (${limit} ms)`
        : `the server asked to wait ${wait} ms, more than the ${limit} ms left before the deadline`;
    case 'budget':
      return `the retry budget${policy.budget ? ` "${policy.budget.name}"` : ''} refused the retry`;
    case 'throttled':
      return 'adaptive throttling rejected the attempt locally (the backend has been refusing requests)';
    case 'circuit-open':
      return 'the circuit is open';
  }
}
