import { isGivenUp } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { DO_NOT_RETRY_HEADER } from '../core/wire.js';
import { giveUpAnswer, parseAttempt, shedAnswer, type ServerAnswer } from './answers.js';
import type { LoadShedderConfig, LoadShedderOptions } from './options.js';
import { LoadShedder, type Admission, type LoadShedderStats } from './shedder.js';

/**
 * The part of node:http's `IncomingMessage` the middleware uses (express's `req` is one), plus
 * `url` and `method`. Spelled out so that the library compiles without Node.js's types. For the
 * whole `IncomingMessage` in a handler wrapped by `node()`, annotate its parameters:
 * `shedding.node((req: IncomingMessage, res: ServerResponse) => …)`.
 */
export interface NodeRequest {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly url?: string | undefined;
  readonly method?: string | undefined;
  resume(): unknown;
}

/** The part of node:http's `ServerResponse` the middleware uses (express's `res` is one), plus `statusCode`, `setHeader` and `write`. */
export interface NodeResponse {
  readonly headersSent: boolean;
  statusCode: number;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  write(chunk: string | Uint8Array): unknown;
  writeHead(status: number, headers?: Record<string, string>): unknown;
  end(body?: string): unknown;
  destroy(error?: Error): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** Connect / express middleware: `(req, res, next)`. */
export type NodeMiddleware = (req: NodeRequest, res: NodeResponse, next: (error?: unknown) => void) => void;

/** What `node()` gives its handler besides the request and the response. */
export interface NodeHandlerContext {
  /**
   * Aborts when the client leaves before the response is ended (a `DOMException` named
   * `AbortError`): pass it to the work the request started. The request's slot stays held until
   * the handler ends the response or settles, so a handler that stops early frees it early.
   */
  readonly signal: AbortSignal;
}

/**
 * A plain node:http handler, as `http.createServer` takes (it may return a promise), with a third
 * argument from `node()`: the request's {@link NodeHandlerContext} (its `signal`).
 */
export type NodeHandler<Req extends NodeRequest = NodeRequest, Res extends NodeResponse = NodeResponse> = (req: Req, res: Res, context: NodeHandlerContext) => unknown;

/** A fetch-style handler: `Request → Response` (Hono, Bun, Deno, Cloudflare Workers…). */
export type FetchHandler = (request: Request) => Response | PromiseLike<Response>;

/**
 * Load shedding for one server, for node:http / express and for fetch-style handlers alike (one
 * shared limit): made by {@link loadShedder}.
 */
export interface LoadShedding {
  /** The shared state: limits, queue, retry share. */
  readonly shedder: LoadShedder;
  /**
   * `(req, res, next)` middleware: admits the request (calls `next()`) or answers it 503 with
   * `Retry-After` (and `X-Herdless-Retry: no` for a retry, or while retries pile up). The slot is
   * freed when the response is ended — not when the client leaves: the route's work goes on, and
   * {@link requestSignal}`(req)` aborts so that the route can stop it (at most
   * `maxHoldAfterCloseMs` after the client left, for a route that stops without ending the response).
   */
  readonly middleware: NodeMiddleware;
  /**
   * Express error middleware `(err, req, res, next)`: a downstream give-up becomes its status and
   * `X-Herdless-Retry: no` (see {@link giveUpAnswer}); any other error goes on to `next(err)`.
   */
  readonly errorHandler: (error: unknown, req: NodeRequest, res: NodeResponse, next: (error?: unknown) => void) => void;
  /**
   * Wraps a plain `http.createServer` handler: shedding as `middleware`, and a handler that throws
   * or rejects with a downstream give-up is answered as `errorHandler` does. Another failure is
   * answered 500 (or the connection destroyed, if the head was sent) and reported to
   * `onHandlerError`; a failure that is the abort of the handler's `signal` (its client left) is
   * neither. The slot is held until the handler has ended the response or (a promise) settled,
   * whatever the client does; the handler gets `{ signal }` as a third argument.
   */
  node<Req extends NodeRequest, Res extends NodeResponse>(handler: NodeHandler<Req, Res>): (req: Req, res: Res) => void;
  /**
   * Wraps a fetch-style handler: a shed request gets a 503 `Response`; a handler that throws a
   * downstream give-up, or returns a given-up `Response`, is answered with the downstream status and
   * `X-Herdless-Retry: no`. Another failure is rethrown to the platform. A request is in flight
   * until its handler returns (or throws), whatever its client does meanwhile (`request.signal`
   * tells the handler that the client left). The sending of a streamed response body is not
   * counted: the work a slot bounds is the handler's, and a stream the platform pulls from after
   * the handler returned costs the server little and is ended by the platform when the client
   * leaves. Do the expensive part before returning the `Response`.
   */
  fetch(handler: FetchHandler): (request: Request) => Promise<Response>;
  /** The counters: in flight, queued, shed, retries seen… */
  stats(): LoadShedderStats;
}

function answerNode(res: NodeResponse, answer: ServerAnswer, body: string): void {
  res.writeHead(answer.status, answer.headers as Record<string, string>);
  res.end(body);
}

function toResponse(answer: ServerAnswer, body: string): Response {
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * Server-side load shedding with the "don't retry" answer of the SRE book's "Handling Overload":
 *
 * - **Limit**: at most `maxInFlight` requests are handled at once; up to `maxQueue` more wait
 *   (first come, first served) for at most `maxQueueWaitMs`. Any other request is shed: `503`
 *   with `Retry-After` (seconds) and `retry-after-ms`. Every request gets exactly one answer,
 *   shed or served; a queued request whose client leaves is dropped from the queue (`abandoned`).
 * - **The work, not the connection**: an admitted request holds its slot until its handler's work
 *   ends (the response ended, or `node()`'s handler settled), whatever its client does; a client
 *   that hangs up does not stop the work, so freeing its slot would let timeouts and retries
 *   multiply the server's load. The handler's signal (`context.signal`, {@link requestSignal},
 *   `request.signal`) aborts when its client leaves, so that it can stop early.
 * - **Don't retry**: a shed request that is itself a retry (`x-herdless-attempt` ≥ 2, which
 *   `withRetry()` sends), and every shed request while the share of retries among the latest
 *   `retryRatioWindow` requests is above `maxRetryRatio`, gets `X-Herdless-Retry: no`: the caller's
 *   herdless client returns it at once instead of retrying, so only one layer retries. The
 *   attempt header is the client's word: see `attemptHeader` and `clientKey`.
 * - **Propagation**: when the handler's own call through herdless gave up (`isGivenUp()`), the
 *   answer takes the downstream status (503 by default) and the mark (unless `propagate: false`,
 *   for the edge server whose callers should retry).
 * - **Counters**: `stats()` — in flight, queued, shed, retries seen, and more.
 *
 * Runs on Node.js (node:http, express, connect) and on fetch-style runtimes (Hono, Bun, Deno):
 * it imports nothing from Node.js.
 *
 * @param options see {@link LoadShedderOptions}; `maxInFlight` is required.
 * @throws InvalidOptionError naming the field and the value for an invalid option.
 * @example
 * ```ts
 * import http from 'node:http';
 * import { loadShedder } from 'herdless/server';
 * import { withRetry, throwIfNotOk } from 'herdless/http';
 *
 * const shedding = loadShedder({ maxInFlight: 64, maxQueue: 64, maxQueueWaitMs: 250 });
 * const db = withRetry(fetch, { maxAttempts: 3 });
 * http.createServer(shedding.node(async (req, res, { signal }) => {
 *   const rows = await throwIfNotOk(await db(`${dbUrl}/rows`, { signal })).text(); // a give-up → 503 + X-Herdless-Retry: no
 *   res.end(rows);
 * })).listen(8080);
 * ```
 */
export function loadShedder(options: LoadShedderOptions): LoadShedding {
  const shedder = new LoadShedder(options);
  const config = shedder.config;
  const header = config.attemptHeader;

  const sourceOf = (request: NodeRequest | Request): string | undefined => {
    const key = config.clientKey;
    if (key === undefined) return undefined;
    let value: unknown;
    try {
      value = key(request as never);
    } catch (error) {
      // Who sent it is only a weight in the retry share: a failing clientKey makes it unknown, reported, never a crash.
      config.onHandlerError(error);
      return undefined;
    }
    return typeof value === 'string' ? value : undefined;
  };

  const admitNode = (req: NodeRequest, res: NodeResponse, run: (work: HeldSlot) => void): void => {
    let closed = false;
    let onGone: (() => void) | undefined;
    res.once('close', () => {
      closed = true;
      onGone?.();
    });
    const decided = (admission: Admission): void => {
      if (admission.kind === 'shed') {
        // Drain the request body, so that a keep-alive connection can carry the next request.
        req.resume();
        answerNode(res, shedAnswer(config, admission.doNotRetry), 'overloaded\n');
        return;
      }
      if (closed) {
        admission.release();
        return;
      }
      const work = new HeldSlot(res, admission.release, config);
      signals.set(req, work.signal);
      onGone = () => work.closed();
      run(work);
    };
    const admission = shedder.admit(
      parseAttempt(req.headers[header]),
      (gone) => {
        onGone = gone;
      },
      sourceOf(req),
    );
    if (admission instanceof Promise) {
      // Called from a timer or another request's release: a throw here has nobody above to catch it.
      admission.then(decided).then(undefined, (error: unknown) => answerFailure(error, res, undefined));
    } else decided(admission);
  };

  const answerFailure = (error: unknown, res: NodeResponse, signal: AbortSignal | undefined): void => {
    if (signal?.aborted === true && isAbort(error, signal)) {
      // The handler stopped because its client left: nobody to answer, nothing to report.
      res.end();
      return;
    }
    const answer = giveUpAnswer(error, config.propagate);
    if (answer !== undefined) {
      shedder.countGivenUp();
      if (res.headersSent) res.destroy();
      else answerNode(res, answer, 'downstream unavailable\n');
      return;
    }
    config.onHandlerError(error);
    // Already reported: destroying without an error raises no second one on the socket.
    if (res.headersSent) res.destroy();
    else answerNode(res, { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } }, 'internal error\n');
  };

  const middleware: NodeMiddleware = (req, res, next) => admitNode(req, res, () => next());

  const errorHandler: LoadShedding['errorHandler'] = (error, req, res, next) => {
    const signal = signals.get(req);
    if (signal?.aborted === true && isAbort(error, signal)) {
      // A route that stopped because its client left: ending the response frees the slot.
      res.end();
      return;
    }
    const answer = giveUpAnswer(error, config.propagate);
    if (answer === undefined || res.headersSent) {
      next(error);
      return;
    }
    shedder.countGivenUp();
    answerNode(res, answer, 'downstream unavailable\n');
  };

  const node = <Req extends NodeRequest, Res extends NodeResponse>(handler: NodeHandler<Req, Res>) => {
    if (typeof handler !== 'function') throw new InvalidOptionError('loadShedder.node', 'handler', handler, 'must be a function (req, res)');
    return (req: Req, res: Res): void =>
      admitNode(req, res, (work) => {
        let result: unknown;
        try {
          result = handler(req, res, { signal: work.signal });
        } catch (error) {
          work.settled();
          answerFailure(error, res, work.signal);
          return;
        }
        if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
          (result as PromiseLike<unknown>).then(
            () => work.settled(),
            (error: unknown) => {
              work.settled();
              answerFailure(error, res, work.signal);
            },
          );
        }
      });
  };

  const fetchWrapper = (handler: FetchHandler) => {
    if (typeof handler !== 'function') throw new InvalidOptionError('loadShedder.fetch', 'handler', handler, 'must be a function (request) => Response');
    return async (request: Request): Promise<Response> => {
      const signal = request.signal as AbortSignal | undefined;
      const admission = await shedder.admit(
        parseAttempt(request.headers.get(header)),
        (gone) => {
          signal?.addEventListener('abort', gone, { once: true });
        },
        sourceOf(request),
      );
      if (admission.kind === 'shed') return toResponse(shedAnswer(config, admission.doNotRetry), 'overloaded\n');
      try {
        const response = await handler(request);
        if (config.propagate && isGivenUp(response) && !response.headers.has(DO_NOT_RETRY_HEADER)) {
          // A downstream response passed through as it is: it goes on with the mark.
          shedder.countGivenUp();
          const headers = new Headers(response.headers);
          headers.set(DO_NOT_RETRY_HEADER, 'no');
          return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
        }
        return response;
      } catch (error) {
        const answer = giveUpAnswer(error, config.propagate);
        if (answer === undefined) throw error;
        shedder.countGivenUp();
        return toResponse(answer, 'downstream unavailable\n');
      } finally {
        admission.release();
      }
    };
  };

  return Object.freeze({ shedder, middleware, errorHandler, node, fetch: fetchWrapper, stats: () => shedder.stats() });
}

/** The signal of each admitted node:http request (see {@link requestSignal}). */
const signals = /* @__PURE__ */ new WeakMap<object, AbortSignal>();

/**
 * The `AbortSignal` of a request admitted by a {@link loadShedder}'s `middleware` or `node()`: it
 * aborts when the client leaves before the response is ended (a `DOMException` named
 * `AbortError`). Pass it to the work the request started (`fetch`, `retry()`, a database
 * driver), so that the work stops and the slot, which is held until the response ends, is freed.
 * `undefined` for a request no load shedder admitted. (`node()`'s handler also gets it as
 * `context.signal`; a fetch-style handler has `request.signal`.)
 *
 * @example
 * ```ts
 * app.use(shedding.middleware);
 * app.get('/report', async (req, res) => {
 *   res.json(await buildReport({ signal: requestSignal(req) }));
 * });
 * app.use(shedding.errorHandler); // a route stopped by the signal ends quietly
 * ```
 */
export function requestSignal(req: object): AbortSignal | undefined {
  return signals.get(req);
}

/** Whether `error` is the abort of `signal` (its reason, or an `AbortError` thrown in its wake). */
function isAbort(error: unknown, signal: AbortSignal): boolean {
  return error === signal.reason || (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError');
}

/**
 * The slot of one admitted node:http request, held until its work ends: the response ended by the
 * handler (`res.end()`), or `node()`'s handler settled after its client left, or — a handler
 * that stopped without ending its response — `maxHoldAfterCloseMs` after the client left.
 */
class HeldSlot {
  readonly #controller = new AbortController();
  readonly #res: NodeResponse;
  readonly #release: () => void;
  readonly #config: LoadShedderConfig;
  #gone = false;
  #settled = false;
  #timer: unknown;

  constructor(res: NodeResponse, release: () => void, config: LoadShedderConfig) {
    this.#res = res;
    this.#release = release;
    this.#config = config;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The response closed: its answer is done, or its client left while the work goes on. */
  closed(): void {
    const res = this.#res as NodeResponse & { writableEnded?: boolean };
    if (res.writableEnded !== false || this.#settled) {
      this.#free();
      return;
    }
    this.#gone = true;
    // After a close node:http emits no 'finish': the call to end() is the only sign the work is done.
    const end = res.end;
    res.end = (...args: Parameters<NodeResponse['end']>) => {
      this.#free();
      return end.apply(res, args);
    };
    this.#timer = this.#config.clock.setTimeout(() => this.#free(), this.#config.maxHoldAfterCloseMs);
    // A bound on a slot, not work of its own: it must not keep a process that is shutting down alive.
    (this.#timer as { unref?: () => void } | null)?.unref?.();
    this.#controller.abort(new DOMException('herdless/server: the client closed the connection', 'AbortError'));
  }

  /** `node()`'s handler settled (a promise) — once its client is gone, nothing else will end the work. */
  settled(): void {
    this.#settled = true;
    if (this.#gone) this.#free();
  }

  #free(): void {
    if (this.#timer !== undefined) this.#config.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#release();
  }
}
