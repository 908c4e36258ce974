import type { AxiosAdapter, AxiosResponse } from 'axios';
import { parseHttpHedgingOptions, type HttpHedgingOptions } from '../http/hedge.js';
import { runHedgedExchange } from '../http/hedged-exchange.js';
import { axiosAdapter, splitAdapter } from './adapter.js';

/**
 * Options of {@link hedgingAdapter}: those of `withHedging()` (`delayMs` required, `maxAttempts`,
 * `budget`, `throttle`, `breaker`, `retryMethods`, `retryStatuses`, `idempotencyKey`…), plus the `adapter` that sends each attempt.
 * @example
 * ```ts
 * const options: AxiosHedgingOptions = { delayMs: 50, budget: retryRatioBudget({ ratio: 0.1 }) };
 * ```
 */
export type AxiosHedgingOptions = HttpHedgingOptions & {
  /** The adapter that sends each attempt. Default: axios's own, resolved at the first request. */
  adapter?: AxiosAdapter | undefined;
};

/**
 * An axios adapter that hedges requests with `withHedging()`'s semantics: when the response has not
 * arrived `delayMs` after an attempt, another attempt is sent through axios's own adapter (or
 * `options.adapter`), up to `maxAttempts`; the first acceptable response wins and the others are
 * aborted, their bodies never read (drained up to 256 KiB, or destroyed).
 *
 * - Only requests that may be sent twice: `retryMethods`, or any method with an `Idempotency-Key`
 *   (its own, or one `idempotencyKey: true` adds). A `POST` without one is sent once.
 * - A retried status (408, 429, 500, 502, 503, 504) or a network failure (`ERR_NETWORK`, system error
 *   codes) is a failed attempt: the next hedge goes at once. When every attempt ends with a retried
 *   status, that response is settled by `validateStatus` as axios does.
 * - Every hedge beyond the first is admitted by `budget`; the request's `signal` aborts every attempt.
 * - With `throttle`, every attempt is asked first (a refused first try rejects with a `HedgeError`,
 *   reason `'throttled'`, unsent); with `breaker`, every attempt goes through it (an open circuit
 *   stops further hedges).
 *
 * @throws InvalidOptionError for an invalid option (names the field and the value).
 * @example
 * ```ts
 * import axios from 'axios';
 * import { hedgingAdapter } from 'herdless/axios';
 * const search = axios.create({ baseURL: 'https://search.internal', adapter: hedgingAdapter({ delayMs: 50 }) });
 * const { data } = await search.get('/q', { params: { term: 'herd' } });
 * ```
 */
export function hedgingAdapter(options: AxiosHedgingOptions): AxiosAdapter {
  const owner = 'hedgingAdapter';
  const { base, httpOptions } = splitAdapter(options, owner);
  const { config, hedger } = parseHttpHedgingOptions(httpOptions as HttpHedgingOptions, owner, ['adapter']);
  return axiosAdapter(owner, config, base, (c, exchange) => runHedgedExchange<AxiosResponse>(hedger, c, exchange));
}
