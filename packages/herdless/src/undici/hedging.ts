import type { Dispatcher } from 'undici';
import { InvalidOptionError } from '../core/errors.js';
import { parseHttpHedgingOptions, type HttpHedgingOptions } from '../http/hedge.js';
import { runHedgedExchange } from '../http/hedged-exchange.js';
import { UndiciCall, type ExchangeRunner } from './interceptor.js';

/**
 * An undici interceptor (for `Dispatcher.compose`) that hedges idempotent requests with
 * `withHedging()`'s semantics: when the response head has not arrived `delayMs` after an attempt,
 * another attempt is dispatched, up to `maxAttempts`; the first acceptable response head wins and is
 * streamed to your handler, every other attempt is aborted, and any other response is drained (up
 * to 256 KiB, then aborted) so its connection is reused.
 *
 * - Only requests that may be sent twice: `retryMethods` (GET, HEAD, OPTIONS, PUT, DELETE, TRACE),
 *   or any method with an `Idempotency-Key` header (its own, or one `idempotencyKey: true` adds). A
 *   `POST` without one, or a stream body, is dispatched once.
 * - A status in `retryStatuses` is a failed attempt: the next hedge goes at once (after its
 *   `Retry-After`, if any); when every attempt ends with one, the last response is delivered.
 * - Every hedge beyond the first is admitted by `budget`; hedges carry `x-herdless-attempt`.
 * - With `throttle`, every attempt is asked first (a refused first try rejects with a `HedgeError`,
 *   reason `'throttled'`, unsent); with `breaker`, every attempt goes through it (an open circuit
 *   stops further hedges).
 * - The request's `signal` aborts every attempt.
 *
 * @param options see {@link HttpHedgingOptions}; `delayMs` is required.
 * @throws InvalidOptionError for an invalid option (names the field and the value).
 * @example
 * ```ts
 * import { Agent, request } from 'undici';
 * import { hedgingInterceptor } from 'herdless/undici';
 * const dispatcher = new Agent().compose(hedgingInterceptor({ delayMs: 50, budget: retryRatioBudget({ ratio: 0.1 }) }));
 * const { statusCode, body } = await request('https://search.internal/q?term=herd', { dispatcher });
 * ```
 */
export function hedgingInterceptor(options: HttpHedgingOptions): Dispatcher.DispatcherComposeInterceptor {
  const owner = 'hedgingInterceptor';
  const { config, hedger } = parseHttpHedgingOptions(options, owner);
  const run: ExchangeRunner = (c, exchange) => runHedgedExchange(hedger, c, exchange);
  return (dispatch) => {
    if (typeof dispatch !== 'function') throw new InvalidOptionError(owner, 'dispatch', dispatch, 'must be a function (use dispatcher.compose(hedgingInterceptor({ delayMs })))');
    return (opts, handler) => {
      new UndiciCall(dispatch, config, opts, handler as Dispatcher.DispatchHandler, run, owner).start();
      return true;
    };
  };
}
