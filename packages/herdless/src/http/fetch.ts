import { InvalidOptionError } from '../core/errors.js';
import type { AttemptContext } from '../runtime/telemetry.js';
import { retryAttemptHeader } from './attempt-header.js';
import { bodyKind } from './body.js';
import { IDEMPOTENCY_KEY_HEADER } from './data.js';
import { bodyBlock, idempotency, runExchange, type HttpExchange } from './exchange.js';
import {
  parseCallOptions,
  parseHttpOptions,
  type FetchFunction,
  type FetchInput,
  type FetchWithRetryOptions,
  type HttpCall,
  type HttpCallOptions,
  type HttpConfig,
  type HttpRetryOptions,
} from './options.js';
import { recordRetryInfo } from './retry-info.js';

/**
 * A `fetch` that retries: the signature of `fetch`, plus optional per-request options.
 * @example
 * ```ts
 * const fetch2: RetryingFetch = withRetry(fetch);
 * const res = await fetch2('https://api.example.com/orders', { method: 'POST', body }, { idempotencyKey: true });
 * ```
 */
export type RetryingFetch = (input: FetchInput, init?: RequestInit, options?: HttpCallOptions) => Promise<Response>;

/** Where each attempt's body comes from. */
type BodySource = 'none' | 'init' | 'request' | 'factory';

/** One logical request, as every attempt sends it. */
/** @internal One logical request, as every attempt sends it (also the hedging fetch's). */
export interface Plan {
  /** The adapter's config, or this request's (its per-request options over the adapter's). */
  readonly config: HttpConfig;
  readonly method: string;
  readonly url: string;
  readonly input: FetchInput;
  readonly request: Request | undefined;
  readonly init: RequestInit | undefined;
  /** Headers replacing the given ones (to add the idempotency key), or `undefined` to send them as given. */
  readonly headers: Headers | undefined;
  readonly body: BodySource;
  readonly bodyFactory: HttpCallOptions['bodyFactory'];
  readonly signal: AbortSignal | undefined;
  /** Why this request may not be sent twice; `undefined` when it may be retried. */
  readonly blocked: string | undefined;
  /** The header a retry carries its attempt number in, or `undefined` for none. */
  readonly attemptHeader: string | undefined;
}

function isRequest(input: unknown): input is Request {
// Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: a Request of this realm passes the checks below too; this is their shortcut
  if (typeof Request !== 'undefined' && input instanceof Request) return true;
  // A Request from another realm or another fetch implementation.
  return (
    typeof input === 'object' &&
    input !== null &&
    typeof (input as Request).url === 'string' &&
    typeof (input as Request).method === 'string' &&
    typeof (input as Request).clone === 'function'
  );
}

/** RFC 9110 §5.6.2 token: what a request method may be. */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** @internal One logical request, as every attempt sends it (also the hedging fetch's). */
export function plan(input: FetchInput, init: RequestInit | undefined, call: HttpCall, owner: string): Plan {
  const config = call.config;
  if (init !== undefined && (typeof init !== 'object' || init === null)) throw new InvalidOptionError(owner, 'init', init, 'must be an object');
  const request = isRequest(input) ? input : undefined;
  const given: unknown = init?.method !== undefined ? init.method : (request?.method ?? 'GET');
  // A method is an RFC 9110 token; anything else would fail inside fetch (or here, as an internal
  // TypeError) instead of naming the field.
// Stryker disable next-line ConditionalExpression: 'GET' is a token, so the checks after the shortcut pass it as well
  if (given !== 'GET' && (typeof given !== 'string' || !METHOD_TOKEN.test(given))) throw new InvalidOptionError(owner, 'init.method', given, 'must be an HTTP method name such as "GET" (an RFC 9110 token)');
// Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: 'GET' upper-cased is 'GET' (and '' was refused above); the shortcut spares the call
  const method = given === 'GET' ? given : given.toUpperCase();
  const url = request !== undefined ? request.url : input instanceof URL ? input.href : String(input);
  // As fetch: init's signal (even null) wins over the Request's.
  const signal = init !== undefined && init.signal !== undefined ? (init.signal ?? undefined) : request?.signal;

  let body: BodySource = 'none';
  let blocked: string | undefined;
  const bodyFactory = call.bodyFactory;
  if (bodyFactory !== undefined) body = 'factory';
  else if (init?.body !== undefined && init.body !== null) {
// Stryker disable next-line StringLiteral: send() treats every source but 'none', 'request' and 'factory' alike
    body = 'init';
    blocked = bodyBlock(init.body);
  } else if (request !== undefined && request.body !== null) {
    body = 'request';
    if (request.bodyUsed) blocked = "the Request's body has already been read";
  }

  let headers: Headers | undefined;
  if (blocked === undefined && !config.methods.has(method)) {
    const given = new Headers(init?.headers ?? request?.headers);
    const rule = idempotency(config, method, given.has(IDEMPOTENCY_KEY_HEADER), call.idempotencyKey, owner);
    blocked = rule.blocked;
    if (rule.key !== undefined) {
      given.set(IDEMPOTENCY_KEY_HEADER, rule.key);
      headers = given;
    }
  }
  const attemptHeader = retryAttemptHeader(config, () => url);
  return { config, method, url, input, request, init, headers, body, bodyFactory, signal, blocked, attemptHeader };
}

/**
 * @internal Sends one attempt of `plan` (also the hedging fetch's), aborted by `signal`
 * (`undefined`: nothing can abort it); `extra` (from `beforeAttempt`) and the trace context's
 * headers are set over the request's.
 */
export async function send(
  fetchFn: FetchFunction,
  plan: Plan,
  attempt: number,
  signal: AbortSignal | undefined,
  extra: Readonly<Record<string, string>> | undefined,
  owner: string,
  traced?: AttemptContext,
): Promise<Response> {
  const attemptHeader = plan.attemptHeader;
  const numbered = attempt > 1 && attemptHeader !== undefined;
  // A first attempt that nothing can abort and that changes nothing is the caller's own request.
  if (signal === undefined && !numbered && extra === undefined && traced === undefined && plan.headers === undefined && plan.body === 'none' && plan.signal === undefined) {
    return checked(await fetchFn(plan.input, plan.init), owner);
  }
// Stryker disable next-line ConditionalExpression: spreading undefined gives {} too
  const init: RequestInit = plan.init === undefined ? {} : { ...plan.init };
// Stryker disable next-line ConditionalExpression: no attempt signal means no caller's signal either (see runExchange), and fetch reads an undefined signal as none
  if (signal !== undefined) init.signal = signal;
// Stryker disable next-line ConditionalExpression: the branch builds the same headers the else branch passes (plan.headers, else the request's own)
  if (numbered || extra !== undefined || traced !== undefined) {
    const headers = new Headers(plan.headers ?? plan.init?.headers ?? plan.request?.headers);
    if (numbered) headers.set(attemptHeader, String(attempt));
// Stryker disable next-line ConditionalExpression: for…in over undefined runs no iteration
    if (extra !== undefined) for (const name in extra) headers.set(name, extra[name]!);
    // The attempt's own trace context replaces any the caller's headers carried.
    traced?.inject((name, value) => headers.set(name, value));
    init.headers = headers;
  } else if (plan.headers !== undefined) init.headers = plan.headers;
  let input = plan.input;
  if (plan.body === 'request') {
    // Each attempt sends a copy, so the caller's Request keeps its body for the next one.
    input = plan.request!.clone();
  } else if (plan.body === 'factory') {
    const body = await plan.bodyFactory!(attempt);
    init.body = body;
    if (bodyKind(body) === 'stream' && (init as { duplex?: string }).duplex === undefined) (init as { duplex?: string }).duplex = 'half';
  }
  return checked(await fetchFn(input, init), owner);
}

function checked(response: unknown, owner: string): Response {
  // A wrapped function that resolves to something else (a mock returning a string, a forgotten
  // `return`) would otherwise fail deep inside as an unrelated TypeError. Plain objects with a
  // numeric status pass, as test doubles of a Response do.
  if (typeof response !== 'object' || response === null || typeof (response as { status?: unknown }).status !== 'number') {
    throw new InvalidOptionError(owner, 'fetch', response, 'must resolve to a Response (an object with a numeric status)');
  }
  return response as Response;
}

/** Lets go of a response nobody will read: its connection goes back to the pool or is closed. */
export function discard(response: Response): void {
  try {
    const body = response.body;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a null body throws inside the try, and a locked body's cancel() rejects, which is swallowed: the checks only spare that work
    if (body !== null && !body.locked) body.cancel().then(undefined, () => undefined);
  } catch {
    // A body that cannot be cancelled is already being read or closed.
  }
}

/**
 * @internal One call's fetch mechanics for the shared HTTP semantics: what the retrying fetch hands
 * `runExchange` and the hedging fetch hands `runHedgedExchange`.
 */
export function fetchExchange(fetchFn: FetchFunction, plan: Plan, owner: string): HttpExchange<Response> {
  return {
    client: 'fetch',
    method: plan.method,
    url: plan.url,
    signal: plan.signal,
    blocked: plan.blocked,
    send: (attempt, signal, headers, traced) => send(fetchFn, plan, attempt, signal, headers, owner, traced),
    headers: (response) => response.headers,
    discard,
    // The body of a returned response is read after the call: the caller's signal aborts that too.
    followsCaller: (response) => response.body !== null,
    // Recorded before onGiveUp runs, so the hook can read retryInfo(response).
    record: (response, attempts, gaveUp) => recordRetryInfo(response, { attempts, reason: gaveUp?.reason, error: gaveUp }),
  };
}

/** One call: the shared HTTP semantics (see runExchange), with fetch's mechanics. */
async function run(fetchFn: FetchFunction, plan: Plan, owner: string): Promise<Response> {
  const result = await runExchange(plan.config, fetchExchange(fetchFn, plan, owner), owner);
  return result.response;
}

/**
 * Wraps `fetch` (or any function with its signature) so that each request is retried by
 * `retry()`'s rules plus HTTP's:
 *
 * - **Methods**: `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`, `TRACE` are retried
 *   ({@link RETRYABLE_HTTP_METHODS}); `POST`, `PATCH` and other methods only with an
 *   `Idempotency-Key` header — the request's own, or one `idempotencyKey: true` generates once per
 *   request and sends on every attempt.
 * - **Statuses**: 408, 429, 500, 502, 503, 504 are retried; any other response is the result.
 *   When retrying stops, the promise **resolves with the last response** (a 503 is a response, not
 *   an exception) and {@link retryInfo} tells why. Network failures are retried; when retrying
 *   stops, the promise rejects with a `RetryError` whose `cause` is the last failure.
 * - **Retry-After** on every retried status (and `retry-after-ms`): seconds or an HTTP-date
 *   (measured from the response's `Date` header, else from `now()`; a date at or before that is no
 *   hint), parsed strictly ({@link parseRetryAfter}); a valid hint replaces the backoff for that
 *   wait, never shortened; one above `maxRetryAfterMs` (default 60 000 ms) or past the deadline
 *   ends the call at once with that response (reason `'hint-too-long'`). An invalid value is
 *   ignored: the backoff applies. `ignoreHints: true` ignores every hint. A 429 without a hint waits
 *   `throttlingBackoff` (full jitter from 500 ms by default) rather than `backoff`.
 * - **Do not retry**: a response carrying `X-Herdless-Retry: no` ({@link DO_NOT_RETRY_HEADER}) is
 *   returned at once (reason `'do-not-retry'`), and so is a response an inner herdless layer gave
 *   up on ({@link isGivenUp}): layers never multiply attempts. A response this call gives up on
 *   carries that mark in turn.
 * - **Attempt header**: each retry carries `x-herdless-attempt: <n>` (n ≥ 2;
 *   {@link ATTEMPT_HEADER}), so the server can count retries; `attemptHeader` renames it or turns it off.
 *   In a browser, the default header is left off cross-origin requests (it would need a preflight).
 * - **Network failures** in every runtime: Node's and Bun's error codes, and the `TypeError` browsers,
 *   Deno and Workers reject with for a failed connection (see `NETWORK_ERROR_MESSAGES`).
 * - **Bodies**: a string, bytes, `Blob`, `URLSearchParams`, `FormData` or a `Request`'s body is
 *   sent whole on every attempt (a `Request` is cloned per attempt). A stream body is sent once
 *   and not retried (reason `'fatal'`, the message says why) unless `bodyFactory` is given. An
 *   empty body is never sent in place of a consumed one.
 * - **Discarded responses** have their bodies cancelled before the wait, so their connections are
 *   freed.
 * - **Abort**: the request's `signal` (in `init` or the `Request`) aborts waits and the attempt in
 *   flight; the promise rejects with the signal's reason, as fetch does. `attemptTimeoutMs` aborts
 *   only the attempt, which is then a retryable failure.
 * - **Before each attempt**: `beforeAttempt` may set headers on it (a fresh auth token, a new
 *   signature); with `refreshStatuses: [401]` a 401 is sent again once, with the new credentials.
 * - **Per request**: the third argument sets this request's policy (`maxAttempts`, `backoff`,
 *   `maxRetryAfterMs`, `deadlineMs`, `attemptTimeoutMs`, `ignoreHints`), `idempotencyKey`,
 *   `beforeAttempt` and `bodyFactory` over the adapter's options (see {@link HttpCallOptions}).
 *
 * No Node.js-only API is used: it runs in browsers, Deno, Bun and Node.js ≥ 20.
 *
 * @param fetchFn the function to wrap, usually `fetch`.
 * @param options `retry()`'s options plus `retryMethods`, `retryStatuses`, `idempotencyKey`, `now`,
 *   and HTTP-shaped `onRetry` / `onGiveUp` (see {@link HttpRetryOptions}).
 * @returns a {@link RetryingFetch}: call it as `fetch`, with optional per-request options
 *   (`idempotencyKey`, `bodyFactory`) as a third argument.
 * @throws InvalidOptionError for a `fetchFn` that is not a function or an invalid option (names the
 *   field and the value). A call with invalid per-request options rejects with one (as fetch, it
 *   never throws synchronously). When `fetchFn` resolves to something that is not a response (an
 *   object with a numeric `status`), the call rejects with a `RetryError` (reason `'fatal'`) whose
 *   `cause` is an `InvalidOptionError` naming `fetch` and the value.
 * @example
 * ```ts
 * const api = withRetry(fetch, { maxAttempts: 4, maxRetryAfterMs: 10_000, idempotencyKey: true });
 * const res = await api('https://api.example.com/orders', { method: 'POST', body: JSON.stringify(order) });
 * if (!res.ok) console.warn(res.status, retryInfo(res)?.reason);
 * ```
 */
export function withRetry(fetchFn: FetchFunction, options?: HttpRetryOptions): RetryingFetch {
  if (typeof fetchFn !== 'function') throw new InvalidOptionError('withRetry', 'fetch', fetchFn, 'must be a function (e.g. fetch)');
  const config = parseHttpOptions(options, 'withRetry', false);
  // A request without options of its own: the adapter's, checked once.
// Stryker disable next-line StringLiteral,BooleanLiteral: with no options parseCallOptions returns before it reads these
  const plainCall = parseCallOptions(config, undefined, 'withRetry', 'options', true);
  return (input, init, callOptions) => {
    // As fetch: a bad argument rejects, it never throws synchronously.
    try {
// Stryker disable next-line ConditionalExpression: parseCallOptions of undefined is plainCall's value, made once instead of per call
      const call = callOptions === undefined ? plainCall : parseCallOptions(config, callOptions, 'withRetry', 'options', true);
      return run(fetchFn, plan(input, init, call, 'withRetry'), 'withRetry');
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * `fetch(input, init)` with retries, on the global `fetch`: {@link withRetry}'s behaviour, with
 * its options and the per-request ones (`idempotencyKey`, `bodyFactory`) in one object. Options
 * are checked on every call; to check them once (and share a budget), use `withRetry(fetch, …)`.
 *
 * @throws InvalidOptionError (as a rejection) for an invalid option.
 * @example
 * ```ts
 * const res = await fetchWithRetry('https://api.example.com/items/42', { method: 'PUT', body }, { maxAttempts: 4 });
 * ```
 */
export async function fetchWithRetry(input: FetchInput, init?: RequestInit, options?: FetchWithRetryOptions): Promise<Response> {
  const config = parseHttpOptions(options, 'fetchWithRetry', true);
// Stryker disable next-line ConditionalExpression,StringLiteral: an options object of two undefined fields reads as none, and it is always an object, so the field name is never in an error
  const call = parseCallOptions(config, options === undefined ? undefined : { idempotencyKey: options.idempotencyKey, bodyFactory: options.bodyFactory }, 'fetchWithRetry', 'options', true);
  return run((i, n) => globalThis.fetch(i, n), plan(input, init, call, 'fetchWithRetry'), 'fetchWithRetry');
}
