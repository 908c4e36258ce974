/**
 * The HTTP retry semantics every client adapter shares (fetch, undici, axios): which requests may
 * be sent again, which responses are failures and what they hint, how attempts are driven by
 * `retry()`, and what is reported. An adapter supplies only its client's mechanics — sending one
 * attempt, reading a status and a header, discarding a response — as an {@link HttpExchange}.
 */
import type { RetryableInfo, RetryableOverride } from '../core/classify/classify.js';
import { isGivenUp, markDoNotRetry } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { AttemptTimeoutError, RetryError, isRetryError, type GiveUpReason } from '../core/retry/errors.js';
import { callHook, type RetryEvent } from '../runtime/hooks.js';
import { retryWithSettings, type RetryContext } from '../runtime/retry.js';
import type { RetrySettings } from '../runtime/retry-options.js';
import { CallTelemetry, type AttemptContext } from '../runtime/telemetry.js';
import { hostKey } from '../runtime/keyed-breakers.js';
import { bodyKind } from './body.js';
import { AttemptLink } from './attempt-link.js';
import { idempotencyKeyOption, type HttpAttemptChange, type HttpConfig, type IdempotencyKeyOption } from './options.js';
import { retryAfterFromHeaders } from './retry-after.js';
import { HttpStatusError, hasDoNotRetryHeader, isHttpStatusError, type StatusLike } from './status-error.js';

/** @internal Reads one response header (lower-case name); `null` when absent. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * @internal One logical request as a client adapter sends it. `R` is the client's response (head):
 * a fetch `Response`, undici's response head, an `AxiosResponse`.
 */
export interface HttpExchange<R extends StatusLike> {
  /** `'fetch'`, `'undici'`, `'axios'`: telemetry's `client`. */
  readonly client: string;
  readonly method: string;
  readonly url: string;
  /** The caller's signal, if any. */
  readonly signal: AbortSignal | undefined;
  /**
   * For a client whose caller aborts another way (undici's handler): the caller's signal, made when
   * the first attempt has failed and the call goes on (a success never needs one). The client
   * aborts the first attempt itself.
   */
  lateSignal?(): AbortSignal;
  /** Why this request may not be sent twice; `undefined` when it may be retried. */
  readonly blocked: string | undefined;
  /**
   * Sends attempt `attempt`, aborted by `signal` (`undefined`: nothing can abort it), with `headers`
   * (lower-case names, from `beforeAttempt`) set over the request's; resolves once the response
   * head is there. With a trace context (`traced`), the attempt's request also carries the headers
   * `traced.inject` writes (the caller runs `send` inside `traced.run`).
   */
  send(attempt: number, signal: AbortSignal | undefined, headers: Readonly<Record<string, string>> | undefined, traced?: AttemptContext): Promise<R>;
  headers(response: R): HeaderReader;
  /** Lets go of a response nobody will read, freeing its connection. */
  discard(response: R): void;
  /**
   * Whether the response, once returned, still has a body whose reading the caller's signal must
   * abort (fetch semantics). Absent: never (the adapter reads or streams the body itself).
   */
  followsCaller?(response: R): boolean;
  /** A client's own transient failures that `retry()`'s classification does not know (e.g. axios's `ERR_NETWORK`). */
  isTransient?(error: unknown): boolean;
  /** Called with the response the call returns, before any hook hears of it; `gaveUp` as in {@link ExchangeResult}. */
  record?(response: R, attempts: number, gaveUp: RetryError | undefined): void;
}

/** @internal How a call that resolved came about. */
export interface ExchangeResult<R> {
  readonly response: R;
  readonly attempts: number;
  /** Set when `response` (a retryable status) is returned because retrying stopped: why, in words. */
  readonly gaveUp: RetryError | undefined;
}

/**
 * @internal Whether a response must not be retried: it carries the "overloaded; don't retry" header
 * (`X-Herdless-Retry: no`), or an inner herdless layer gave up on it (`isGivenUp`). The one place
 * every adapter recognises it, so that layers never multiply attempts.
 */
export function isGivenUpResponse(response: object, headers: HeaderReader): boolean {
  return hasDoNotRetryHeader(headers) || isGivenUp(response);
}

/**
 * @internal A response as the failure of an attempt, or `undefined` when the call accepts it: a
 * retried status becomes an {@link HttpStatusError} with the server's hint (on every retried status:
 * RFC 9110 §10.2.3 lets any response carry `Retry-After`; `ignoreHints` is `retry()`'s business) and
 * the "do not retry" mark when the response carries it.
 */
export function responseFailure<R extends StatusLike>(config: HttpConfig, response: R, headers: HeaderReader): HttpStatusError<R> | undefined {
  if (!config.statuses.has(response.status)) return undefined;
  const failure = new HttpStatusError(response, retryAfterFromHeaders(headers, config.now()));
  if (isGivenUpResponse(response, headers)) markDoNotRetry(failure);
  return failure;
}

/** @internal Why a body stops a request from being retried, or `undefined`. */
export function bodyBlock(body: unknown): string | undefined {
  return bodyKind(body) === 'stream' ? 'the request body is a stream, which can be sent only once; pass bodyFactory to retry it' : undefined;
}

/**
 * @internal The idempotency rule: a method outside `retryMethods` is retried only with an
 * `Idempotency-Key` — its own (`hasKey`), or one the option generates (`key`, to be added to every
 * attempt). Otherwise `blocked` says why.
 */
export function idempotency(
  config: HttpConfig,
  method: string,
  hasKey: boolean,
  callOption: IdempotencyKeyOption | undefined,
  owner: string,
): { readonly key: string | undefined; readonly blocked: string | undefined } {
  if (config.methods.has(method) || hasKey) return NOT_BLOCKED;
  const option = callOption === undefined ? config.idempotencyKey : idempotencyKeyOption(owner, callOption);
  if (typeof option !== 'function') {
    return { key: undefined, blocked: `${method} is not idempotent: it is retried only with an Idempotency-Key header (send one, or set idempotencyKey: true)` };
  }
  const key = option();
  if (typeof key !== 'string' || key === '') throw new InvalidOptionError(owner, 'idempotencyKey', key, 'must return a non-empty string');
  return { key, blocked: undefined };
}

const NOT_BLOCKED = /* @__PURE__ */ Object.freeze({ key: undefined, blocked: undefined });

/**
 * @internal Runs one logical request: `retry()` drives the attempts; responses with a retried
 * status become failures it can retry, and the last one comes back as the result when retrying
 * stops. Rejects with the caller's abort reason (after discarding what is pending), with a
 * `RetryError` when no response is left to return, or with what the `retryable` override threw.
 */
export async function runExchange<R extends StatusLike>(config: HttpConfig, exchange: HttpExchange<R>, owner: string): Promise<ExchangeResult<R>> {
  let attempts = 0;
  /** The retryable-status response of the latest attempt, until it is discarded or returned. */
  let pending: R | undefined;
  /** The caller's signal: given, or made late (see HttpExchange.lateSignal). */
  let caller = exchange.signal;
  /** The link of the latest attempt (see AttemptLink), when the caller has a signal. */
  let link: AttemptLink | undefined;
  /** What the previous attempt failed with, for beforeAttempt. */
  let lastError: unknown;
  /** beforeAttempt threw: its failure ends the call. */
  let hookFailed = false;
  /** Whether the one resend of a refreshStatuses response has been spent. */
  let refreshed = false;
  const refresh = config.refreshStatuses;
  const hook = config.beforeAttempt;
  const plain = config.settings.plain;
  const tel =
    config.telemetry === undefined
      ? undefined
      : new CallTelemetry(
          config.telemetry,
          { layer: 'http', client: exchange.client, method: exchange.method, url: exchange.url, name: config.name ?? hostOf(exchange.url) },
          config.clock,
          config.onHookError,
        );

  /** The failure that resends a refreshStatuses response: stale credentials, not a failing dependency. */
  let refreshFailure: HttpStatusError<R> | undefined;

  /** beforeAttempt's headers for this attempt; its failure ends the call (nothing is sent). */
  const prepare = async (context: RetryContext): Promise<Readonly<Record<string, string>> | undefined> => {
    if (hook === undefined) return undefined;
    try {
      return attemptHeaders(await hook({ method: exchange.method, url: exchange.url, attempt: context.attempt, status: isHttpStatusError(lastError) ? lastError.status : undefined, error: lastError }), owner);
    } catch (error) {
      hookFailed = true;
      throw error;
    }
  };

  /** One attempt, sent with `headers`: resolves with an accepted response, rejects with a failure. */
  const attempt = async (context: RetryContext, headers: Readonly<Record<string, string>> | undefined): Promise<R> => {
    // Nothing can abort an attempt of a plain call without a caller's signal: no signal is made for it.
    const signal = caller === undefined && plain ? undefined : context.signal;
    const traced = tel === undefined ? undefined : tel.attemptStart(context.attempt);
    link?.settled();
    link = caller === undefined || signal === undefined || caller === signal ? undefined : new AttemptLink(signal);
    const attemptSignal = link === undefined ? signal : link.signal;
    let response: R;
    try {
      response = await (traced === undefined
        ? exchange.send(context.attempt, attemptSignal, headers)
        : traced.run(() => exchange.send(context.attempt, attemptSignal, headers, traced)));
    } catch (error) {
      if (tel !== undefined) tel.attemptEnd(context.attempt, attemptOutcome(caller, error), error);
      throw error;
    } finally {
      link?.settled();
    }
    if (signal !== undefined && signal.aborted) {
      // A late answer to an attempt that timed out or was aborted: nobody will read it.
      exchange.discard(response);
      if (tel !== undefined) tel.attemptEnd(context.attempt, attemptOutcome(caller, signal.reason), signal.reason, response.status);
      throw signal.reason;
    }
    // Headers are read only for a listed status (the success path reads none).
    let failure = config.statuses.has(response.status) ? responseFailure(config, response, exchange.headers(response)) : undefined;
    if (failure === undefined && refresh !== undefined && !refreshed && refresh.has(response.status)) {
      // Stale credentials: sent again at once (a 0 ms hint), once, after beforeAttempt has seen the status.
      refreshed = true;
      failure = refreshFailure = new HttpStatusError(response, 0);
    }
    if (tel !== undefined) tel.attemptEnd(context.attempt, failure === undefined ? 'success' : 'failure', failure, response.status);
    if (failure === undefined) return response;
    pending = response;
    throw failure;
  };

  // Each attempt goes through the breaker of the request's host (retry outside, breaker inside).
  // beforeAttempt runs before the breaker is asked (its failure is not the dependency's), and the
  // breaker counts a refreshStatuses response as the response it is, not as a failure.
  const breaker = config.breaker?.get(hostKey(exchange.url));
  /** The breaker's view of the caller's abort (a call through a breaker has its signal from the start). */
  let abort: { signal: AbortSignal } | undefined;
  const keepRefresh = (error: unknown): R => {
    if (refreshFailure !== undefined && error === refreshFailure) return refreshFailure.response;
    throw error;
  };
  const operation = async (context: RetryContext): Promise<R> => {
    attempts = context.attempt;
    const headers = await prepare(context);
    if (breaker === undefined) return attempt(context, headers);
    const response = await breaker.execute(() => attempt(context, headers).then(undefined, keepRefresh), abort);
    if (refreshFailure !== undefined && response === refreshFailure.response) throw refreshFailure;
    return response;
  };

  /** The request would have been retried but may not be sent twice: the give-up says why. */
  let blockedRetry = false;
  const user = config.retryable;
  const retryable: RetryableOverride = (error: unknown, info: RetryableInfo) => {
    // A listed status is retryable by definition; other failures keep retry()'s classification.
    const transient = isHttpStatusError(error) || info.transient || exchange.isTransient?.(error) === true;
    if (hookFailed) return false;
    if (exchange.blocked !== undefined) {
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
    lastError = error;
    const status = isHttpStatusError(error) ? error.status : undefined;
    if (status !== undefined) {
      exchange.discard((error as HttpStatusError<R>).response);
      pending = undefined;
    }
    if (tel !== undefined) tel.retry(event.attempt, event.delayMs, event.delaySource, error);
    if (config.onRetry === undefined) return undefined;
    return config.onRetry({
      method: exchange.method,
      url: exchange.url,
      attempt: event.attempt,
      status,
      error,
      delayMs: event.delayMs,
      delaySource: event.delaySource,
    });
  };

  const giveUp = (reason: GiveUpReason, count: number, response: R | undefined, error: unknown): void => {
    if (tel !== undefined) tel.giveUp(reason, count, error, reason === 'throttled' ? config.retryOptions.throttle : config.retryOptions.budget, response?.status);
    // Stryker disable next-line ConditionalExpression: callHook returns at once on an undefined hook; this spares building the event
    if (config.onGiveUp === undefined) return;
    const event = { method: exchange.method, url: exchange.url, reason, attempts: count, status: response?.status, response, error };
    callHook(config.onGiveUp, event, 'onGiveUp', config.onHookError);
  };

  // The adapter's settings, read once; this call's own classification and hook set over them.
  const settings = Object.create(config.settings) as RetrySettings;
  settings.retryable = retryable;
  settings.onRetry = onRetry;
  let late: (() => AbortSignal) | undefined;
  if (exchange.lateSignal !== undefined) {
    // Only a lean call has a first attempt without a signal; any other needs the signal from the
    // start — and so does a call through a breaker, which must tell the caller's abort from a failure.
    if (config.settings.lean && breaker === undefined) {
      late = (): AbortSignal => {
        caller = exchange.lateSignal!();
        return caller;
      };
    } else caller = exchange.lateSignal();
  }
  if (caller !== undefined) abort = { signal: caller };
  let response: R;
  try {
    response = await retryWithSettings(operation, settings, caller, late);
  } catch (error) {
    if (caller !== undefined && caller.aborted && error === caller.reason) {
      if (pending !== undefined) exchange.discard(pending);
      giveUp('aborted', attempts, undefined, error);
      throw error;
    }
    if (!isRetryError(error)) {
      // The retryable override or beforeAttempt threw: retry() rejects with what it threw.
      if (pending !== undefined) exchange.discard(pending);
      throw error;
    }
    const failure: unknown = error.cause;
    const explained = blockedRetry && error.reason === 'fatal' ? new RetryError('fatal', error.attempts, failure, exchange.blocked, error.failures, error.omittedFailures) : error;
    if (pending !== undefined && isHttpStatusError<R>(failure) && failure.response === pending) {
      // A 503 is a response: the caller gets the last one, with the reason on record.
      follow(pending);
      exchange.record?.(pending, explained.attempts, explained);
      giveUp(explained.reason, explained.attempts, pending, explained);
      return { response: pending, attempts: explained.attempts, gaveUp: explained };
    }
    if (pending !== undefined) exchange.discard(pending);
    giveUp(explained.reason, explained.attempts, undefined, explained);
    throw explained;
  }
  follow(response);
  exchange.record?.(response, attempts, undefined);
  return { response, attempts, gaveUp: undefined };

  function follow(returned: R): void {
    if (caller !== undefined && link !== undefined && exchange.followsCaller?.(returned) === true) link.followCaller(caller, returned);
  }
}

/** RFC 9110 §5.1: a field name is a token. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * @internal What beforeAttempt returned, checked: `undefined`, or `{ headers }` with token names
 * (lower-cased here) and string values without CR, LF or NUL. Anything else fails the request,
 * naming `beforeAttempt`.
 */
export function attemptHeaders(change: HttpAttemptChange | undefined | void, owner: string): Readonly<Record<string, string>> | undefined {
  if (change === undefined || change === null) return undefined;
  if (typeof change !== 'object' || Array.isArray(change)) throw new InvalidOptionError(owner, 'beforeAttempt', change, 'must return undefined or { headers }');
  for (const key in change) if (key !== 'headers') throw new InvalidOptionError(owner, 'beforeAttempt', change, `must return undefined or { headers } (${key} is not a change it may make)`);
  const given = change.headers;
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new InvalidOptionError(owner, 'beforeAttempt', given, 'must return headers as an object of name → string value');
  const out: Record<string, string> = {};
  for (const name in given) {
    const value: unknown = (given as Record<string, unknown>)[name];
    if (!FIELD_NAME.test(name)) throw new InvalidOptionError(owner, 'beforeAttempt', name, 'must return header names that are HTTP tokens (RFC 9110 §5.1)');
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw new InvalidOptionError(owner, 'beforeAttempt', value, `must return string header values without CR, LF or NUL (header ${name})`);
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** @internal A URL's host (with its port when one is given), the default dependency name; the URL itself when it has none. */
export function hostOf(url: string): string {
  try {
    const host = new URL(url).host;
    return host === '' ? url : host;
  } catch {
    return url;
  }
}

function attemptOutcome(caller: AbortSignal | undefined, error: unknown): 'aborted' | 'timeout' | 'failure' {
  if (caller !== undefined && caller.aborted) return 'aborted';
  return error instanceof AttemptTimeoutError ? 'timeout' : 'failure';
}
