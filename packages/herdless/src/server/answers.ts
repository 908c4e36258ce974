import { isGivenUp } from '../core/classify/hints.js';
import { isRetryError } from '../core/retry/errors.js';
import { DO_NOT_RETRY_HEADER, RETRY_AFTER_MS_HEADER } from '../core/wire.js';
import type { LoadShedderConfig } from './options.js';

/**
 * The status and headers of an answer that is not the handler's own: a shed request, or a
 * downstream give-up passed on.
 * @example
 * ```ts
 * const { status, headers }: ServerAnswer = giveUpAnswer(error)!;
 * ```
 */
export interface ServerAnswer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * @internal The attempt number a request header says (1 when absent or unreadable: a header that
 * does not parse is no reason to treat a request as a retry).
 */
export function parseAttempt(value: string | readonly string[] | null | undefined): number {
  const text = Array.isArray(value) ? value[0] : value;
  // Stryker disable next-line ConditionalExpression: undefined and null, read by the pattern as text, do not match it either
  if (typeof text !== 'string') return 1;
  const match = /^\s*(\d{1,9})\s*$/.exec(text);
  return match === null ? 1 : Math.max(1, Number(match[1]));
}

/**
 * @internal Who sent `request`, by the `clientKey` option (`undefined`: unknown). Who sent it is
 * only a weight in the retry share: a failing clientKey makes it unknown, reported, never a crash.
 */
export function requestSource(config: LoadShedderConfig, request: unknown): string | undefined {
  const key = config.clientKey;
  if (key === undefined) return undefined;
  let value: unknown;
  try {
    value = key(request as never);
  } catch (error) {
    config.onHandlerError(error);
    return undefined;
  }
  return typeof value === 'string' ? value : undefined;
}

/**
 * @internal The answer to a shed request: 503, the wait (jittered unless turned off), and the mark
 * when it must not be retried.
 *
 * `retry-after-ms` is drawn uniformly from [`retryAfterMs`, 2 × `retryAfterMs`). `Retry-After`
 * allows only whole seconds (RFC 9110 §10.2.3), and rounding every draw up would tell a whole
 * burst the same second (all of (1 s, 2 s) becomes 2): the clients that read only the standard
 * header would come back together. So the seconds are rounded at random instead — up with the
 * probability of the fraction (floor(ms / 1000) + 1 with probability ms / 1000 − floor), which
 * keeps the mean wait of the draw — and never below `retryAfterMs` rounded up.
 */
export function shedAnswer(config: LoadShedderConfig, doNotRetry: boolean): ServerAnswer {
  const floor = config.retryAfterMs;
  let ms = floor;
  let seconds = Math.ceil(floor / 1000);
  if (config.retryAfterJitter) {
    const exact = floor * (1 + config.random.random());
    ms = Math.ceil(exact);
    const whole = Math.floor(exact / 1000);
    seconds = Math.max(seconds, config.random.random() < exact / 1000 - whole ? whole + 1 : whole);
  }
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': String(seconds),
    [RETRY_AFTER_MS_HEADER]: String(ms),
  };
  if (doNotRetry) headers[DO_NOT_RETRY_HEADER] = 'no';
  return { status: 503, headers };
}

/** The first status in [400, 599] found on `value`, its `response`, its `cause`, or the cause's `response` or `cause` (three levels). */
function downstreamStatus(value: unknown): number | undefined {
  let candidates: unknown[] = [value];
  // Three levels: the value; its response and cause; their responses and causes (a RetryError
  // wrapping an HTTP client's error that holds the response).
  for (let depth = 0; depth < 3; depth++) {
    // Stryker disable next-line ArrayDeclaration: a string in the list is skipped as a non-object
    const next: unknown[] = [];
    for (const c of candidates) {
      if (typeof c !== 'object' || c === null) continue;
      const status = (c as { status?: unknown }).status;
      if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599) return status;
      next.push((c as { response?: unknown }).response, (c as { cause?: unknown }).cause);
    }
    candidates = next;
  }
  return undefined;
}

/**
 * The answer a server gives its own caller when its downstream call through herdless gave up
 * (`isGivenUp(value)`: a `RetryError`, a given-up `Response`, an error wrapping one): the
 * downstream status (from the value, its `response` or `cause`; 503 when none in 400–599 is
 * found), and `X-Herdless-Retry: no` when `propagate` (default true), so that the layers above
 * do not retry what the layer below already retried (SRE book, "Handling Overload"). `undefined`
 * for anything else (an ordinary failure of your handler), and for a `RetryError` with reason
 * `'fatal'` that carries no downstream status (a bug wrapped by `retry()`: a 500, not a 503).
 *
 * @param value what the handler threw, or the response it got.
 * @param propagate add the "don't retry" mark; false on the edge server, whose callers should retry.
 * @example
 * ```ts
 * app.get('/orders', async (req, res) => {
 *   try { res.json(await loadOrders()); }
 *   catch (error) {
 *     const answer = giveUpAnswer(error);
 *     if (answer === undefined) throw error;
 *     res.writeHead(answer.status, answer.headers).end();
 *   }
 * });
 * ```
 */
export function giveUpAnswer(value: unknown, propagate = true): ServerAnswer | undefined {
  if (!isGivenUp(value)) return undefined;
  const status = downstreamStatus(value);
  // A fatal failure with no downstream status (a TypeError from a bug, wrapped by retry()) is this
  // server's own fault, not an overloaded dependency: it stays a 500, reported.
  if (status === undefined && isRetryError(value) && value.reason === 'fatal') return undefined;
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  if (propagate) headers[DO_NOT_RETRY_HEADER] = 'no';
  return { status: status ?? 503, headers };
}
