import type { MiddlewareHandler } from 'hono';
import { DO_NOT_RETRY_HEADER } from '../core/wire.js';
import { giveUpAnswer, parseAttempt, requestSource, shedAnswer } from '../server/answers.js';
import type { LoadShedderOptions } from '../server/options.js';
import { LoadShedder } from '../server/shedder.js';

/** Options of {@link honoLoadShedder}: those of `loadShedder` (`herdless/server`). */
export type HonoLoadShedderOptions = LoadShedderOptions;

/** The middleware, with its `LoadShedder` (for `stats()`). */
export type HonoLoadShedder = MiddlewareHandler & { readonly shedder: LoadShedder };

/**
 * Hono middleware that sheds load before the routes after it run: each request is admitted (its
 * slot held until the route's response is made), queued, or answered 503 with `Retry-After` and,
 * for a retry or while retries pile up, `X-Herdless-Retry: no`. The options are `loadShedder`'s
 * (`maxInFlight` required; `adaptiveLimit`, `maxEventLoopDelayMs` on runtimes with
 * `node:perf_hooks`, `maxQueue`, …); `clientKey` receives the fetch `Request` (`c.req.raw`).
 *
 * When a route's own call through herdless gave up (it threw a `RetryError`, or returned a
 * given-up `Response`), the answer takes the downstream status and, with `propagate` (default
 * true), the "don't retry" mark — so that the layers above do not retry it again. A route's
 * streamed body is not counted once its `Response` is returned.
 *
 * @throws InvalidOptionError (at once) naming the field and the value.
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { honoLoadShedder } from 'herdless/hono';
 * const app = new Hono();
 * app.use('*', honoLoadShedder({ maxInFlight: 64, adaptiveLimit: true }));
 * app.get('/', (c) => c.text('ok'));
 * ```
 */
export function honoLoadShedder(options: HonoLoadShedderOptions): HonoLoadShedder {
  const shedder = new LoadShedder(options);
  const config = shedder.config;
  const header = config.attemptHeader;
  const middleware: MiddlewareHandler = async (c, next) => {
    const request = c.req.raw;
    const signal = request.signal as AbortSignal | undefined;
    const admission = await shedder.admit(
      parseAttempt(request.headers.get(header)),
      (gone) => signal?.addEventListener('abort', gone, { once: true }),
      requestSource(config, request),
    );
    if (admission.kind === 'shed') {
      const answer = shedAnswer(config, admission.doNotRetry);
      return new Response('overloaded\n', { status: answer.status, headers: answer.headers });
    }
    try {
      await next();
    } finally {
      admission.release();
    }
    // Hono catches a route's throw and keeps it on c.error; its onError made c.res.
    const failure = c.error ?? c.res;
    const answer = giveUpAnswer(failure, config.propagate);
    if (answer === undefined) return undefined;
    shedder.countGivenUp();
    if (failure instanceof Response) {
      if (!config.propagate || failure.headers.has(DO_NOT_RETRY_HEADER)) return undefined;
      const headers = new Headers(failure.headers);
      headers.set(DO_NOT_RETRY_HEADER, 'no');
      c.res = new Response(failure.body, { status: failure.status, statusText: failure.statusText, headers });
      return undefined;
    }
    c.error = undefined;
    c.res = new Response('downstream unavailable\n', { status: answer.status, headers: answer.headers });
    return undefined;
  };
  return Object.assign(middleware, { shedder });
}
