import axios, { AxiosError, AxiosHeaders, CanceledError, type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { markDoNotRetry } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { IDEMPOTENCY_KEY_HEADER } from '../http/data.js';
import { bodyBlock, idempotency, runExchange, type HeaderReader } from '../http/exchange.js';
import { parseHttpOptions } from '../http/options.js';
import { recordRetryInfo } from '../http/retry-info.js';
import type { AxiosRetryOptions } from './options.js';

/**
 * Axios's own network failures that are transient but carry no system error code: `ERR_NETWORK`
 * (the browser's generic network error) and a per-attempt `timeout` (`ECONNABORTED`, or
 * `ETIMEDOUT` with `transitional.clarifyTimeoutError`).
 */
const TRANSIENT_AXIOS_CODES: ReadonlySet<string> = /* @__PURE__ */ new Set(['ERR_NETWORK', 'ECONNABORTED', 'ETIMEDOUT']);

function headerReader(response: AxiosResponse): HeaderReader {
  const headers = response.headers as Record<string, unknown> & { get?: (name: string) => unknown };
  return {
    get(name: string): string | null {
      const value = typeof headers.get === 'function' ? headers.get(name) : headers[name];
      if (value === undefined || value === null || value === false) return null;
      return Array.isArray(value) ? value.join(', ') : String(value);
    },
  };
}

/** A response nobody will read: a streamed body is destroyed (a buffered one is already read). */
function discard(response: AxiosResponse): void {
  const data = response.data as { destroy?: () => void; cancel?: () => Promise<void> } | null;
  if (data === null || typeof data !== 'object') return;
  try {
    if (typeof data.destroy === 'function') data.destroy();
    else if (typeof data.cancel === 'function') data.cancel().then(undefined, () => undefined);
  } catch {
    // Already closed.
  }
}

/**
 * Axios's `settle`: the caller's `validateStatus` decides whether a response resolves or rejects.
 * The error for a response this layer gave up on carries the "do not retry" mark, so that a
 * `retry()` around the request stops instead of multiplying the attempts already made.
 */
function settle(config: InternalAxiosRequestConfig, response: AxiosResponse, gaveUp: boolean): AxiosResponse {
  const validate = config.validateStatus;
  if (!response.status || !validate || validate(response.status)) return response;
  const code = response.status >= 400 && response.status < 500 ? AxiosError.ERR_BAD_REQUEST : AxiosError.ERR_BAD_RESPONSE;
  const error = new AxiosError(`Request failed with status code ${response.status}`, code, config, response.request, response);
  throw gaveUp ? markDoNotRetry(error) : error;
}

/** The caller's signal: `config.signal`, and a legacy `cancelToken` folded into it. */
function callerSignal(config: InternalAxiosRequestConfig): AbortSignal | undefined {
  const signal = config.signal as AbortSignal | undefined;
  const token = config.cancelToken;
  if (token === undefined) return signal;
  const controller = new AbortController();
  token.promise.then((reason) => controller.abort(reason), () => undefined);
  return signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
}

/**
 * An axios adapter that retries requests with the retrying fetch's semantics — methods and
 * idempotency keys, statuses, `Retry-After` in every form, `X-Herdless-Retry: no`, body replay,
 * abort — sending each attempt through axios's own adapter (or `options.adapter`).
 *
 * - A retried status (408, 429, 500, 502, 503, 504) that is still there when retrying stops is
 *   the result, settled by the request's `validateStatus` as axios does: by default it rejects
 *   with the `AxiosError` carrying that response (`retryInfo(error.response)` says why
 *   retrying stopped). That error carries the "do not retry" mark: a `retry()` around the request
 *   gives up at once (reason `'do-not-retry'`) instead of multiplying the attempts.
 * - Network failures (system error codes, `ERR_NETWORK`, an attempt's `timeout`) are retried;
 *   when retrying stops the request rejects with a `RetryError` whose `cause` is the last
 *   `AxiosError`.
 * - The request's `signal` (or `cancelToken`) aborts the attempt in flight and any wait; the
 *   request rejects with a `CanceledError` (`axios.isCancel(error)` is true).
 * - `data` that is a stream is sent once: such a request is not retried.
 *
 * Interceptors run once per request, around all its attempts. The adapter works in Node.js and
 * browsers alike.
 *
 * @throws InvalidOptionError for an invalid option (names the field and the value).
 * @example
 * ```ts
 * import axios from 'axios';
 * import { retryAdapter } from 'herdless/axios';
 * const api = axios.create({ baseURL: 'https://api.example.com', adapter: retryAdapter({ maxAttempts: 4, idempotencyKey: true }) });
 * const { data } = await api.get('/items/42');
 * ```
 */
export function retryAdapter(options?: AxiosRetryOptions): AxiosAdapter {
  let base = options?.adapter;
  if (base !== undefined && typeof base !== 'function') throw new InvalidOptionError('retryAdapter', 'adapter', base, 'must be an axios adapter (a function of the request config)');
  let httpOptions: AxiosRetryOptions | undefined = options;
  if (options !== undefined && typeof options === 'object' && options !== null && 'adapter' in options) {
    const { adapter: _adapter, ...rest } = options;
    httpOptions = rest;
  }
  const config = parseHttpOptions(httpOptions, 'retryAdapter', false);

  return async (request: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
    base ??= axios.getAdapter(axios.defaults.adapter);
    const send = base;
    const method = (request.method ?? 'get').toUpperCase();
    const headers = AxiosHeaders.from(request.headers as AxiosHeaders);
    let blocked = bodyBlock(request.data);
    if (blocked === undefined) {
      const rule = idempotency(config, method, headers.has(IDEMPOTENCY_KEY_HEADER), undefined, 'retryAdapter');
      blocked = rule.blocked;
      if (rule.key !== undefined) headers.set(IDEMPOTENCY_KEY_HEADER, rule.key);
    }
    const signal = callerSignal(request);
    let result;
    try {
      result = await runExchange<AxiosResponse>(config, {
        client: 'axios',
        method,
        url: axios.getUri(request),
        signal,
        blocked,
        // Every attempt resolves with its response, whatever the status: the call settles the last one.
        send: (attempt, attemptSignal) => {
          const attemptHeaders = AxiosHeaders.from(headers);
          // A retry carries its number in the attempt header (none on the first attempt).
          if (attempt > 1 && config.attemptHeader !== undefined) attemptHeaders.set(config.attemptHeader, String(attempt));
          return send({ ...request, headers: attemptHeaders, signal: attemptSignal, cancelToken: undefined, validateStatus: () => true } as InternalAxiosRequestConfig) as Promise<AxiosResponse>;
        },
        headers: headerReader,
        discard,
        isTransient: (error) => error instanceof AxiosError && !axios.isCancel(error) && typeof error.code === 'string' && TRANSIENT_AXIOS_CODES.has(error.code),
        record: (response, attempts, gaveUp) => recordRetryInfo(response, { attempts, reason: gaveUp?.reason, error: gaveUp }),
      });
    } catch (error) {
      if (signal !== undefined && signal.aborted && error === signal.reason) {
        throw axios.isCancel(error) ? error : new CanceledError(undefined, request, undefined);
      }
      throw error;
    }
    // The caller's request config, not the attempt's, as axios users expect on the response.
    const response = result.response;
    response.config = request;
    return settle(request, response, result.gaveUp !== undefined);
  };
}
