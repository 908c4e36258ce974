import { InvalidOptionError } from '../core/errors.js';
import { HedgedCall } from './hedge-call.js';
import { signalOption } from './abort-link.js';
import { HEDGE_REPORT, parseHedger, type HedgeCallReport, type HedgeRunner } from './hedge-options.js';
import type { Hedger, HedgerOptions, HedgeOperation, HedgeOptions } from './hedge-types.js';

// hedge() and createHedger(): the entry points. Beside them: hedge-options.ts (reading the options,
// and what a protocol layer adds to them), hedge-call.ts (one hedged call's state machine) and
// hedge-parts.ts (its pieces), hedge-types.ts (the public shapes); the policy and its decisions are
// core/hedge/policy.ts, pure.

export type { HedgeContext, HedgeEvent, HedgeOperation, HedgeOptions, Hedger, HedgerOptions } from './hedge-types.js';
export { HEDGE_LOAD_FAILURE, HEDGE_REPORT, HEDGE_RUNTIME_KEYS, type HedgeCallReport } from './hedge-options.js';

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
  return run(operation, runner, signalOption('hedge', options.signal), (options as { [HEDGE_REPORT]?: HedgeCallReport })[HEDGE_REPORT]);
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
      signal = signalOption('createHedger', callOptions.signal);
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
