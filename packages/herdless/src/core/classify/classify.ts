import { isHerdlessError } from '../errors.js';
import { GRPC_RESOURCE_EXHAUSTED, GRPC_UNAVAILABLE, NETWORK_ERROR_MESSAGE_PREFIXES, NETWORK_ERROR_MESSAGES, RETRYABLE_ERROR_CODES, RETRYABLE_GRPC_CODES, RETRYABLE_HTTP_STATUSES } from './data.js';
import { isGivenUp, serverHint } from './hints.js';
import { CIRCUIT_OPEN_VERDICT, DO_NOT_RETRY_VERDICT, FATAL, RETRYABLE, RETRYABLE_THROTTLED, RETRYABLE_TIMEOUT, retryAfter, type Verdict } from './verdict.js';

const CODES: ReadonlySet<unknown> = /* @__PURE__ */ new Set(RETRYABLE_ERROR_CODES);
const STATUSES: ReadonlySet<unknown> = /* @__PURE__ */ new Set(RETRYABLE_HTTP_STATUSES);
const GRPC_CODES: ReadonlySet<unknown> = /* @__PURE__ */ new Set(RETRYABLE_GRPC_CODES);

/**
 * What the `retryable` override is told about a failure besides the error itself.
 * @example
 * ```ts
 * const retryable = (e: unknown, info: RetryableInfo) => info.transient && info.attempt < 3;
 * ```
 */
export interface RetryableInfo {
  /** The attempt that failed, counting from 1. */
  readonly attempt: number;
  /** The default decision for this error: {@link isTransientError}. */
  readonly transient: boolean;
}

/**
 * The one override of the classification: `(error, { attempt, transient }) => boolean | undefined`.
 * Return `true` to retry, `false` to stop (reason `'fatal'`), `undefined` to keep the default
 * decision `transient`. So `(e, { transient }) => transient || e.status === 409` extends the
 * defaults and `(e) => e instanceof MyTransientError` replaces them.
 *
 * It does not see the caller's own abort (that always ends the call) and cannot overrule a
 * "do not retry" hint. If it throws, `retry()` rejects with what it threw.
 *
 * @example
 * ```ts
 * const onlyMine: RetryableOverride = (e) => e instanceof MyTransientError;
 * ```
 */
export type RetryableOverride = (error: unknown, info: RetryableInfo) => boolean | undefined;

/** Callers pass an object: the error itself, or a `cause` the loop below has checked. */
function hasTransientCode(value: object): boolean {
  if (CODES.has((value as { code?: unknown }).code)) return true;
  // Node rejects a failed connection to a dual-stack name with an AggregateError, one error per address.
  const errors = (value as { errors?: unknown }).errors;
  if (Array.isArray(errors)) {
    for (const e of errors) if (typeof e === 'object' && e !== null && CODES.has((e as { code?: unknown }).code)) return true;
  }
  return false;
}

const MESSAGES: ReadonlySet<unknown> = /* @__PURE__ */ new Set(NETWORK_ERROR_MESSAGES);

/** A failed connection's message ({@link NETWORK_ERROR_MESSAGES}) in a runtime that gives no code. */
function isNetworkMessage(value: object): boolean {
  const message = (value as { message?: unknown }).message;
  if (MESSAGES.has(message)) return true;
  return typeof message === 'string' && NETWORK_ERROR_MESSAGE_PREFIXES.some((prefix) => message.startsWith(prefix));
}

/**
 * A `TypeError` from `fetch()` is a failed connection when it, or a `cause` up to three levels down,
 * carries a transient code (Bun: on the TypeError; Node: on the cause) or — when none of them carries
 * any code — a network-failure message (browsers, Deno, Workers). Any other TypeError is a bug.
 */
function isFailedConnection(error: object): boolean {
  let coded = false;
  let worded = false;
  let value: unknown = error;
  for (let depth = 0; depth < 4 && typeof value === 'object' && value !== null; depth++) {
    if (hasTransientCode(value)) return true;
    coded ||= (value as { code?: unknown }).code !== undefined;
    worded ||= isNetworkMessage(value);
    value = (value as { cause?: unknown }).cause;
  }
  // A code that is not transient (ENOTFOUND, a TLS certificate error) wins over a generic message.
  return worded && !coded;
}

/** An HTTP status in `statuses`, in `status` or `statusCode` of the error or of its `response`. */
function hasStatus(error: object, statuses: ReadonlySet<unknown>): boolean {
  const e = error as { status?: unknown; statusCode?: unknown; response?: unknown };
  if (statuses.has(e.status) || statuses.has(e.statusCode)) return true;
  const response = e.response;
  if (typeof response === 'object' && response !== null) {
    const r = response as { status?: unknown; statusCode?: unknown };
    return statuses.has(r.status) || statuses.has(r.statusCode);
  }
  return false;
}

/** Numeric gRPC status `code` on an error shaped like a gRPC status (grpc-js, or Connect's ConnectError): a bare number may mean anything else. */
function hasGrpcCode(error: object, code: number): boolean {
  const e = error as { code?: unknown; name?: unknown };
  return e.code === code && ('details' in e || 'metadata' in e || e.name === 'ConnectError');
}

function isGrpcUnavailable(error: object): boolean {
  return GRPC_CODES.has((error as { code?: unknown }).code) || hasGrpcCode(error, GRPC_UNAVAILABLE);
}

const TIMEOUT_CODES: ReadonlySet<unknown> = /* @__PURE__ */ new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** A timed-out attempt: retry budgets such as the AWS retry quota charge more for its retry. */
function isTimeout(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (isHerdlessError(error, 'ERR_HERDLESS_ATTEMPT_TIMEOUT') || TIMEOUT_CODES.has((error as { code?: unknown }).code)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return typeof cause === 'object' && cause !== null && TIMEOUT_CODES.has((cause as { code?: unknown }).code);
}

/**
 * The default classification, as data ({@link RETRYABLE_ERROR_CODES}, {@link NETWORK_ERROR_MESSAGES},
 * {@link RETRYABLE_HTTP_STATUSES}, {@link RETRYABLE_GRPC_CODES}): true for a failure that may succeed if the same request is sent
 * again later.
 *
 * True for:
 * - an error whose `code` is a transient network code (`ECONNRESET`, `UND_ERR_SOCKET`, …), or an
 *   `AggregateError` with such a member;
 * - a `TypeError` from `fetch()` for a failed connection: with such a code on itself (Bun) or on a
 *   `cause` up to three levels deep (Node's `TypeError('fetch failed')`), or, when neither it nor a
 *   `cause` has any code, with a message of {@link NETWORK_ERROR_MESSAGES} on itself or a `cause`
 *   (browsers, Deno, Cloudflare Workers; a failed CORS check looks the same and is retried too).
 *   Any other `TypeError` is a programming bug and is fatal;
 * - an attempt timeout (`AttemptTimeoutError`, from `attemptTimeoutMs`);
 * - an error carrying HTTP status 408, 429, 500, 502, 503 or 504 in `status`, `statusCode`,
 *   `response.status` or `response.statusCode`;
 * - an error carrying gRPC status `UNAVAILABLE`.
 *
 * False for everything else, including non-objects (a thrown string), other `TypeError`s,
 * `AbortError`s and other 4xx statuses. Sources: Amazon Builders' Library "Timeouts, retries, and
 * backoff with jitter" (client errors are not retried), gRFC A6 (`retryableStatusCodes`).
 *
 * @example
 * ```ts
 * isTransientError(Object.assign(new Error('busy'), { status: 503 })); // true
 * isTransientError(new TypeError('Failed to fetch')); // true (a browser's failed connection)
 * isTransientError(new TypeError('x is not a function')); // false
 * ```
 */
export function isTransientError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // A TypeError is a bug unless it is fetch()'s failed connection.
  if (error instanceof TypeError || (error as { name?: unknown }).name === 'TypeError') return isFailedConnection(error);
  if (hasTransientCode(error)) return true;
  if (hasStatus(error, STATUSES)) return true;
  if (isGrpcUnavailable(error)) return true;
  return isHerdlessError(error, 'ERR_HERDLESS_ATTEMPT_TIMEOUT');
}

const THROTTLING_STATUSES: ReadonlySet<unknown> = /* @__PURE__ */ new Set([429]);

/**
 * A throttling answer: HTTP 429 Too Many Requests (on the error, `statusCode`, or its `response`),
 * or gRPC RESOURCE_EXHAUSTED (the name, or code 8 on an error shaped like a gRPC status).
 */
function isThrottled(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  return hasStatus(error, THROTTLING_STATUSES) || (error as { code?: unknown }).code === 'RESOURCE_EXHAUSTED' || hasGrpcCode(error, GRPC_RESOURCE_EXHAUSTED);
}

/**
 * @internal Whether {@link classify} without an override gives anything but `fatal`: its steps 1
 * and 2 alone (a verdict is fatal only there), so a caller that needs no more (the breaker's default
 * failure test) reads no hint and leaves step 3 out of its bundle.
 */
export function isNotFatal(error: unknown): boolean {
  return isHerdlessError(error, 'ERR_HERDLESS_CIRCUIT_OPEN') || isGivenUp(error) || isTransientError(error);
}

/**
 * Turns a failure into a {@link Verdict} — the classification step `retry()` runs on every failed
 * attempt, in this order:
 * 1. a "do not retry" mark, on the error or on its `response` / `cause` ({@link isGivenUp}), gives `do-not-retry`;
 * 2. the decision: `override(error, { attempt, transient })` when given and it returns a boolean,
 *    else `transient` ({@link isTransientError}); `false` gives `fatal`;
 * 3. for a retryable error, the server hint ({@link serverHint}): `retryAfterMs` gives a hinted
 *    verdict, a malformed one gives `do-not-retry`; without a hint, a timeout (an
 *    `AttemptTimeoutError`, or code `ETIMEDOUT` / `UND_ERR_CONNECT_TIMEOUT` on the error or its
 *    `cause`) gives `{ kind: 'retryable', timeout: true }`, and a throttling answer (status 429,
 *    gRPC RESOURCE_EXHAUSTED) gives `{ kind: 'retryable', throttled: true }`.
 *
 * With `hints` false (the `ignoreHints` option), step 3 reads no `retryAfterMs` at all — neither a
 * wait nor a malformed value — and the backoff decides; the "do not retry" mark still applies.
 *
 * A hint never makes a fatal error retryable: a 404 with `retryAfterMs` is still fatal (gRFC A6
 * likewise ignores pushback on a non-retryable status).
 *
 * @param error what the attempt threw or rejected with.
 * @param override the `retryable` option, if any.
 * @param attempt the attempt that failed (from 1); passed on to `override`.
 * @param hints whether to read the server's `retryAfterMs` (default true).
 * @throws whatever `override` throws.
 * @example
 * ```ts
 * classify(Object.assign(new Error('slow down'), { status: 429, retryAfterMs: 1500 })); // { kind: 'retryable', retryAfterMs: 1500 }
 * ```
 */
export function classify(error: unknown, override?: RetryableOverride, attempt = 1, hints = true): Verdict {
  if (isHerdlessError(error, 'ERR_HERDLESS_CIRCUIT_OPEN')) return CIRCUIT_OPEN_VERDICT;
  if (isGivenUp(error)) return DO_NOT_RETRY_VERDICT;
  let retryable = isTransientError(error);
  if (override !== undefined) {
    const said = override(error, { attempt, transient: retryable });
    if (said !== undefined) retryable = said === true;
  }
  if (!retryable) return FATAL;
  const hint = hints ? serverHint(error) : undefined;
  if (hint === undefined) return isTimeout(error) ? RETRYABLE_TIMEOUT : isThrottled(error) ? RETRYABLE_THROTTLED : RETRYABLE;
  // The mark was handled above, so 'do-not-retry' here is a malformed retryAfterMs (gRFC A6: don't retry).
  return hint === 'do-not-retry' ? DO_NOT_RETRY_VERDICT : retryAfter(hint);
}
