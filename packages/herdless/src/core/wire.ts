import { InvalidOptionError } from './errors.js';

// The wire between herdless's layers: the header names a client (herdless/http and its undici and
// axios forms) and a server (herdless/server) read and write, so that one layer retries and the
// layers above it do not. Both sides import them from here; neither imports the other.

/**
 * `retry-after-ms`: a non-standard header some APIs send next to `Retry-After`, giving the wait in
 * milliseconds (digits, optionally with a fractional part). When valid it is used in place of
 * `Retry-After`, since it is the more precise of the two.
 *
 * @example
 * ```ts
 * response.headers.get(RETRY_AFTER_MS_HEADER); // e.g. '1500'
 * ```
 */
export const RETRY_AFTER_MS_HEADER = 'retry-after-ms';

/**
 * `X-Herdless-Retry`: the HTTP form of the "overloaded; don't retry" mark (Google SRE book,
 * "Handling Overload"). A response with `X-Herdless-Retry: no` (case-insensitive, surrounding
 * spaces ignored; the header is a comma-separated list per RFC 9110 §5.3, so `no, no` — the header
 * sent twice — and any list holding `no` count too) is returned at once — never retried, whatever its status or `Retry-After` — and
 * the call's reason is `'do-not-retry'`. A server (or a proxy in front of it) sends it when it is
 * overloaded and retries would only add load; one layer retries, the layers above it do not.
 * Any other value is ignored.
 *
 * @example
 * ```ts
 * // server side, shedding load:
 * res.writeHead(503, { [DO_NOT_RETRY_HEADER]: 'no' });
 * ```
 */
export const DO_NOT_RETRY_HEADER = 'x-herdless-retry';

/**
 * The request header `withRetry()` sends on every retry with the attempt's number (from 2; a
 * request without it is a first attempt): `x-herdless-attempt: 2`. The server side
 * (`herdless/server`) reads it to count the retries it receives and to answer a shed retry with
 * `X-Herdless-Retry: no` (SRE book, "Handling Overload": the request metadata carries how many
 * times it was already tried). The model is gRPC's `grpc-previous-rpc-attempts` (gRFC A6); AWS
 * SDKs send `amz-sdk-request: attempt=N; max=M`. Rename it or turn it off with `withRetry()`'s
 * `attemptHeader` option.
 *
 * @example
 * ```ts
 * const attempt = Number(req.headers[ATTEMPT_HEADER] ?? 1); // node:http, lower-case names
 * ```
 */
export const ATTEMPT_HEADER = 'x-herdless-attempt';

/** @internal An HTTP field name (RFC 9110 §5.1: a token), lower-cased; `false` → none. */
export function headerNameOption(owner: string, field: string, value: unknown, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  if (value === false) return undefined;
  if (typeof value !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(value)) {
    throw new InvalidOptionError(owner, field, value, 'must be an HTTP header name (a token such as "x-attempt") or false');
  }
  return value.toLowerCase();
}
