import { isGivenUp } from '../core/classify/hints.js';
import { InvalidOptionError } from '../core/errors.js';
import { DO_NOT_RETRY_HEADER } from '../core/wire.js';
import { giveUpAnswer, parseAttempt, shedAnswer, type ServerAnswer } from './answers.js';
import type { LoadShedderOptions } from './options.js';
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

/** A plain node:http handler, as `http.createServer` takes; it may return a promise. */
export type NodeHandler<Req extends NodeRequest = NodeRequest, Res extends NodeResponse = NodeResponse> = (req: Req, res: Res) => unknown;

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
   * `(req, res, next)` middleware: admits the request (calls `next()`, and frees its slot when the
   * response closes) or answers it 503 with `Retry-After` (and `X-Herdless-Retry: no` for a
   * retry, or while retries pile up).
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
   * answered 500 (or the connection destroyed, if the head was sent) and reported to `onHandlerError`.
   */
  node<Req extends NodeRequest, Res extends NodeResponse>(handler: NodeHandler<Req, Res>): (req: Req, res: Res) => void;
  /**
   * Wraps a fetch-style handler: a shed request gets a 503 `Response`; a handler that throws a
   * downstream give-up, or returns a given-up `Response`, is answered with the downstream status and
   * `X-Herdless-Retry: no`. Another failure is rethrown to the platform. A request is in flight
   * until its handler returns (or throws): the sending of a streamed body is not counted.
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
 * - **Don't retry**: a shed request that is itself a retry (`x-herdless-attempt` ≥ 2, which
 *   `withRetry()` sends), and every shed request while the share of retries among the latest
 *   `retryRatioWindow` requests is above `maxRetryRatio`, gets `X-Herdless-Retry: no`: the caller's
 *   herdless client returns it at once instead of retrying, so only one layer retries.
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
 * http.createServer(shedding.node(async (req, res) => {
 *   const rows = await throwIfNotOk(await db(`${dbUrl}/rows`)).text(); // a give-up → 503 + X-Herdless-Retry: no
 *   res.end(rows);
 * })).listen(8080);
 * ```
 */
export function loadShedder(options: LoadShedderOptions): LoadShedding {
  const shedder = new LoadShedder(options);
  const config = shedder.config;
  const header = config.attemptHeader;

  const admitNode = (req: NodeRequest, res: NodeResponse, run: () => void): void => {
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
      onGone = admission.release;
      run();
    };
    const admission = shedder.admit(parseAttempt(req.headers[header]), (gone) => {
      onGone = gone;
    });
    if (admission instanceof Promise) {
      // Called from a timer or another request's release: a throw here has nobody above to catch it.
      admission.then(decided).then(undefined, (error: unknown) => answerFailure(error, res));
    } else decided(admission);
  };

  const answerFailure = (error: unknown, res: NodeResponse): void => {
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

  const errorHandler: LoadShedding['errorHandler'] = (error, _req, res, next) => {
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
      admitNode(req, res, () => {
        let result: unknown;
        try {
          result = handler(req, res);
        } catch (error) {
          answerFailure(error, res);
          return;
        }
        if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
          (result as PromiseLike<unknown>).then(undefined, (error: unknown) => answerFailure(error, res));
        }
      });
  };

  const fetchWrapper = (handler: FetchHandler) => {
    if (typeof handler !== 'function') throw new InvalidOptionError('loadShedder.fetch', 'handler', handler, 'must be a function (request) => Response');
    return async (request: Request): Promise<Response> => {
      const signal = request.signal as AbortSignal | undefined;
      const admission = await shedder.admit(parseAttempt(request.headers.get(header)), (gone) => {
        signal?.addEventListener('abort', gone, { once: true });
      });
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
