/**
 * What one failed attempt means for the call, as a value: the input of the retry state machine's
 * `decide()`. The runtime derives it from a thrown error with `classify()`; the simulator builds it
 * directly from its model server's answers.
 *
 * - `retryable`: transient; retry after the backoff's wait, or after `retryAfterMs` (a server
 *   hint, ms) when present. `timeout: true` marks a timed-out attempt, which a retry budget may
 *   charge more for (the AWS retry quota does). `throttled: true` marks a throttling answer (HTTP
 *   429, gRPC RESOURCE_EXHAUSTED): without a hint, its wait comes from the policy's
 *   `throttlingBackoff` (a larger base, as the AWS SDKs use).
 * - `fatal`: retrying cannot help (a bug, a bad request, the caller's own abort).
 * - `do-not-retry`: the failure says "don't retry" (a `RetryError` from an inner `retry()`, a
 *   {@link markDoNotRetry} mark, a malformed pushback). It counts as a failure for a retry budget.
 *
 * @example
 * ```ts
 * const verdict: Verdict = serverSaid503 ? retryAfter(1000) : FATAL; // a simulator's model server
 * ```
 */
export type Verdict =
  | { readonly kind: 'retryable'; readonly retryAfterMs?: number; readonly timeout?: boolean; readonly throttled?: boolean }
  | { readonly kind: 'fatal' }
  | { readonly kind: 'do-not-retry' }
  | { readonly kind: 'circuit-open' };

/**
 * The shared `retryable` verdict without a hint (allocation-free).
 * @example
 * ```ts
 * decide(policy, state, RETRYABLE, now, rng);
 * ```
 */
export const RETRYABLE: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'retryable' });
/**
 * The shared `retryable` verdict of a timed-out attempt (allocation-free).
 * @example
 * ```ts
 * decide(policy, state, RETRYABLE_TIMEOUT, now, rng); // the budget hears onFailure(now, true)
 * ```
 */
export const RETRYABLE_TIMEOUT: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'retryable', timeout: true });
/**
 * The shared `retryable` verdict of a throttling answer without a hint (allocation-free).
 * @example
 * ```ts
 * decide(policy, state, RETRYABLE_THROTTLED, now, rng); // waits policy.throttlingBackoff's delay
 * ```
 */
export const RETRYABLE_THROTTLED: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'retryable', throttled: true });
/**
 * The shared `fatal` verdict.
 * @example
 * ```ts
 * decide(policy, state, FATAL, now, rng); // { kind: 'give-up', reason: 'fatal' }
 * ```
 */
export const FATAL: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'fatal' });
/**
 * The shared `do-not-retry` verdict.
 * @example
 * ```ts
 * decide(policy, state, DO_NOT_RETRY_VERDICT, now, rng); // { kind: 'give-up', reason: 'do-not-retry' }
 * ```
 */
export const DO_NOT_RETRY_VERDICT: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'do-not-retry' });

/**
 * The circuit breaker refused the attempt (a `CircuitOpenError`): final, with no backoff sleep and
 * not reported to a retry budget — the dependency was not called, so there is no failure to count.
 * Rule: retry outside the breaker and never retry its own rejections (the article; Amazon Builders' Library).
 */
export const CIRCUIT_OPEN_VERDICT: Verdict = /* @__PURE__ */ Object.freeze({ kind: 'circuit-open' });

/**
 * A `retryable` verdict with a server hint: wait exactly `retryAfterMs` ms (never less) before the
 * next attempt, instead of the backoff's delay. Source: gRFC A6 (pushback), RFC 9110 §10.2.3.
 *
 * @example
 * ```ts
 * retryAfter(1500); // { kind: 'retryable', retryAfterMs: 1500 }
 * ```
 */
export function retryAfter(retryAfterMs: number): Verdict {
  return { kind: 'retryable', retryAfterMs };
}
