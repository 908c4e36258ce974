import { isRetryError } from '../core/retry/errors.js';
import { HEDGE_REPORT, type HedgeCallReport, type Hedger } from '../runtime/hedge.js';
import { CallTelemetry, type AttemptContext } from '../runtime/telemetry.js';
import { AttemptLink } from './attempt-link.js';
import { hostOf, responseFailure, type ExchangeResult, type HttpExchange } from './exchange.js';
import type { HttpConfig } from './options.js';
import { HttpStatusError, isHttpStatusError, type StatusLike } from './status-error.js';

/** Failures a client adapter calls transient (axios's `ERR_NETWORK`…), which the classification does not know. */
const CLIENT_TRANSIENT = /* @__PURE__ */ new WeakSet<object>();

/** @internal A failure an adapter's `isTransient` recognised during a hedged request. */
export function isClientTransient(error: unknown): boolean {
  return typeof error === 'object' && error !== null && CLIENT_TRANSIENT.has(error);
}

/** The status an HTTP attempt's outcome carries: a response's, or a retried status's (`HttpStatusError`). */
function httpStatus(outcome: unknown): number | undefined {
  if (isHttpStatusError(outcome)) return outcome.status;
  const status = typeof outcome === 'object' && outcome !== null ? (outcome as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The request as telemetry describes it, as the retrying exchange does (OTel HTTP conventions:
 * `http.request.method`, `url.full`, `server.address`, and each attempt's
 * `http.response.status_code`), under the layer `'hedge'`.
 */
function hedgeReport<R extends StatusLike>(config: HttpConfig, exchange: HttpExchange<R>): HedgeCallReport {
  return { call: { layer: 'hedge', client: exchange.client, method: exchange.method, url: exchange.url, name: config.name ?? hostOf(exchange.url) }, status: httpStatus };
}

/**
 * A request that may not be sent twice (a POST without an idempotency key), sent once. Telemetry
 * still sees it — its attempt (a retried status is a failure, as for the retrying fetch) and, when
 * that status came back, the give-up (`'fatal'`: it could not be hedged) — so hedging's metrics count
 * every request the adapter sent.
 */
async function sendOnce<R extends StatusLike>(config: HttpConfig, exchange: HttpExchange<R>, caller: AbortSignal | undefined): Promise<ExchangeResult<R>> {
  const tel = config.telemetry === undefined ? undefined : new CallTelemetry(config.telemetry, hedgeReport(config, exchange).call, config.clock, config.onHookError);
  if (tel === undefined) {
    const response = await exchange.send(1, caller, undefined);
    exchange.record?.(response, 1, undefined);
    return { response, attempts: 1, gaveUp: undefined };
  }
  const traced = tel.attemptStart(1);
  let response: R;
  try {
    response = await (traced === undefined ? exchange.send(1, caller, undefined) : traced.run(() => exchange.send(1, caller, undefined, traced)));
  } catch (error) {
    tel.attemptEnd(1, caller?.aborted === true ? 'aborted' : 'failure', error);
    throw error;
  }
  const failed = config.statuses.has(response.status);
  tel.attemptEnd(1, failed ? 'failure' : 'success', failed ? new HttpStatusError(response) : undefined, response.status);
  if (failed) tel.giveUp('fatal', 1, exchange.blocked, undefined, response.status);
  exchange.record?.(response, 1, undefined);
  return { response, attempts: 1, gaveUp: undefined };
}

/**
 * @internal One logical request hedged (the HTTP adapters' `hedge()`): each attempt is `exchange.send`;
 * a retried status is a failed attempt (non-fatal: the next hedge goes at once, or after its
 * `Retry-After`); any other response wins. Every response that is not the result is discarded —
 * a loser's that arrives late included — so its connection is freed. When every attempt ends with
 * a retried status, the last response is the result, with the `RetryError` as `gaveUp` (as
 * `runExchange` returns it). A request that may not be sent twice (`blocked`) is sent once.
 */
export async function runHedgedExchange<R extends StatusLike>(hedger: Hedger, config: HttpConfig, exchange: HttpExchange<R>): Promise<ExchangeResult<R>> {
  // A client that makes the caller's signal late (undici) makes it at once here: every hedge needs it.
  const caller = exchange.lateSignal === undefined ? exchange.signal : exchange.lateSignal();
  if (exchange.blocked !== undefined) return sendOnce(config, exchange, caller);
  /** Every response an attempt received, until the call settles; after, each is discarded as it comes. */
  const responses: R[] = [];
  const links = new Map<R, AttemptLink>();
  let settled = false;
  const settle = (keep: R | undefined): void => {
    settled = true;
    for (const response of responses) if (response !== keep) exchange.discard(response);
    responses.length = 0;
    if (keep === undefined) return;
    // Fetch semantics: the caller's signal also aborts the reading of the returned body.
    const link = links.get(keep);
    if (link !== undefined && caller !== undefined && exchange.followsCaller?.(keep) === true) link.followCaller(caller, keep);
  };
  let attempts = 0;
  try {
    const response = await hedger(
      async ({ attempt, signal }, traced?: AttemptContext) => {
        attempts = Math.max(attempts, attempt);
        const link = caller === undefined ? undefined : new AttemptLink(signal);
        const attemptSignal = link === undefined ? signal : link.signal;
        let response: R;
        try {
          // Sent inside the attempt's trace context, which its headers carry (W3C traceparent).
          response = await (traced === undefined ? exchange.send(attempt, attemptSignal, undefined) : traced.run(() => exchange.send(attempt, attemptSignal, undefined, traced)));
        } catch (error) {
          if (typeof error === 'object' && error !== null && exchange.isTransient?.(error) === true) CLIENT_TRANSIENT.add(error);
          throw error;
        } finally {
          link?.settled();
        }
        if (settled || signal.aborted) {
          exchange.discard(response); // a loser that answered after the winner
          throw signal.reason;
        }
        responses.push(response);
        if (link !== undefined) links.set(response, link);
        const failure = responseFailure(config, response, exchange.headers(response));
        if (failure !== undefined) throw failure;
        return response;
      },
      config.telemetry === undefined ? { signal: caller } : ({ signal: caller, [HEDGE_REPORT]: hedgeReport(config, exchange) } as { signal: AbortSignal | undefined }),
    );
    settle(response);
    exchange.record?.(response, attempts, undefined);
    return { response, attempts, gaveUp: undefined };
  } catch (error) {
    // Every attempt ended with a retried status: the last response is the result.
    if (isRetryError(error) && isHttpStatusError<R>(error.cause) && responses.includes(error.cause.response)) {
      const last = error.cause.response;
      settle(last);
      exchange.record?.(last, error.attempts, error);
      return { response: last, attempts: error.attempts, gaveUp: error };
    }
    settle(undefined);
    throw error;
  }
}
