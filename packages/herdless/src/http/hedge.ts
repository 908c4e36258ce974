import { InvalidOptionError, isInvalidOptionError } from '../core/errors.js';
import { HEDGE_POLICY_KEYS } from '../core/hedge/policy.js';
import { unknownOption } from '../core/validate.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { createHedger, HEDGE_RUNTIME_KEYS, type Hedger, type HedgerOptions } from '../runtime/hedge.js';
import type { KeyedBreakers } from '../runtime/keyed-breakers.js';
import { fetchExchange, plan, type Plan } from './fetch.js';
import { isClientTransient, runHedgedExchange } from './hedged-exchange.js';
import { isHttpStatusError } from './status-error.js';
import type { RetryableInfo, RetryableOverride } from '../core/classify/classify.js';
import { parseCallOptions, parseHttpOptions, type FetchFunction, type FetchInput, type HttpCall, type HttpCallOptions, type HttpConfig, type IdempotencyKeyOption } from './options.js';

/**
 * Options of {@link withHedging}: the hedging options of `createHedger()` (`delayMs` required,
 * `maxAttempts`, `budget`, `throttle`, `random`, `retryable`, `ignoreHints`, `maxRetryAfterMs`,
 * `clock`, `unref`, `onHedge`, `onGiveUp`, `onHookError`, `telemetry`), the HTTP rules of
 * `withRetry()` that decide which requests may be sent twice and which responses are failures, and
 * its `breaker`.
 * @example
 * ```ts
 * const options: HttpHedgingOptions = { delayMs: 50, budget: retryRatioBudget({ ratio: 0.1 }) };
 * ```
 */
export interface HttpHedgingOptions extends HedgerOptions {
  /** Methods hedged without an idempotency key (compared upper-cased). Default `RETRYABLE_HTTP_METHODS` (GET, HEAD, OPTIONS, PUT, DELETE, TRACE). */
  retryMethods?: readonly string[] | undefined;
  /** Response statuses that are a failed attempt (non-fatal: the next hedge goes at once). Default 408, 429, 500, 502, 503, 504. */
  retryStatuses?: readonly number[] | undefined;
  /** For other methods: add an `Idempotency-Key` (the same on every attempt), which makes them hedged. Default `false`. */
  idempotencyKey?: IdempotencyKeyOption | undefined;
  /** The wall clock an HTTP-date `Retry-After` is measured against, ms since the epoch. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** The header carrying the attempt number on hedges (attempt ≥ 2). Default `x-herdless-attempt`; `false` sends none. */
  attemptHeader?: string | false | undefined;
  /**
   * The dependency the requests go to, on every telemetry event (`TelemetryCall.name`,
   * `herdless.name` in `herdless/otel`). Default: the request URL's host (`api.example.com:8443`).
   * 1–128 characters, no control characters.
   */
  name?: string | undefined;
  /**
   * A circuit breaker every attempt goes through, hedges included: a `CircuitBreaker` shared by all
   * requests, or `keyedBreakers()` for one breaker per request host (`host:port` of the URL). A
   * retried status (503…) or a network failure counts as a failure, any other response as a
   * success; a loser aborted by the winner, and the caller's abort, not at all. A refused attempt is
   * not sent, and no more hedges follow (the attempts in flight go on); with nothing in flight the
   * call rejects with a `HedgeError`, reason `'circuit-open'`, whose `cause` is the
   * `CircuitOpenError`. A request sent once (a POST without a key) goes through it too. Default: none.
   */
  breaker?: CircuitBreaker | KeyedBreakers | undefined;
}

/**
 * A `fetch` that hedges: the signature of `fetch`, plus an optional per-request `{ idempotencyKey }`.
 * @example
 * ```ts
 * const hedgedFetch: HedgingFetch = withHedging(fetch, { delayMs: 50 });
 * ```
 */
export type HedgingFetch = (input: FetchInput, init?: RequestInit, options?: { idempotencyKey?: IdempotencyKeyOption | undefined }) => Promise<Response>;

const HTTP_KEYS: readonly string[] = ['retryMethods', 'retryStatuses', 'idempotencyKey', 'now', 'attemptHeader', 'name', 'breaker'];
/** Every option of the hedging adapters: the hedger's, then the HTTP rules. */
const OPTION_NAMES: readonly string[] = [...HEDGE_POLICY_KEYS, ...HEDGE_RUNTIME_KEYS, ...HTTP_KEYS];

/**
 * Wraps `fetch` so that each idempotent request is hedged by `hedge()`'s rules: when the response
 * has not arrived `delayMs` after an attempt, another attempt of the same request is sent, up to
 * `maxAttempts`; the first acceptable response wins, every other attempt is aborted, and the body
 * of any other response that arrives is cancelled, so its connection is freed.
 *
 * - **Which requests**: only those that may be sent twice, as `withRetry()` decides: methods in
 *   `retryMethods` (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), or any method with an
 *   `Idempotency-Key` header (the request's own, or one `idempotencyKey` generates, the same on every
 *   attempt). A `POST` without a key, and a request whose body is a stream, is sent once, unhedged.
 * - **Responses**: a status in `retryStatuses` is a failed attempt (non-fatal: the next hedge goes at
 *   once, or after its `Retry-After`); `X-Herdless-Retry: no` stops further hedges. Any other
 *   response is the answer. When every attempt ends with a retried status, the call **resolves with
 *   the last response**, and `retryInfo(response)` says why (as `withRetry()`).
 * - **Budget**: every hedge beyond the first is admitted by `budget` (gRFC A6: hedged attempts count
 *   against retry throttling).
 * - **Throttle**: with `throttle` (`adaptiveThrottling()`), every attempt is asked first, the first
 *   included: a refused first try rejects with a `HedgeError` (reason `'throttled'`) unsent; a
 *   refused hedge is not sent. A retried status is the server's refusal, any other response an accept.
 * - **Breaker**: with `breaker`, every attempt goes through it; an open circuit stops further hedges.
 * - **Abort**: the request's `signal` aborts every attempt; the promise rejects with its reason.
 *
 * Use it instead of `withRetry()` for latency-sensitive idempotent reads; see docs/hedging.md.
 *
 * @throws InvalidOptionError for a `fetchFn` that is not a function or an invalid option.
 * @example
 * ```ts
 * const get = withHedging(fetch, { delayMs: latencyPercentile(), budget: retryRatioBudget({ ratio: 0.1 }) });
 * const res = await get('https://api.example.com/items/42');
 * ```
 */
export function withHedging(fetchFn: FetchFunction, options: HttpHedgingOptions): HedgingFetch {
  const owner = 'withHedging';
  if (typeof fetchFn !== 'function') throw new InvalidOptionError(owner, 'fetch', fetchFn, 'must be a function (e.g. fetch)');
  const { config, hedger } = parseHttpHedgingOptions(options, owner);
  return (input, init, callOptions) => {
    try {
      return run(fetchFn, config, hedger, plan(input, init, hedgeCall(config, callOptions, owner), owner), owner);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * One hedged request's options, checked: only `idempotencyKey` (the attempts, their timing and the
 * budget are the hedger's, fixed when it was made; a body must be one that can be sent again).
 */
function hedgeCall(config: HttpConfig, options: unknown, owner: string): HttpCall {
  if (options !== undefined && typeof options === 'object' && options !== null && !Array.isArray(options)) {
    for (const key in options) {
      const value = (options as Record<string, unknown>)[key];
      if (key === 'bodyFactory') throw new InvalidOptionError(owner, 'bodyFactory', value, 'is not supported by the hedging fetch: hedge requests whose body can be sent again');
      if (key !== 'idempotencyKey') throw new InvalidOptionError(owner, key, value, 'is not a per-request option of the hedging fetch (idempotencyKey)');
    }
  }
  // Stryker disable next-line BooleanLiteral: bodyFactory was refused just above, so whether parseCallOptions would take it does not matter
  return parseCallOptions(config, options as HttpCallOptions | undefined, owner, 'options', false);
}

/**
 * @internal The HTTP hedging options, checked: the HTTP rules as `withRetry()` reads them, and a
 * hedger made of the rest. `ownKeys`: the options the adapter took out before (axios's `adapter`),
 * named with the others when a key is not an option.
 */
export function parseHttpHedgingOptions(options: HttpHedgingOptions, owner: string, ownKeys: readonly string[] = []): { config: HttpConfig; hedger: Hedger } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  const httpOptions: Record<string, unknown> = {};
  const hedgeOptions: Record<string, unknown> = {};
  for (const key in options) {
    const value = (options as unknown as Record<string, unknown>)[key];
    if (HTTP_KEYS.includes(key)) httpOptions[key] = value;
    else if (OPTION_NAMES.includes(key)) hedgeOptions[key] = value;
    else if (key === 'signal') throw new InvalidOptionError(owner, key, value, 'is per request: pass it in init (or in the Request)');
    // Checked here against every name the adapter takes: the hedger alone would suggest only its own.
    else throw new InvalidOptionError(owner, key, value, unknownOption(`a hedging option of ${owner}`, key, [...OPTION_NAMES, ...ownKeys]));
  }
  // The hedger reports the call; the HTTP rules describe it (method, URL, name, statuses), and
  // report a request sent once, unhedged, on the same clock.
  httpOptions.telemetry = hedgeOptions.telemetry;
  httpOptions.clock = hedgeOptions.clock;
  httpOptions.onHookError = hedgeOptions.onHookError;
  // A request sent once, unhedged, is asked of the same throttle (checked again by the hedger).
  // Stryker disable next-line ConditionalExpression: without a throttle both are undefined, which parseHttpOptions leaves out as it does a missing option
  if (hedgeOptions.throttle !== undefined) {
    httpOptions.throttle = hedgeOptions.throttle;
    httpOptions.random = hedgeOptions.random;
  }
  // Stryker disable next-line BooleanLiteral: callKeys only admits per-request keys and names them in an error; httpOptions holds only the HTTP rules' keys
  const config = parseHttpOptions(httpOptions, owner, false);
  const user = hedgeOptions.retryable;
  // A listed status, and a client's own transient failure, are non-fatal by definition; other
  // failures keep hedge()'s classification — then the caller's override, as withRetry() has it.
  if (user === undefined || typeof user === 'function') {
    hedgeOptions.retryable = (error: unknown, info: RetryableInfo): boolean => {
      const transient = info.transient || isHttpStatusError(error) || isClientTransient(error);
      if (user !== undefined) {
        const said = (user as RetryableOverride)(error, { attempt: info.attempt, transient });
        if (said !== undefined) return said === true;
      }
      return transient;
    };
  }
  try {
    return { config, hedger: createHedger(hedgeOptions as unknown as HedgerOptions) };
  } catch (error) {
    if (isInvalidOptionError(error)) throw new InvalidOptionError(owner, error.field, error.value, error.requirement);
    throw error;
  }
}

function run(fetchFn: FetchFunction, config: HttpConfig, hedger: Hedger, p: Plan, owner: string): Promise<Response> {
  return runHedgedExchange(hedger, config, fetchExchange(fetchFn, p, owner)).then((result) => result.response);
}
