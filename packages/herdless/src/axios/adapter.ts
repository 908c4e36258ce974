import axios, { AxiosError, AxiosHeaders, CanceledError, type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { markDoNotRetry } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { DRAIN_LIMIT } from '../http/body.js';
import { IDEMPOTENCY_KEY_HEADER } from '../http/data.js';
import { bodyBlock, idempotency, runExchange, type ExchangeResult, type HeaderReader, type HttpExchange } from '../http/exchange.js';
import { parseCallOptions, parseHttpOptions, type HttpConfig } from '../http/options.js';
import { retryAttemptHeader } from '../http/attempt-header.js';
import { recordRetryInfo } from '../http/retry-info.js';
import type { AxiosRequestRetryOptions, AxiosRetryOptions } from './options.js';

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

/**
 * How an attempt's body is read. Axios's own Node.js (`http`) and `fetch` adapters read the whole
 * body before they resolve — a 100 MB 503 that is going to be retried would be held in memory, and
 * waited for, only to be thrown away. So with those adapters every attempt asks for a stream, and
 * the body is read (as axios would have read it) only for the response the call returns; a
 * discarded one is drained up to {@link DRAIN_LIMIT} bytes, or destroyed. Another adapter (`xhr`,
 * or one of your own) reads its bodies itself.
 */
type BodyMode = 'node' | 'web' | undefined;

function bodyMode(adapter: AxiosAdapter): BodyMode {
  const known = (name: 'http' | 'fetch'): boolean => {
    try {
      return adapter === axios.getAdapter(name);
    } catch {
      return false; // not in this build (the browser build has no http adapter)
    }
  };
  return known('http') ? 'node' : known('fetch') ? 'web' : undefined;
}

/** A Node.js readable stream, as axios's http adapter returns for `responseType: 'stream'`. */
interface NodeStream {
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  resume(): unknown;
  destroy(error?: Error): unknown;
  readonly destroyed?: boolean;
}

function isNodeStream(value: unknown): value is NodeStream {
  return typeof value === 'object' && value !== null && typeof (value as NodeStream).on === 'function' && typeof (value as NodeStream).destroy === 'function';
}

function isWebStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

/** Responses whose body this adapter asked for as a stream, and must read for the caller. */
const streamed = /* @__PURE__ */ new WeakSet<AxiosResponse>();

/**
 * A response nobody will read. A Node.js stream is drained (its keep-alive connection is then
 * reused) while it stays under {@link DRAIN_LIMIT} bytes, destroyed past it or when its
 * `Content-Length` says it will be; a web stream is cancelled. A body axios already read is dropped.
 */
function discard(response: AxiosResponse): void {
  const data = response.data as unknown;
  try {
    if (isNodeStream(data)) {
      if (data.destroyed === true) return;
      const length = Number(headerReader(response).get('content-length') ?? Number.NaN);
      if (length > DRAIN_LIMIT) {
        data.destroy();
        return;
      }
      let bytes = 0;
      data.on('error', () => undefined);
      data.on('data', (chunk: { length: number }) => {
        if ((bytes += chunk.length) > DRAIN_LIMIT) data.destroy();
      });
      data.resume();
    } else if (isWebStream(data)) {
      data.cancel().then(undefined, () => undefined);
    } else if (typeof (data as { destroy?: unknown })?.destroy === 'function') {
      (data as { destroy: () => void }).destroy();
    }
  } catch {
    // Already closed.
  }
}

/** Axios's `maxContentLength` error, as its adapters raise it. */
function tooLong(request: InternalAxiosRequestConfig, limit: number): AxiosError {
  return new AxiosError(`maxContentLength size of ${limit} exceeded`, AxiosError.ERR_BAD_RESPONSE, request);
}

/** Reads a Node.js stream whole, within `limit` bytes (−1: no limit), aborted by `signal`. */
function readNode(stream: NodeStream, request: InternalAxiosRequestConfig, limit: number, signal: AbortSignal | undefined): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onAbort = (): void => {
      stream.destroy();
      finish(() => reject(signal!.reason));
    };
    const finish = (then: () => void): void => {
      signal?.removeEventListener('abort', onAbort);
      stream.removeListener('data', onData);
      then();
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      if (limit > -1 && (bytes += chunk.length) > limit) {
        stream.destroy();
        finish(() => reject(tooLong(request, limit)));
      }
    };
    if (signal?.aborted === true) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', onData);
    stream.on('error', (error: Error) => finish(() => reject(error)));
    stream.on('end', () => finish(() => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
  });
}

/** Read through a function, so that the check after an await is not narrowed away by the one before it. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Reads a web stream whole, within `limit` bytes (−1: no limit), aborted by `signal`. */
async function readWeb(stream: ReadableStream<Uint8Array>, request: InternalAxiosRequestConfig, limit: number, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const reader = stream.getReader();
  const onAbort = (): void => void reader.cancel(signal!.reason).then(undefined, () => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    if (signal?.aborted === true) throw signal.reason;
    for (;;) {
      const { done, value } = await reader.read();
      // An abort cancels the reader: the read ends (done, or rejected) and the abort is the outcome.
      if (isAborted(signal)) throw signal!.reason;
      if (done) break;
      chunks.push(value);
      if (limit > -1 && (bytes += value.byteLength) > limit) {
        void reader.cancel().then(undefined, () => undefined);
        throw tooLong(request, limit);
      }
    }
    const out = new Uint8Array(bytes || chunks.reduce((a, c) => a + c.byteLength, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The body of the response the call returns, read as axios's adapter would have read it for the
 * caller's `responseType`: the http adapter's Buffer (`arraybuffer`) or string (`responseEncoding`,
 * a UTF-8 BOM stripped), the fetch adapter's `arrayBuffer()`, `blob()`, `formData()` or `text()`.
 * `maxContentLength` holds as in axios.
 */
async function readBody(response: AxiosResponse, request: InternalAxiosRequestConfig, signal: AbortSignal | undefined): Promise<unknown> {
  const type = String(request.responseType ?? '').toLowerCase();
  const limit = typeof request.maxContentLength === 'number' ? request.maxContentLength : -1;
  const data = response.data as unknown;
  if (isNodeStream(data)) {
    const buffer = await readNode(data, request, limit, signal);
    if (type === 'arraybuffer') return buffer;
    const encoding = request.responseEncoding as BufferEncoding | undefined;
    const text = buffer.toString(encoding);
    return (encoding === undefined || encoding === 'utf8') && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
  const bytes = isWebStream(data) ? await readWeb(data, request, limit, signal) : new Uint8Array(0);
  const body = new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': headerReader(response).get('content-type') ?? '' } });
  if (type === 'arraybuffer') return body.arrayBuffer();
  if (type === 'blob') return body.blob();
  if (type === 'formdata') return body.formData();
  return body.text();
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
 * - **Discarded responses are not read.** With axios's own Node.js (`http`) and `fetch` adapters,
 *   every attempt is received as a stream: the body of a response that is retried is drained up to
 *   256 KiB (so that its keep-alive connection is reused) or destroyed, never held in memory; the
 *   body of the response the request returns is read as axios reads it (`responseType`,
 *   `responseEncoding`, `maxContentLength`, the request's `signal`). The browser's `xhr` adapter,
 *   or an adapter of your own, reads bodies itself before this adapter sees them.
 *
 * Per request, `herdless` in the request config (as axios-retry reads `'axios-retry'`) sets this
 * request's policy over the adapter's (see {@link AxiosRequestRetryOptions}); `beforeAttempt` may set
 * headers on each attempt (a fresh token: see `refreshStatuses`).
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
  const { base, httpOptions } = splitAdapter(options, 'retryAdapter');
  const config = parseHttpOptions(httpOptions, 'retryAdapter', false, ['adapter']);
  return axiosAdapter('retryAdapter', config, base, runExchange, true);
}

/** @internal `options.adapter`, checked, and the other options. */
export function splitAdapter<O extends { adapter?: AxiosAdapter | undefined }>(options: O | undefined, owner: string): { base: AxiosAdapter | undefined; httpOptions: Omit<O, 'adapter'> | undefined } {
  const base = options?.adapter;
  if (base !== undefined && typeof base !== 'function') throw new InvalidOptionError(owner, 'adapter', base, 'must be an axios adapter (a function of the request config)');
  if (options !== undefined && typeof options === 'object' && options !== null && 'adapter' in options) {
    const { adapter: _adapter, ...rest } = options;
    return { base, httpOptions: rest };
  }
  return { base, httpOptions: options };
}

/** @internal How a request's attempts are driven: `runExchange` (retries) or `runHedgedExchange` (hedging). */
export type AxiosExchangeRunner = (config: HttpConfig, exchange: HttpExchange<AxiosResponse>, owner: string) => Promise<ExchangeResult<AxiosResponse>>;

/**
 * @internal The adapter: axios's request config in, the attempts through `run`, the result settled
 * as axios settles it. `requestOptions`: whether a request's `herdless` config key sets its own
 * options over the adapter's (the retrying adapter; a hedging adapter's attempts are its hedger's).
 */
export function axiosAdapter(owner: string, adapterConfig: HttpConfig, baseAdapter: AxiosAdapter | undefined, run: AxiosExchangeRunner, requestOptions = false): AxiosAdapter {
  let base = baseAdapter;
  /** How attempts' bodies are read (see BodyMode); null until the adapter is known. */
  let mode: BodyMode | null = null;
  return async (request: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
    if (base === undefined) base = axios.getAdapter(axios.defaults.adapter);
    if (mode === null) mode = bodyMode(base);
    const send = base;
    // A caller who asked for a stream reads it; otherwise each attempt streams and the body is read once decided.
    const asStream = mode !== undefined && request.responseType !== 'stream' && request.responseType !== ('response' as never);
    const method = (request.method ?? 'get').toUpperCase();
    // Per-request options over the adapter's, in axios's idiom: a key of the request config.
    const own = requestOptions ? (request as { herdless?: AxiosRequestRetryOptions }).herdless : undefined;
    const config = own === undefined ? adapterConfig : parseCallOptions(adapterConfig, own, owner, 'herdless', false).config;
    let headers = request.headers as AxiosHeaders;
    let blocked = bodyBlock(request.data);
    if (blocked === undefined) {
      const rule = idempotency(config, method, headers.has(IDEMPOTENCY_KEY_HEADER), own?.idempotencyKey, owner);
      blocked = rule.blocked;
      if (rule.key !== undefined) {
        headers = AxiosHeaders.from(headers);
        headers.set(IDEMPOTENCY_KEY_HEADER, rule.key);
      }
    }
    const signal = callerSignal(request);
    let result;
    try {
      let url: string | undefined;
      // As the retrying fetch: in a browser (the xhr or fetch adapter), the default attempt header
      // stays off cross-origin requests, whose retries it would turn into preflighted ones.
      const attemptHeader = retryAttemptHeader(config, () => (url ??= axios.getUri(request)));
      result = await run(config, {
        client: 'axios',
        method,
        // Built only when a hook, an event or telemetry reads it: axios.getUri serializes the params.
        get url(): string {
          return (url ??= axios.getUri(request));
        },
        signal,
        blocked,
        // Every attempt resolves with its response, whatever the status: the call settles the last one.
        send: (attempt, attemptSignal, extra, traced) => {
          const numbered = attempt > 1 && attemptHeader !== undefined;
          // Each attempt gets headers of its own only when it changes them (axios's adapters do not change the config's).
          const attemptHeaders = numbered || extra !== undefined || traced !== undefined ? AxiosHeaders.from(headers) : headers;
          // A retry carries its number in the attempt header (none on the first attempt).
          if (numbered) attemptHeaders.set(attemptHeader!, String(attempt));
          if (extra !== undefined) for (const name in extra) attemptHeaders.set(name, extra[name]!);
          // A traced attempt carries its own trace context, replacing any the caller's headers had.
          traced?.inject((name, value) => attemptHeaders.set(name, value));
          const attemptRequest = { ...request, headers: attemptHeaders, signal: attemptSignal, cancelToken: undefined, validateStatus: () => true } as InternalAxiosRequestConfig;
          if (!asStream) return send(attemptRequest) as Promise<AxiosResponse>;
          attemptRequest.responseType = 'stream';
          return (send(attemptRequest) as Promise<AxiosResponse>).then((response) => {
            streamed.add(response);
            return response;
          });
        },
        headers: headerReader,
        discard,
        isTransient: (error) => error instanceof AxiosError && !axios.isCancel(error) && typeof error.code === 'string' && TRANSIENT_AXIOS_CODES.has(error.code),
        record: (response, attempts, gaveUp) => recordRetryInfo(response, { attempts, reason: gaveUp?.reason, error: gaveUp }),
      }, owner);
      if (streamed.has(result.response)) {
        try {
          result.response.data = await readBody(result.response, request, signal);
        } catch (error) {
          if (signal?.aborted === true && error === signal.reason) throw error;
          throw AxiosError.from(error as Error, (error as AxiosError).code, request, result.response.request, result.response);
        }
      }
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
