import { isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import { isTransientError } from '../core/classify/classify.js';
import { HedgeError, isRetryError } from '../core/retry/errors.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { HEDGE_REPORT, type HedgeCallReport, type Hedger } from '../runtime/hedge.js';
import { hostKey } from '../runtime/keyed-breakers.js';
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

/** The breaker of the request's host (the `breaker` option), which every attempt goes through. */
function breakerOf<R extends StatusLike>(config: HttpConfig, exchange: HttpExchange<R>): CircuitBreaker | undefined {
  return config.breaker === undefined ? undefined : config.breaker.get(hostKey(exchange.url));
}

/**
 * A request that may not be sent twice (a POST without an idempotency key), sent once. Telemetry
 * still sees it — its attempt (a retried status is a failure, as for the retrying fetch) and, when
 * that status came back, the give-up (`'fatal'`: it could not be hedged) — so hedging's metrics count
 * every request the adapter sent. The throttle and the breaker see it as the one attempt it is: a
 * refusal by either ends it unsent (a `HedgeError`, reason `'throttled'` or `'circuit-open'`).
 */
async function sendOnce<R extends StatusLike>(config: HttpConfig, exchange: HttpExchange<R>, caller: AbortSignal | undefined): Promise<ExchangeResult<R>> {
  const tel = config.telemetry === undefined ? undefined : new CallTelemetry(config.telemetry, hedgeReport(config, exchange).call, config.clock, config.onHookError);
  const throttle = config.settings.throttle;
  const breaker = breakerOf(config, exchange);
  if (tel === undefined && throttle === undefined && breaker === undefined) {
    const response = await exchange.send(1, caller, undefined);
    exchange.record?.(response, 1, undefined);
    return { response, attempts: 1, gaveUp: undefined };
  }
  if (throttle !== undefined && !throttle.admit(config.clock.now(), config.settings.random, false)) {
    tel?.giveUp('throttled', 0, undefined, throttle);
    throw new HedgeError('throttled', 0, undefined, 'adaptive throttling rejected the call locally: no attempt was sent');
  }
  /** A retried status, thrown inside the breaker so that it counts as the failure it is; its response is the result. */
  let refused: HttpStatusError<R> | undefined;
  const attempt = async (): Promise<R> => {
    const traced = tel?.attemptStart(1);
    let response: R;
    try {
      response = await (traced === undefined ? exchange.send(1, caller, undefined) : traced.run(() => exchange.send(1, caller, undefined, traced)));
    } catch (error) {
      const aborted = caller?.aborted === true;
      tel?.attemptEnd(1, aborted ? 'aborted' : 'failure', error);
      // No answer came to an aborted attempt: the throttle hears nothing of it.
      if (!aborted) throttle?.onAnswer(config.clock.now(), !(isTransientError(error) || exchange.isTransient?.(error) === true));
      throw error;
    }
    const failed = config.statuses.has(response.status);
    tel?.attemptEnd(1, failed ? 'failure' : 'success', failed ? new HttpStatusError(response) : undefined, response.status);
    throttle?.onAnswer(config.clock.now(), !failed);
    if (failed && breaker !== undefined) throw (refused = new HttpStatusError(response));
    return response;
  };
  let response: R;
  if (breaker === undefined) response = await attempt();
  else {
    try {
      response = await breaker.execute(attempt, caller === undefined ? undefined : { signal: caller });
    } catch (error) {
      if (refused !== undefined && error === refused) response = refused.response;
      else if (isCircuitOpenError(error)) {
        tel?.giveUp('circuit-open', 0, error, undefined);
        throw new HedgeError('circuit-open', 0, error, 'the circuit is open: the request was not sent');
      } else throw error;
    }
  }
  if (tel !== undefined && config.statuses.has(response.status)) tel.giveUp('fatal', 1, exchange.blocked, undefined, response.status);
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
  // Each attempt goes through the breaker of the request's host (hedging outside, breaker inside):
  // a retried status counts as a failure, a loser aborted by the winner not at all, and an open
  // circuit stops further hedges.
  const breaker = breakerOf(config, exchange);
  try {
    const response = await hedger(
      ({ attempt, signal }, traced?: AttemptContext) => {
        attempts = Math.max(attempts, attempt);
        return breaker === undefined ? sendAttempt(attempt, signal, traced) : breaker.execute(() => sendAttempt(attempt, signal, traced), { signal });
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

  /** Sends attempt `attempt`: its response, or the failure a retried status is. */
  async function sendAttempt(attempt: number, signal: AbortSignal, traced: AttemptContext | undefined): Promise<R> {
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
  }
}
