import type { RetryableOverride } from '../core/classify/classify.js';
import { InvalidOptionError } from '../core/errors.js';
import type { GiveUpReason } from '../core/retry/errors.js';
import { functionOption, unknownOption } from '../core/validate.js';
import { checkedNow } from '../core/time.js';
import type { HookName } from '../runtime/hooks.js';
import { RETRY_OBSERVER_KEYS, RETRY_POLICY_KEYS, type RetrierOptions } from '../runtime/retry.js';
import { nameOption, readRetryOptions, type RetrySettings } from '../runtime/retry-options.js';
import { systemScheduler } from '../runtime/scheduler.js';
import { telemetryOption, type TelemetryObserver } from '../runtime/telemetry.js';
import { ATTEMPT_HEADER, headerNameOption } from '../core/wire.js';
import { DEFAULT_RETRY_STATUSES, RETRYABLE_HTTP_METHODS } from './data.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { breakerOption, type BreakerLookup, type KeyedBreakers } from '../runtime/keyed-breakers.js';
import { newIdempotencyKey } from './idempotency-key.js';

/**
 * The function `withRetry()` wraps: `fetch` itself, or anything with its signature.
 * @example
 * ```ts
 * const myFetch: FetchFunction = (input, init) => fetch(input, { ...init, credentials: 'include' });
 * ```
 */
export type FetchFunction = (input: FetchInput, init?: RequestInit) => Promise<Response>;

/**
 * What `fetch` takes as its first argument: a URL string, a `URL` or a `Request` (the DOM's
 * `RequestInfo | URL`, spelled out so that Node-only projects without the DOM lib type-check too).
 */
export type FetchInput = string | URL | Request;

/** A request body, as `RequestInit['body']` allows (the DOM's `BodyInit`, spelled out for the same reason). */
export type FetchBody = NonNullable<RequestInit['body']>;

/**
 * What `onRetry` is told before each wait: the attempt that failed, how, and the wait chosen.
 * @example
 * ```ts
 * onRetry: ({ method, url, attempt, status, delayMs, delaySource }: HttpRetryEvent) =>
 *   log.warn({ method, url, attempt, status, delayMs, delaySource }, 'retrying');
 * ```
 */
export interface HttpRetryEvent {
  /** The request's method, upper-cased (`GET`, `POST`…). */
  readonly method: string;
  /** The request's URL. */
  readonly url: string;
  /** The attempt that failed, from 1; attempt `attempt + 1` starts after the wait. */
  readonly attempt: number;
  /** The response's status when the attempt got a retryable response; `undefined` for a network failure or a timeout. */
  readonly status: number | undefined;
  /** The failure: an {@link HttpStatusError} for a response, else what `fetch` rejected with (or an `AttemptTimeoutError`). */
  readonly error: unknown;
  /** The wait before the next attempt, in ms (0: at once). */
  readonly delayMs: number;
  /** `'server-hint'`: the wait is the response's `Retry-After` / `retry-after-ms`; `'backoff'`: the backoff drew it. */
  readonly delaySource: 'backoff' | 'server-hint';
}

/**
 * What `onGiveUp` is told when a call ends without a successful response: with a retryable-status
 * response it returns anyway (`response` set), with a rejection, or by the caller's abort.
 * @example
 * ```ts
 * onGiveUp: ({ reason, attempts, status }: HttpGiveUpEvent) => metrics.increment('http_give_up', { reason, status });
 * ```
 */
export interface HttpGiveUpEvent<R = Response> {
  /** The request's method, upper-cased. */
  readonly method: string;
  /** The request's URL. */
  readonly url: string;
  /** Why retrying stopped (see `GiveUpReason`); `'aborted'` for the caller's abort. */
  readonly reason: GiveUpReason;
  /** Attempts sent, the first included. */
  readonly attempts: number;
  /** The status of the response the call returns, or `undefined` when it rejects. */
  readonly status: number | undefined;
  /**
   * The response the call returns (its body is yours), or `undefined` when it rejects: a `Response`
   * for fetch, the response head for undici, the `AxiosResponse` for axios.
   */
  readonly response: R | undefined;
  /**
   * The `RetryError` explaining the give-up (for a returned response, the one {@link retryInfo}
   * holds; for a rejection, the rejection itself), or the abort reason for `'aborted'`.
   */
  readonly error: unknown;
}

/**
 * How a request may get an `Idempotency-Key` header: `true` generates one per logical request
 * ({@link newIdempotencyKey}: a random UUID as a quoted string), a function returns your own (its
 * value is sent as is), `false` adds none. A request whose headers already carry the header keeps
 * its own.
 * @example
 * ```ts
 * const option: IdempotencyKeyOption = () => `"order-${orderId}"`;
 * ```
 */
export type IdempotencyKeyOption = boolean | (() => string);

/**
 * What {@link BeforeAttemptHook} is told before an attempt is sent.
 * @example
 * ```ts
 * const info: HttpAttemptInfo = { method: 'GET', url: 'https://api.example.com/me', attempt: 2, status: 401, error: undefined };
 * ```
 */
export interface HttpAttemptInfo {
  /** The request's method, upper-cased. */
  readonly method: string;
  /** The request's URL. */
  readonly url: string;
  /** The attempt about to be sent, from 1. */
  readonly attempt: number;
  /** The status of the previous attempt's response (e.g. 401 or 503), or `undefined` on the first attempt and after a network failure. */
  readonly status: number | undefined;
  /** The previous attempt's failure (an {@link HttpStatusError} for a response), or `undefined` on the first attempt. */
  readonly error: unknown;
}

/**
 * What a {@link BeforeAttemptHook} may change in the attempt it precedes: headers set on that
 * attempt only (a name replaces the request's header of that name, case-insensitively). Header
 * names are HTTP tokens (RFC 9110 §5.1), values strings.
 * @example
 * ```ts
 * const change: HttpAttemptChange = { headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export interface HttpAttemptChange {
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * Called before every attempt, the first included, and awaited: it may return headers for that
 * attempt — a fresh auth token, a new signature, a new date. It is part of the request, not an
 * observer: when it throws or rejects, the request fails with that error and is not retried.
 * Each attempt starts from the request as the caller gave it, so return the headers on every call.
 * @example
 * ```ts
 * const beforeAttempt: BeforeAttemptHook = async ({ status }) => {
 *   if (status === 401) await tokens.refresh();
 *   return { headers: { authorization: `Bearer ${tokens.current}` } };
 * };
 * ```
 */
export type BeforeAttemptHook = (attempt: HttpAttemptInfo) => HttpAttemptChange | undefined | void | PromiseLike<HttpAttemptChange | undefined | void>;

/**
 * What one request may set over its adapter's options: the retry policy of this request (the budget,
 * clock and randomness stay the adapter's: they are shared on purpose), its idempotency key and its
 * `beforeAttempt`. Given as the third argument of a {@link RetryingFetch}, as `retryOptions` in
 * undici's dispatch options, as `herdless` in an axios request config. A request pays only for what
 * it sets: the adapter's options were checked once, when it was made; a request that sets a policy
 * option has its policy read again. Invalid values fail that request with an `InvalidOptionError`
 * naming the field.
 * @example
 * ```ts
 * await api('https://api.example.com/report', undefined, { maxAttempts: 1 }); // this one is not retried
 * ```
 */
export interface HttpRequestRetryOptions {
  /** The attempts of this request, the first included (1: no retry). Default: the adapter's. */
  maxAttempts?: number | undefined;
  /** This request's backoff. Default: the adapter's. */
  backoff?: RetrierOptions['backoff'];
  /** The longest `Retry-After` this request waits for, in ms. Default: the adapter's. */
  maxRetryAfterMs?: number | undefined;
  /** This request's deadline across all attempts and waits, in ms. Default: the adapter's. */
  deadlineMs?: number | undefined;
  /** The limit on one attempt of this request, in ms. Default: the adapter's. */
  attemptTimeoutMs?: number | undefined;
  /** Ignore server hints for this request. Default: the adapter's. */
  ignoreHints?: boolean | undefined;
  /**
   * For `POST`, `PATCH` and other methods outside `retryMethods`: add an `Idempotency-Key` header,
   * the same on every attempt, which makes the request retryable. Default: the adapter's option.
   */
  idempotencyKey?: IdempotencyKeyOption | undefined;
  /** This request's {@link BeforeAttemptHook}, in place of the adapter's. */
  beforeAttempt?: BeforeAttemptHook | undefined;
}

/**
 * Options given with one request, as the third argument of a {@link RetryingFetch} (or of
 * `fetchWithRetry`): {@link HttpRequestRetryOptions} and `bodyFactory`.
 * @example
 * ```ts
 * await api(url, { method: 'PUT' }, { bodyFactory: () => file.stream() }); // a fresh stream per attempt
 * ```
 */
export interface HttpCallOptions extends HttpRequestRetryOptions {
  /**
   * Makes the body of every attempt (the first included), replacing any body in `init` or in the
   * `Request`. Pass it to retry a request whose body is a stream: a stream is read by the attempt
   * that sends it and cannot be sent again. It may return a promise. When it returns a stream and
   * `init` has no `duplex`, `duplex: 'half'` is set (fetch requires it for streaming uploads).
   */
  bodyFactory?: ((attempt: number) => FetchBody | null | PromiseLike<FetchBody | null>) | undefined;
}

/**
 * Options of `withRetry()`: every option of `retry()` / `createRetry()` (`maxAttempts`, `backoff`,
 * `retryable`, `maxRetryAfterMs`, `deadlineMs`, `attemptTimeoutMs`, `budget`, `random`, `clock`,
 * `unref`, `onHookError` — same meaning, same defaults), HTTP hooks in place of `onRetry` and
 * `onGiveUp`, and the HTTP options below. The caller's `signal` comes with each request, in `init`
 * or in the `Request`.
 * @example
 * ```ts
 * const options: HttpRetryOptions = { maxAttempts: 4, retryStatuses: [503], idempotencyKey: true };
 * ```
 */
export interface HttpRetryOptions<R = Response> extends Omit<RetrierOptions, 'onRetry' | 'onGiveUp'> {
  /** Methods retried without an idempotency key (compared upper-cased). Default {@link RETRYABLE_HTTP_METHODS}. */
  retryMethods?: readonly string[] | undefined;
  /** Response statuses retried (integers 100–599). Default {@link DEFAULT_RETRY_STATUSES}: 408, 429, 500, 502, 503, 504. */
  retryStatuses?: readonly number[] | undefined;
  /** Default for every request; see {@link IdempotencyKeyOption}. Default `false`. */
  idempotencyKey?: IdempotencyKeyOption | undefined;
  /**
   * The wall clock, in ms since the Unix epoch, against which an HTTP-date `Retry-After` is
   * measured. Default `Date.now`. (Waits and timeouts use the `clock` option, a monotonic clock.)
   * A reading that is not a finite number fails the attempt with an `InvalidOptionError` naming
   * `now()` (not retried).
   */
  now?: (() => number) | undefined;
  /**
   * The request header that tells the server which attempt this is: every retry (attempt 2, 3, …)
   * carries `<name>: <attempt>`, e.g. `x-herdless-attempt: 2`, so a server can count the retries it
   * receives and answer "overloaded; don't retry" when they pile up (SRE book, "Handling
   * Overload"; gRPC's `grpc-previous-rpc-attempts` works the same way). The first attempt is sent
   * without it, as gRPC does, so that it stays a CORS "simple request" in browsers; a server reads a
   * missing header as attempt 1. A string renames it (an HTTP field name, compared case-insensitively);
   * `false` sends none. Default {@link ATTEMPT_HEADER} (`x-herdless-attempt`).
   *
   * In a browser (a page or a web worker: where `location` has an origin), the default header is not
   * sent on a cross-origin request: it is not CORS-safelisted, so a retry carrying it would need a
   * preflight the server may refuse — and a refused preflight fails the retry like a dropped
   * connection. Name the header explicitly to send it cross-origin too, once the server lists it in
   * `Access-Control-Allow-Headers`.
   */
  attemptHeader?: string | false | undefined;
  /**
   * Called before every attempt and awaited; it may set headers on that attempt (a fresh token, a
   * new signature). See {@link BeforeAttemptHook}. Default: none.
   */
  beforeAttempt?: BeforeAttemptHook | undefined;
  /**
   * Statuses that mean "these credentials are stale" (usually `[401]`): a response with one is
   * sent again **once** per request, at once, after `beforeAttempt` has seen its status and
   * returned the new credentials; a second such response is the result. The resend is an attempt
   * like any other — it counts towards `maxAttempts`, asks the budget and carries the attempt
   * header — and follows the idempotency rule, so it can never add load the policy would not allow.
   * Requires `beforeAttempt` (sending the same credentials again would be refused again). Integers
   * 100–599, none of them in `retryStatuses`. Default: none (a 401 is the result).
   */
  refreshStatuses?: readonly number[] | undefined;
  /** Called before each wait; an observer, like `retry()`'s hooks. */
  onRetry?: ((event: HttpRetryEvent) => unknown) | undefined;
  /** Called once when a call ends without a successful response; an observer. */
  onGiveUp?: ((event: HttpGiveUpEvent<R>) => unknown) | undefined;
  /**
   * Receives every attempt's start and end (with the status), every retry (delay and source) and
   * the give-up, as the `'http'` layer; see `TelemetryObserver`. `herdless/otel` makes each attempt
   * an HTTP client span. Default: none.
   */
  telemetry?: TelemetryObserver | undefined;
  /**
   * A circuit breaker every attempt goes through: a `CircuitBreaker` shared by all requests, or
   * `keyedBreakers()` for one breaker per request host (`host:port` of the URL), so that one failing
   * host opens only its own. A retried status (503…) or a network failure counts as a failure, any
   * other response as a success, the caller's abort not at all. A refused attempt is not sent and
   * ends the call at once (reason `'circuit-open'`, a `RetryError` whose `cause` is the
   * `CircuitOpenError`): the retry sits outside the breaker and never retries its refusals.
   * Default: none.
   */
  breaker?: CircuitBreaker | KeyedBreakers | undefined;
}

/**
 * The options of `fetchWithRetry()`: those of `withRetry()` and of one request together.
 * @example
 * ```ts
 * await fetchWithRetry(url, init, { maxAttempts: 4, idempotencyKey: true } satisfies FetchWithRetryOptions);
 * ```
 */
export interface FetchWithRetryOptions extends HttpRetryOptions, HttpCallOptions {}

/** @internal The options of `withRetry()`, checked and normalised. */
export interface HttpConfig {
  /** The policy options as given (those `retry()` knows), for a request that overrides some. */
  readonly retryOptions: RetrierOptions;
  /** `retryOptions`, read and checked once. */
  readonly settings: RetrySettings;
  readonly beforeAttempt: BeforeAttemptHook | undefined;
  readonly refreshStatuses: ReadonlySet<number> | undefined;
  readonly retryable: RetryableOverride | undefined;
  readonly methods: ReadonlySet<string>;
  readonly statuses: ReadonlySet<number>;
  readonly idempotencyKey: (() => string) | undefined;
  readonly now: () => number;
  /** The attempt header's name (lower case), or `undefined` to send none. */
  readonly attemptHeader: string | undefined;
  /** Whether the attempt header was named by the caller: then a browser sends it cross-origin too. */
  readonly attemptHeaderNamed: boolean;
  readonly onRetry: ((event: HttpRetryEvent) => unknown) | undefined;
  readonly onGiveUp: ((event: HttpGiveUpEvent<unknown>) => unknown) | undefined;
  readonly onHookError: ((error: unknown, hook: HookName) => void) | undefined;
  readonly telemetry: TelemetryObserver | undefined;
  /** The `name` option: telemetry's dependency name (default: the request URL's host). */
  readonly name: string | undefined;
  /** The monotonic clock attempts are timed on (the `clock` option). */
  readonly clock: { now(): number };
  /** The breaker of a request's host, when the `breaker` option is given. */
  readonly breaker: BreakerLookup | undefined;
}

const RETRY_KEYS = RETRY_POLICY_KEYS;
const HTTP_KEYS: readonly string[] = ['retryMethods', 'retryStatuses', 'idempotencyKey', 'now', 'attemptHeader', 'breaker', 'beforeAttempt', 'refreshStatuses', ...RETRY_OBSERVER_KEYS];
/** The policy options one request may set over the adapter's. */
const REQUEST_POLICY_KEYS: readonly string[] = ['maxAttempts', 'backoff', 'maxRetryAfterMs', 'deadlineMs', 'attemptTimeoutMs', 'ignoreHints'];
const REQUEST_KEYS: readonly string[] = [...REQUEST_POLICY_KEYS, 'idempotencyKey', 'beforeAttempt'];
const CALL_KEYS: readonly string[] = [...REQUEST_KEYS, 'bodyFactory'];

/** Every option name `withRetry` (or, with `callKeys`, `fetchWithRetry`) takes, for the misspelling error. */
function optionNames(callKeys: boolean): string[] {
  return [...new Set([...RETRY_KEYS, ...HTTP_KEYS, ...(callKeys ? CALL_KEYS : [])])];
}

/** @internal `true` → the default generator, a function → itself, `false`/`undefined` → none. */
export function idempotencyKeyOption(owner: string, value: unknown): (() => string) | undefined | false {
  if (value === undefined) return undefined;
  if (value === true) return newIdempotencyKey;
  if (value === false) return false;
  if (typeof value === 'function') return value as () => string;
  throw new InvalidOptionError(owner, 'idempotencyKey', value, 'must be a boolean or a function returning the key');
}

function methodsOption(owner: string, value: unknown): ReadonlySet<string> {
  if (value === undefined) return DEFAULT_METHODS;
  if (!Array.isArray(value)) throw new InvalidOptionError(owner, 'retryMethods', value, 'must be an array of method names');
  const methods = new Set<string>();
  for (const method of value) {
    // RFC 9110 §9.1: a method is a token.
    if (typeof method !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(method)) {
      throw new InvalidOptionError(owner, 'retryMethods', method, 'must hold method names (HTTP tokens such as "GET")');
    }
    methods.add(method.toUpperCase());
  }
  return methods;
}

function statusesOption(owner: string, value: unknown, field = 'retryStatuses'): ReadonlySet<number> {
  if (value === undefined) return DEFAULT_STATUSES;
  if (!Array.isArray(value)) throw new InvalidOptionError(owner, field, value, 'must be an array of status codes');
  for (const status of value) {
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
      throw new InvalidOptionError(owner, field, status, 'must hold integer status codes in [100, 599]');
    }
  }
  return new Set(value as number[]);
}

function refreshStatusesOption(owner: string, value: unknown, statuses: ReadonlySet<number>, hook: BeforeAttemptHook | undefined): ReadonlySet<number> | undefined {
  if (value === undefined) return undefined;
  const refresh = statusesOption(owner, value, 'refreshStatuses');
  if (refresh.size === 0) return undefined;
  for (const status of refresh) {
    if (statuses.has(status)) throw new InvalidOptionError(owner, 'refreshStatuses', status, 'must not be in retryStatuses (a status is retried, or refreshed once, not both)');
  }
  if (hook === undefined) throw new InvalidOptionError(owner, 'refreshStatuses', value, 'needs beforeAttempt, which sets the new credentials (the same request would be refused again)');
  return refresh;
}

const DEFAULT_METHODS: ReadonlySet<string> = /* @__PURE__ */ new Set(RETRYABLE_HTTP_METHODS);
const DEFAULT_STATUSES: ReadonlySet<number> = /* @__PURE__ */ new Set(DEFAULT_RETRY_STATUSES);
const wallClock = (): number => Date.now();

/**
 * A caller's wall clock, each reading checked: a NaN or infinite "now" would silently turn every
 * HTTP-date `Retry-After` into no hint, so the attempt fails instead, naming `now()`.
 */
function checkedWallClock(owner: string, now: (() => number) | undefined): () => number {
  if (now === undefined) return wallClock;
  const clock = { now };
  return () => checkedNow(clock, owner, 'now()', 'must return a finite number of ms since the epoch, as Date.now() does');
}

/**
 * @internal Checks and normalises `withRetry()`'s options. The options `retry()` knows are checked
 * by `createRetry()` itself (errors re-issued under `owner`); `callKeys` says whether per-request
 * options may be present too (`fetchWithRetry`). `ownKeys`: the options the caller took out before
 * (axios's `adapter`), named with the others when a key is not an option.
 */
export function parseHttpOptions(options: FetchWithRetryOptions | HttpRetryOptions<never> | undefined, owner: string, callKeys: boolean, ownKeys: readonly string[] = []): HttpConfig {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, 'options', options, 'must be an object');
  }
  const retryOptions: Record<string, unknown> = {};
  for (const key in options) {
    const value = (options as Record<string, unknown>)[key];
    if (RETRY_KEYS.includes(key)) {
      if (value !== undefined) retryOptions[key] = value;
    } else if (key === 'signal') {
      throw new InvalidOptionError(owner, key, value, 'is per request: pass it in init (or in the Request)');
    } else if (!HTTP_KEYS.includes(key) && !(callKeys && CALL_KEYS.includes(key))) {
      throw new InvalidOptionError(owner, key, value, unknownOption(`an option of ${owner}`, key, [...optionNames(callKeys), ...ownKeys]));
    }
  }
  // Stryker disable next-line BooleanLiteral: perCall only admits `signal` and names it among the options; retryOptions holds neither (signal was refused above, unknown keys too)
  const settings = readRetryOptions(retryOptions as RetrierOptions, owner, false);
  const key = idempotencyKeyOption(owner, options.idempotencyKey);
  const statuses = statusesOption(owner, options.retryStatuses);
  const beforeAttempt = functionOption(owner, 'beforeAttempt', options.beforeAttempt);
  return {
    retryOptions: retryOptions as RetrierOptions,
    settings,
    beforeAttempt,
    refreshStatuses: refreshStatusesOption(owner, options.refreshStatuses, statuses, beforeAttempt),
    retryable: options.retryable,
    methods: methodsOption(owner, options.retryMethods),
    statuses,
    idempotencyKey: key === false ? undefined : key,
    now: checkedWallClock(owner, functionOption(owner, 'now', options.now)),
    attemptHeader: headerNameOption(owner, 'attemptHeader', options.attemptHeader, ATTEMPT_HEADER),
    attemptHeaderNamed: options.attemptHeader !== undefined,
    onRetry: functionOption(owner, 'onRetry', options.onRetry),
    onGiveUp: functionOption(owner, 'onGiveUp', options.onGiveUp as HttpConfig['onGiveUp']),
    onHookError: options.onHookError,
    telemetry: telemetryOption(owner, options.telemetry),
    name: nameOption(owner, options.name),
    clock: options.clock ?? systemScheduler,
    breaker: breakerOption(owner, options.breaker),
  };
}

/** @internal One request's options, checked: its config (the adapter's, or one with its overrides) and its own fields. */
export interface HttpCall {
  readonly config: HttpConfig;
  readonly idempotencyKey: IdempotencyKeyOption | undefined;
  readonly bodyFactory: HttpCallOptions['bodyFactory'];
}

/**
 * @internal Checks one request's options over the adapter's `config`. `bodyFactory`: whether the
 * client takes one (fetch). A request that sets no policy option and no `beforeAttempt` keeps the
 * adapter's config as it is: nothing is read again.
 */
export function parseCallOptions(config: HttpConfig, options: HttpCallOptions | undefined, owner: string, field: string, bodyFactory: boolean): HttpCall {
  if (options === undefined) return { config, idempotencyKey: undefined, bodyFactory: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(owner, field, options, 'must be an object');
  }
  const allowed = bodyFactory ? CALL_KEYS : REQUEST_KEYS;
  let policy: Record<string, unknown> | undefined;
  for (const key in options) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (!allowed.includes(key)) {
      throw new InvalidOptionError(owner, key, value, `is not a per-request option (${allowed.join(', ')})`);
    }
    if (REQUEST_POLICY_KEYS.includes(key)) (policy ??= { ...config.retryOptions })[key] = value;
  }
  const key = idempotencyKeyOption(owner, options.idempotencyKey);
  const hook = functionOption(owner, 'beforeAttempt', options.beforeAttempt);
  let callConfig = config;
  if (policy !== undefined || hook !== undefined) {
    callConfig = {
      ...config,
      retryOptions: policy === undefined ? config.retryOptions : (policy as RetrierOptions),
      // Stryker disable next-line BooleanLiteral: as in parseHttpOptions, the policy holds no signal and no unknown key for perCall to change
      settings: policy === undefined ? config.settings : readRetryOptions(policy as RetrierOptions, owner, false),
      beforeAttempt: hook ?? config.beforeAttempt,
    };
  }
  return {
    config: callConfig,
    // Stryker disable next-line ConditionalExpression: key is undefined exactly when options.idempotencyKey is
    idempotencyKey: key === undefined ? undefined : options.idempotencyKey,
    bodyFactory: functionOption(owner, 'bodyFactory', options.bodyFactory),
  };
}
