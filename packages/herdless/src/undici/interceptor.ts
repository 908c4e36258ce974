import type { AttemptContext } from '../runtime/telemetry.js';
import type { Dispatcher } from 'undici';
import { InvalidOptionError } from '../core/errors.js';
import type { RetryError } from '../core/retry/errors.js';
import { DRAIN_LIMIT } from '../http/body.js';
import { DO_NOT_RETRY_HEADER, IDEMPOTENCY_KEY_HEADER } from '../http/data.js';
import { bodyBlock, idempotency, isGivenUpResponse, runExchange, type ExchangeResult, type HeaderReader, type HttpExchange } from '../http/exchange.js';
import { parseCallOptions, parseHttpOptions, type HttpConfig } from '../http/options.js';
import type { UndiciRequestRetryOptions, UndiciResponseHead, UndiciRetryOptions } from './options.js';

type Controller = Dispatcher.DispatchController;
type Handler = Dispatcher.DispatchHandler;
type Headers = Record<string, string | string[] | undefined>;

/** @internal A response whose body waits, paused, until the call decides whether it is the result. */
export interface Head extends UndiciResponseHead {
  readonly controller: Controller;
  chunks: Buffer[];
  /** The trailers, once the body has ended. */
  trailers: Headers | undefined;
  error: Error | undefined;
  state: 'held' | 'committed' | 'discarded';
  /** Whether this layer paused the body (a status that may be retried), so must resume it. */
  readonly paused: boolean;
  discardedBytes: number;
  /** Stops listening to the attempt's signal: once the call has decided on the response, it aborts nothing more. */
  readonly detach: () => void;
}


/**
 * The controller the caller's handler holds for the whole request. Each attempt has its own
 * connection controller; this one forwards to the committed attempt's, keeps a pause across the
 * switch, and turns an abort before the result into the call's abort (waits included).
 */
class CallController implements Controller {
  target: Controller | undefined = undefined;
  #paused = false;
  #aborted = false;
  #reason: Error | null = null;

  constructor(private readonly onAbort: (reason: Error) => void) {}

  pause(): void {
    this.#paused = true;
    this.target?.pause();
  }

  resume(): void {
    this.#paused = false;
    this.target?.resume();
  }

  abort(reason: Error): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    if (this.target !== undefined) this.target.abort(reason);
    else this.onAbort(reason);
  }

  get paused(): boolean {
    return this.#paused;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): Error | null {
    return this.#reason;
  }
}

function headerReader(headers: Headers): HeaderReader {
  return {
    get(name: string): string | null {
      const value = headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** The request's headers as one object (undici takes an object, a flat array or an iterable of pairs). */
function headerRecord(headers: Dispatcher.DispatchOptions['headers']): Headers {
  const out: Headers = {};
  if (headers === undefined || headers === null) return out;
  const add = (name: string, value: string | string[] | undefined): void => {
    if (value === undefined) return;
    const previous = out[name];
    out[name] = previous === undefined ? value : ([] as string[]).concat(previous, value);
  };
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const pair of headers as unknown as Array<[string, string]>) add(pair[0], pair[1]);
    } else {
      for (let i = 0; i + 1 < headers.length; i += 2) add(String(headers[i]), String(headers[i + 1]));
    }
  } else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [name, value] of headers as Iterable<[string, string | string[] | undefined]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(headers as Headers)) add(name, value);
  }
  return out;
}

/** The request's URL, for hooks and telemetry: the origin (without a trailing slash) and the path. */
function urlOf(opts: Dispatcher.DispatchOptions): string {
  const origin = opts.origin;
  if (origin === undefined) return opts.path;
  const text = typeof origin === 'string' ? origin : String(origin);
  return (text.endsWith('/') ? text.slice(0, -1) : text) + opts.path;
}

function hasHeader(headers: Headers, name: string): boolean {
  for (const key in headers) if (key.toLowerCase() === name && headers[key] !== undefined) return true;
  return false;
}

/** @internal How a call's attempts are driven: `runExchange` (retries) or `runHedgedExchange` (hedging). */
export type ExchangeRunner = (config: HttpConfig, exchange: HttpExchange<Head>, owner: string) => Promise<ExchangeResult<Head>>;

/** @internal One request through the interceptor: `runExchange` (or the hedging runner) drives the attempts, this speaks undici's handler protocol. */
export class UndiciCall {
  /**
   * The caller's abort as a signal, made only when the call goes on past a failed first attempt
   * (see lateSignal): a request that succeeds at once needs none. Until then the abort reaches the
   * attempt in flight directly (`#abortAttempt`).
   */
  #caller: AbortController | undefined;
  /** Aborts the first attempt, while it is in flight and the call has no signal yet. */
  #abortAttempt: ((reason: Error) => void) | undefined;
  readonly #proxy: CallController;
  private config: HttpConfig;

  constructor(
    private readonly dispatch: Dispatcher.Dispatch,
    config: HttpConfig,
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly handler: Handler,
    private readonly run: ExchangeRunner = runExchange,
    private readonly owner = 'retryInterceptor',
  ) {
    this.config = config;
    this.#proxy = new CallController((reason) => {
      if (this.#caller !== undefined) this.#caller.abort(reason);
      else this.#abortAttempt?.(reason);
    });
  }

  /** The caller's signal, made late (see runExchange): already aborted when the caller aborted before. */
  #lateSignal(): AbortSignal {
    this.#caller ??= new AbortController();
    const proxy = this.#proxy;
    if (proxy.aborted && !this.#caller.signal.aborted) this.#caller.abort(proxy.reason);
    return this.#caller.signal;
  }

  start(): void {
    try {
      this.#start();
    } catch (error) {
      // A bad request (an idempotency key generator that returns no key…) fails this request only.
      this.#fail(error instanceof Error ? error : new Error(String(error), { cause: error }));
    }
  }

  #start(): void {
    const opts = this.opts;
    // Per-dispatch options over the interceptor's, in undici's own idiom (its retry interceptor's key).
    // (Only the retry interceptor reads them: a hedging interceptor's attempts are its hedger's.)
    const own = this.run === runExchange ? (opts as { retryOptions?: UndiciRequestRetryOptions }).retryOptions : undefined;
    if (own !== undefined) this.config = parseCallOptions(this.config, own, this.owner, 'retryOptions', false).config;
    const given = opts.method ?? 'GET';
    // undici's methods are upper case as given (request() passes them through): most need no copy.
    const method = given === 'GET' || given === 'HEAD' ? given : given.toUpperCase();
    const url = urlOf(opts);
    let blocked = opts.body === undefined || opts.body === null ? undefined : bodyBlock(opts.body);
    let dispatchOpts = opts;
    // The request's headers are read only for a method that needs an idempotency key to be retried.
    if (blocked === undefined && !this.config.methods.has(method)) {
      const headers = headerRecord(opts.headers);
      const rule = idempotency(this.config, method, hasHeader(headers, IDEMPOTENCY_KEY_HEADER), own?.idempotencyKey, this.owner);
      blocked = rule.blocked;
      if (rule.key !== undefined) dispatchOpts = { ...opts, headers: { ...headers, [IDEMPOTENCY_KEY_HEADER]: rule.key } };
    }
    // The caller's handler gets its controller at once: an abort from now on (its signal) ends the call.
    this.handler.onRequestStart?.(this.#proxy, {});
    this.run(this.config, {
      client: 'undici',
      method,
      url,
      signal: undefined,
      lateSignal: () => this.#lateSignal(),
      blocked,
      send: (attempt, signal, extra, traced) => this.#send(this.#withAttempt(dispatchOpts, attempt, extra, traced), signal),
      headers: (head) => headerReader(head.headers),
      discard: (head) => this.#discard(head),
    }, this.owner).then(
      (result) => this.#commit(result.response, result.gaveUp),
      (error: unknown) => this.#fail(error instanceof Error ? error : new Error(String(error), { cause: error })),
    );
  }

  /**
   * A retry carries its number in the attempt header (`attemptHeader`; none on the first attempt),
   * `beforeAttempt`'s headers (`extra`) are set over the request's, and a traced attempt carries its
   * trace context.
   */
  #withAttempt(opts: Dispatcher.DispatchOptions, attempt: number, extra: Readonly<Record<string, string>> | undefined, traced: AttemptContext | undefined): Dispatcher.DispatchOptions {
    const name = attempt === 1 ? undefined : this.config.attemptHeader;
    if (name === undefined && extra === undefined && traced === undefined) return opts;
    const headers = headerRecord(opts.headers);
    const set = (lower: string, value: string): void => {
      for (const key of Object.keys(headers)) if (key.toLowerCase() === lower) delete headers[key];
      headers[lower] = value;
    };
    if (name !== undefined) set(name, String(attempt));
    if (extra !== undefined) for (const key in extra) set(key, extra[key]!);
    // The attempt's own trace context replaces any the caller's headers carried.
    traced?.inject((field, value) => set(field.toLowerCase(), value));
    return { ...opts, headers };
  }

  /** One attempt: resolves with its response head (body held), rejects with its failure. */
  #send(opts: Dispatcher.DispatchOptions, signal: AbortSignal | undefined): Promise<Head> {
    return new Promise<Head>((resolve, reject) => {
      let controller: Controller | undefined;
      let head: Head | undefined;
      let pendingAbort: Error | undefined;
      const abort = (reason: Error): void => {
        if (head !== undefined && head.state !== 'held') return;
        if (controller === undefined) pendingAbort = reason;
        else controller.abort(reason);
      };
      const onAbort = (): void => abort(signal!.reason as Error);
      const release =
        signal === undefined
          ? (): void => {
              this.#abortAttempt = undefined;
            }
          : (): void => signal.removeEventListener('abort', onAbort);
      // Without a signal (a first attempt, see #caller), the caller's abort comes straight here.
      if (signal === undefined) this.#abortAttempt = abort;
      const attempt: Handler = {
        onRequestStart: (c) => {
          controller = c;
          if (signal === undefined) {
            if (pendingAbort !== undefined) c.abort(pendingAbort);
          } else if (signal.aborted) c.abort(signal.reason as Error);
          else signal.addEventListener('abort', onAbort);
        },
        onRequestUpgrade: (c, statusCode, headers, socket) => {
          // An upgrade is not a response to retry: hand it over as it is.
          release();
          this.#proxy.target = c;
          this.handler.onRequestUpgrade?.(this.#proxy, statusCode, headers, socket);
        },
        onResponseStart: (c, status, headers, statusMessage) => {
          // A status that may be retried waits, paused, for the decision. Any other is the result:
          // the decision comes in this turn's microtasks, before undici reads more of the body, and
          // what came with the head is held meanwhile — no pause, no resume.
          const config = this.config;
          const paused = config.statuses.has(status) || (config.refreshStatuses !== undefined && config.refreshStatuses.has(status));
          if (paused) c.pause();
          head = { status, statusText: statusMessage ?? '', headers, controller: c, chunks: [], trailers: undefined, error: undefined, state: 'held', paused, discardedBytes: 0, detach: release };
          resolve(head);
        },
        onResponseData: (c, chunk) => {
          if (head === undefined) return;
          if (head.state === 'committed') this.handler.onResponseData?.(this.#proxy, chunk);
          else if (head.state === 'held') head.chunks.push(chunk);
          else if ((head.discardedBytes += chunk.length) > DRAIN_LIMIT) c.abort(new Error('herdless: discarded response body too large to drain'));
        },
        onResponseEnd: (_c, trailers) => {
          release();
          if (head === undefined) return;
          if (head.state === 'committed') this.handler.onResponseEnd?.(this.#proxy, trailers);
          else if (head.state === 'held') head.trailers = trailers;
        },
        onResponseError: (_c, error) => {
          release();
          if (head === undefined) {
            reject(error);
            return;
          }
          if (head.state === 'committed') this.handler.onResponseError?.(this.#proxy, error);
          else if (head.state === 'held') head.error = error;
        },
      };
      try {
        this.dispatch(opts, attempt);
      } catch (error) {
        release();
        reject(error);
      }
    });
  }

  /** A response nobody will read: drained so that its connection is reused, or aborted past the limit. */
  #discard(head: Head): void {
    if (head.state !== 'held') return;
    head.detach();
    head.state = 'discarded';
    head.chunks = [];
    if (head.paused && head.trailers === undefined && head.error === undefined) head.controller.resume();
  }

  /**
   * The call's result: the response goes to the caller's handler with what was held of its body,
   * then flows. `gaveUp` is set for a retried status returned because retrying stopped.
   */
  #commit(head: Head, gaveUp: RetryError | undefined): void {
    if (this.#proxy.aborted) {
      // The caller aborted while the result was on its way: it gets the abort, not the response.
      this.#discard(head);
      this.#fail(this.#proxy.reason!);
      return;
    }
    head.detach();
    head.state = 'committed';
    const proxy = this.#proxy;
    proxy.target = head.controller;
    const handler = this.handler;
    // The give-up mark: a response this layer gave up on tells every herdless layer above it (a
    // retrying fetch on this dispatcher, a server propagating it) not to retry it again.
    const headers = gaveUp === undefined || isGivenUpResponse(head, headerReader(head.headers)) ? head.headers : { ...head.headers, [DO_NOT_RETRY_HEADER]: 'no' };

    try {
      handler.onResponseStart?.(proxy, head.status, headers, head.statusText);
      for (const chunk of head.chunks) handler.onResponseData?.(proxy, chunk);
      head.chunks = [];
      if (head.error !== undefined) handler.onResponseError?.(proxy, head.error);
      else if (head.trailers !== undefined) handler.onResponseEnd?.(proxy, head.trailers);
      else if (proxy.paused) {
        if (!head.paused) head.controller.pause();
      } else if (head.paused) head.controller.resume();
    } catch (error) {
      head.controller.abort(error as Error);
    }
  }

  #fail(error: Error): void {
    this.handler.onResponseError?.(this.#proxy, error);
  }
}

/**
 * An undici interceptor (for `Dispatcher.compose` / `dispatcher.compose`) that retries requests
 * with the retrying fetch's semantics — undici's own retry handler has no jitter and no budget:
 *
 * - **Methods**: `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`, `TRACE` are retried; `POST`, `PATCH`
 *   and others only with an `Idempotency-Key` header (the request's own, or one `idempotencyKey:
 *   true` adds, the same on every attempt).
 * - **Statuses**: 408, 429, 500, 502, 503, 504 are retried; when retrying stops, the last response
 *   is delivered as the result (a 503 is a response). Network failures are retried; when retrying
 *   stops, the request fails with a `RetryError` whose `cause` is the last failure.
 * - **Retry-After** on every retried status (seconds, HTTP-date, `retry-after-ms`) replaces the backoff,
 *   capped by `maxRetryAfterMs`; `X-Herdless-Retry: no` is delivered at once (reason
 *   `'do-not-retry'`).
 * - **Attempt header**: each retry carries `x-herdless-attempt: <n>` (n ≥ 2), so the server can
 *   count retries; `attemptHeader` renames it or turns it off.
 * - **The give-up mark**: a retried status delivered because retrying stopped carries
 *   `x-herdless-retry: no` in the headers your handler sees, so that no herdless layer above this
 *   one (a retrying fetch using this dispatcher, `retry()`, a server) retries it again.
 * - **Bodies**: a string or bytes are sent whole on every attempt; a stream body is sent once and
 *   the request is not retried.
 * - **Discarded responses** are drained (up to 256 KiB, then aborted), so keep-alive connections
 *   are reused; a response's body is held (paused) until the call decides it is the result.
 * - **Abort**: the request's `signal` (`request(url, { signal })`) aborts the attempt in flight and
 *   any wait; the request fails with the signal's reason. `attemptTimeoutMs` aborts one attempt,
 *   which is then retried.
 * - **Per request**: `retryOptions` in the dispatch options (the key undici's own retry interceptor
 *   reads) sets this request's policy over the interceptor's (see {@link UndiciRequestRetryOptions});
 *   `beforeAttempt` may set headers on each attempt (a fresh token: see `refreshStatuses`).
 *
 * @param options `withRetry()`'s options; see {@link UndiciRetryOptions}.
 * @throws InvalidOptionError for an invalid option (names the field and the value).
 * @example
 * ```ts
 * import { Agent, request } from 'undici';
 * import { retryInterceptor } from 'herdless/undici';
 * const dispatcher = new Agent().compose(retryInterceptor({ maxAttempts: 4, idempotencyKey: true }));
 * const { statusCode, body } = await request('https://api.example.com/items', { dispatcher });
 * ```
 */
export function retryInterceptor(options?: UndiciRetryOptions): Dispatcher.DispatcherComposeInterceptor {
  const config = parseHttpOptions(options, 'retryInterceptor', false);
  return (dispatch) => {
    if (typeof dispatch !== 'function') throw new InvalidOptionError('retryInterceptor', 'dispatch', dispatch, 'must be a function (use dispatcher.compose(retryInterceptor()))');
    return (opts, handler) => {
      new UndiciCall(dispatch, config, opts, handler as Handler).start();
      return true;
    };
  };
}
