import type { RetryableInfo, RetryableOverride } from '../core/classify/classify.js';
import { isGivenUp, markDoNotRetry } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { RetryError, isRetryError, type GiveUpReason } from '../core/retry/errors.js';
import { callHook, type RetryEvent } from '../runtime/hooks.js';
import { retry, type RetryContext, type RetryOptions } from '../runtime/retry.js';
import { bodyKind } from './body.js';
import { IDEMPOTENCY_KEY_HEADER } from './data.js';
import {
  idempotencyKeyOption,
  parseCallOptions,
  parseHttpOptions,
  type FetchFunction,
  type FetchInput,
  type FetchWithRetryOptions,
  type HttpCallOptions,
  type HttpConfig,
  type HttpRetryOptions,
} from './options.js';
import { retryAfterFromHeaders } from './retry-after.js';
import { subscribe, unsubscribe } from '../runtime/abort-link.js';
import { recordRetryInfo } from './retry-info.js';
import { HttpStatusError, hasDoNotRetryHeader, isHttpStatusError } from './status-error.js';

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
interface Plan {
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
}

function isRequest(input: unknown): input is Request {
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

function plan(config: HttpConfig, input: FetchInput, init: RequestInit | undefined, call: HttpCallOptions, owner: string): Plan {
  if (init !== undefined && (typeof init !== 'object' || init === null)) throw new InvalidOptionError(owner, 'init', init, 'must be an object');
  const request = isRequest(input) ? input : undefined;
  const given: unknown = init?.method !== undefined ? init.method : (request?.method ?? 'GET');
  // A method is an RFC 9110 token; anything else would fail inside fetch (or here, as an internal
  // TypeError) instead of naming the field.
  if (typeof given !== 'string' || !METHOD_TOKEN.test(given)) throw new InvalidOptionError(owner, 'init.method', given, 'must be an HTTP method name such as "GET" (an RFC 9110 token)');
  const method = given.toUpperCase();
  const url = request !== undefined ? request.url : input instanceof URL ? input.href : String(input);
  // As fetch: init's signal (even null) wins over the Request's.
  const signal = init !== undefined && init.signal !== undefined ? (init.signal ?? undefined) : request?.signal;

  let body: BodySource = 'none';
  let blocked: string | undefined;
  const bodyFactory = call.bodyFactory;
  if (bodyFactory !== undefined) body = 'factory';
  else if (init?.body !== undefined && init.body !== null) {
    body = 'init';
    if (bodyKind(init.body) === 'stream') {
      blocked = 'the request body is a stream, which can be sent only once; pass bodyFactory to retry it';
    }
  } else if (request !== undefined && request.body !== null) {
    body = 'request';
    if (request.bodyUsed) blocked = "the Request's body has already been read";
  }

  let headers: Headers | undefined;
  if (blocked === undefined && !config.methods.has(method)) {
    const given = new Headers(init?.headers ?? request?.headers);
    if (!given.has(IDEMPOTENCY_KEY_HEADER)) {
      const option = call.idempotencyKey === undefined ? config.idempotencyKey : idempotencyKeyOption(owner, call.idempotencyKey);
      if (typeof option === 'function') {
        const key = option();
        if (typeof key !== 'string' || key === '') throw new InvalidOptionError(owner, 'idempotencyKey', key, 'must return a non-empty string');
        given.set(IDEMPOTENCY_KEY_HEADER, key);
        headers = given;
      } else {
        blocked = `${method} is not idempotent: it is retried only with an Idempotency-Key header (send one, or set idempotencyKey: true)`;
      }
    }
  }
  return { method, url, input, request, init, headers, body, bodyFactory, signal, blocked };
}

/** Sends one attempt of `plan`; a retry carries its number in `attemptHeader`. */
async function send(fetchFn: FetchFunction, plan: Plan, attempt: number, signal: AbortSignal, attemptHeader: string | undefined): Promise<Response> {
  const init: RequestInit = plan.init === undefined ? {} : { ...plan.init };
  init.signal = signal;
  if (attempt > 1 && attemptHeader !== undefined) {
    const headers = new Headers(plan.headers ?? plan.init?.headers ?? plan.request?.headers);
    headers.set(attemptHeader, String(attempt));
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
  return fetchFn(input, init);
}

/**
 * The signal an attempt's fetch gets, when the caller has a signal of its own that is not the
 * attempt's. While the call runs, the attempt's signal already follows the caller's (retry() relays
 * the abort), so the link listens to the attempt's short-lived signal only, and adds nothing to the
 * caller's, however many attempts the call makes. Fetch semantics say the caller's signal also
 * aborts the reading of the body that is returned: only for that response, once the call has
 * returned it, does the link subscribe to the caller's signal — until the caller aborts, or the
 * response is garbage-collected (nothing then reads its body).
 */
class AttemptLink {
  readonly #controller = new AbortController();
  readonly #attempt: AbortSignal;

  constructor(attempt: AbortSignal) {
    this.#attempt = attempt;
    if (attempt.aborted) this.#controller.abort(attempt.reason);
    else attempt.addEventListener('abort', this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The attempt's signal or, after {@link followCaller}, the caller's aborted. */
  handleEvent(): void {
    this.#controller.abort(this.#caller === undefined ? this.#attempt.reason : this.#caller.reason);
    this.#caller = undefined;
  }

  /** The attempt is over: stop listening to its signal. */
  settled(): void {
    this.#attempt.removeEventListener('abort', this);
  }

  #caller: AbortSignal | undefined = undefined;

  /** This attempt's response is returned: its body follows the caller's signal from now on. */
  followCaller(caller: AbortSignal, response: Response): void {
    // No body, nothing left to abort.
    if (response.body === null) return;
    if (caller.aborted) {
      this.#controller.abort(caller.reason);
      return;
    }
    this.#caller = caller;
    subscribe(caller, this);
    returnedLinks?.register(response, { caller, link: this });
  }

  /** The response was collected: nobody reads its body any more. */
  release(caller: AbortSignal): void {
    this.#caller = undefined;
    unsubscribe(caller, this);
  }
}

/** Ends the caller subscription of a returned response's link once the response is gone. */
const returnedLinks =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<{ caller: AbortSignal; link: AttemptLink }>(({ caller, link }) => link.release(caller))
    : undefined;

/** Lets go of a response nobody will read: its connection goes back to the pool or is closed. */
function discard(response: Response): void {
  try {
    const body = response.body;
    if (body !== null && !body.locked) body.cancel().then(undefined, () => undefined);
  } catch {
    // A body that cannot be cancelled is already being read or closed.
  }
}

/** One call: `retry()` drives the attempts; this turns responses into values it can retry, and back. */
async function run(fetchFn: FetchFunction, config: HttpConfig, plan: Plan): Promise<Response> {
  let attempts = 0;
  /** The retryable-status response of the latest attempt, until it is discarded or returned. */
  let pending: Response | undefined;
  const caller = plan.signal;
  /** The link of the latest attempt (see AttemptLink), when the caller has a signal. */
  let link: AttemptLink | undefined;

  const operation = async (context: RetryContext): Promise<Response> => {
    attempts = context.attempt;
    const signal = context.signal;
    link?.settled();
    link = caller === undefined || caller === signal ? undefined : new AttemptLink(signal);
    let response: Response;
    try {
      response = await send(fetchFn, plan, context.attempt, link === undefined ? signal : link.signal, config.attemptHeader);
    } finally {
      link?.settled();
    }
    if (signal.aborted) {
      // A late answer to an attempt that timed out or was aborted: nobody will read it.
      discard(response);
      throw signal.reason;
    }
    if (!config.statuses.has(response.status)) return response;
    pending = response;
    // On every status the call retries: RFC 9110 §10.2.3 lets any response carry Retry-After.
    const failure = new HttpStatusError(response, retryAfterFromHeaders(response.headers, config.now()));
    // A response an inner herdless layer gave up on is never retried here: layers do not multiply.
    if (hasDoNotRetryHeader(response.headers) || isGivenUp(response)) markDoNotRetry(failure);
    throw failure;
  };

  /** The request would have been retried but may not be sent twice: the give-up says why. */
  let blockedRetry = false;
  const user = config.retryable;
  const retryable: RetryableOverride = (error: unknown, info: RetryableInfo) => {
    // A listed status is retryable by definition; other failures keep retry()'s classification.
    const transient = isHttpStatusError(error) || info.transient;
    if (plan.blocked !== undefined) {
      blockedRetry = transient;
      return false;
    }
    if (user !== undefined) {
      const said = user(error, { attempt: info.attempt, transient });
      if (said !== undefined) return said === true;
    }
    return transient;
  };

  const onRetry = (event: RetryEvent): unknown => {
    const error = event.error;
    const status = isHttpStatusError(error) ? error.status : undefined;
    if (status !== undefined) {
      discard((error as HttpStatusError).response);
      pending = undefined;
    }
    if (config.onRetry === undefined) return undefined;
    return config.onRetry({
      method: plan.method,
      url: plan.url,
      attempt: event.attempt,
      status,
      error,
      delayMs: event.delayMs,
      delaySource: event.hinted ? 'server' : 'backoff',
    });
  };

  const options: RetryOptions = { ...config.retryOptions, retryable, onRetry, signal: plan.signal };
  let response: Response;
  try {
    response = await retry(operation, options);
  } catch (error) {
    const signal = plan.signal;
    if (signal !== undefined && signal.aborted && error === signal.reason) {
      if (pending !== undefined) discard(pending);
      giveUp(config, plan, 'aborted', attempts, undefined, error);
      throw error;
    }
    if (!isRetryError(error)) {
      // The retryable override threw: retry() rejects with what it threw.
      if (pending !== undefined) discard(pending);
      throw error;
    }
    const failure: unknown = error.cause;
    const explained = blockedRetry && error.reason === 'fatal' ? new RetryError('fatal', error.attempts, failure, plan.blocked, error.failures, error.omittedFailures) : error;
    if (isHttpStatusError(failure) && failure.response === pending) {
      // fetch semantics: a 503 is a response. The caller gets the last one, with the reason on record.
      if (caller !== undefined) link?.followCaller(caller, pending);
      recordRetryInfo(pending, { attempts: explained.attempts, reason: explained.reason, error: explained });
      giveUp(config, plan, explained.reason, explained.attempts, pending, explained);
      return pending;
    }
    if (pending !== undefined) discard(pending);
    giveUp(config, plan, explained.reason, explained.attempts, undefined, explained);
    throw explained;
  }
  if (caller !== undefined) link?.followCaller(caller, response);
  recordRetryInfo(response, { attempts, reason: undefined, error: undefined });
  return response;
}

function giveUp(config: HttpConfig, plan: Plan, reason: GiveUpReason, attempts: number, response: Response | undefined, error: unknown): void {
  if (config.onGiveUp === undefined) return;
  const event = { method: plan.method, url: plan.url, reason, attempts, status: response?.status, response, error };
  callHook(config.onGiveUp, event, 'onGiveUp', config.onHookError);
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
 * - **Bodies**: a string, bytes, `Blob`, `URLSearchParams`, `FormData` or a `Request`'s body is
 *   sent whole on every attempt (a `Request` is cloned per attempt). A stream body is sent once
 *   and not retried (reason `'fatal'`, the message says why) unless `bodyFactory` is given. An
 *   empty body is never sent in place of a consumed one.
 * - **Discarded responses** have their bodies cancelled before the wait, so their connections are
 *   freed.
 * - **Abort**: the request's `signal` (in `init` or the `Request`) aborts waits and the attempt in
 *   flight; the promise rejects with the signal's reason, as fetch does. `attemptTimeoutMs` aborts
 *   only the attempt, which is then a retryable failure.
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
 *   never throws synchronously).
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
  return (input, init, callOptions) => {
    // As fetch: a bad argument rejects, it never throws synchronously.
    try {
      const call = parseCallOptions(callOptions, 'withRetry', true);
      return run(fetchFn, config, plan(config, input, init, call, 'withRetry'));
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
  const call = parseCallOptions(options, 'fetchWithRetry', false);
  return run((i, n) => globalThis.fetch(i, n), config, plan(config, input, init, call, 'fetchWithRetry'));
}
