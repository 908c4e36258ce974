import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isGivenUp } from '../core/classify/hints.js';
import { DO_NOT_RETRY_HEADER } from '../core/wire.js';
import { giveUpAnswer, parseAttempt, requestSource, shedAnswer } from '../server/answers.js';
import type { LoadShedderOptions } from '../server/options.js';
import { LoadShedder } from '../server/shedder.js';

/** Options of {@link fastifyLoadShedder}: those of `loadShedder` (`herdless/server`). */
export type FastifyLoadShedderOptions = LoadShedderOptions;

/** The release of each admitted request's slot. */
const slots = new WeakMap<FastifyRequest, () => void>();

/**
 * A fastify plugin that sheds load before the route runs (an `onRequest` hook): each request is
 * admitted (its slot is held until the response is sent), queued, or answered 503 with
 * `Retry-After` and, for a retry or while retries pile up, `X-Herdless-Retry: no`. The options are
 * `loadShedder`'s (`maxInFlight` required; `adaptiveLimit`, `maxEventLoopDelayMs`,
 * `maxEventLoopUtilization`, `maxQueue`, …); `clientKey` receives the node:http request
 * (`request.raw`). The plugin applies to the instance it is registered on and its children (it is
 * not encapsulated), and its `LoadShedder` is on `fastify.loadShedder` for `stats()`.
 *
 * A client that hangs up does not free its slot at once — the route is still working — but at
 * most `maxHoldAfterCloseMs` after it left, if the route never sends a response.
 *
 * When a route's own call through herdless gave up, the answer says so, as `loadShedder`'s
 * `errorHandler` and the Hono middleware do (SRE book, "Handling Overload": one layer retries):
 * - a route that throws a give-up (`isGivenUp()`: a `RetryError`, what `throwIfNotOk()` throws
 *   for a given-up response…) is answered with the downstream status (503 when it carries none)
 *   and, with `propagate` (default true), `X-Herdless-Retry: no`. Both are set on the reply in an
 *   `onError` hook, before fastify's error handler runs: the default one keeps them (its body is
 *   fastify's JSON error); your own `setErrorHandler` finds them on `reply` and keeps them unless
 *   it calls `reply.code()`. A `RetryError` with reason `'fatal'` and no downstream status (a bug
 *   `retry()` wrapped) stays a 500, unmarked;
 * - a route that returns a given-up `Response` (what `withRetry()` returned after its last
 *   attempt) passes it on with the mark added (an `onSend` hook).
 * Each counts in `stats().givenUp`.
 *
 * @throws InvalidOptionError (when the plugin is registered) naming the field and the value.
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { fastifyLoadShedder } from 'herdless/fastify';
 * const app = Fastify();
 * await app.register(fastifyLoadShedder, { maxInFlight: 64, maxEventLoopDelayMs: 100 });
 * app.get('/', async () => 'ok');
 * ```
 */
export async function fastifyLoadShedder(fastify: FastifyInstance, options: FastifyLoadShedderOptions): Promise<void> {
  const shedder = new LoadShedder(options);
  const config = shedder.config;
  const header = config.attemptHeader;
  fastify.decorate('loadShedder', shedder);
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = reply.raw;
    const admission = await shedder.admit(
      parseAttempt(request.headers[header]),
      (gone) => {
        raw.once('close', () => {
          if (!raw.writableEnded) gone();
        });
      },
      requestSource(config, request.raw),
    );
    if (admission.kind === 'shed') {
      const answer = shedAnswer(config, admission.doNotRetry);
      return reply.code(answer.status).headers(answer.headers).send('overloaded\n');
    }
    slots.set(request, admission.release);
    // A client that left: the route may never answer; free the slot after maxHoldAfterCloseMs.
    raw.once('close', () => {
      if (raw.writableEnded) return;
      const timer = config.clock.setTimeout(() => release(request), config.maxHoldAfterCloseMs);
      raw.once('finish', () => config.clock.clearTimeout(timer));
    });
    return undefined;
  });
  fastify.addHook('onError', async (_request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    const answer = giveUpAnswer(error, config.propagate);
    if (answer === undefined) return;
    shedder.countGivenUp();
    // Headers only, not the body: fastify's error handler (the default or the user's) sends it,
    // and it reads the status from the reply when the error itself carries none in 400–599.
    reply.code(answer.status);
    if (config.propagate) reply.header(DO_NOT_RETRY_HEADER, 'no');
  });
  fastify.addHook('onSend', async (_request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    // A downstream Response the route returned as it was: fastify copies its status and headers
    // after this hook, so the mark goes on a copy of it (the body stream is passed along unread).
    if (!isGivenUp(payload) || Object.prototype.toString.call(payload) !== '[object Response]') return payload;
    shedder.countGivenUp();
    const response = payload as Response;
    if (!config.propagate || response.headers.has(DO_NOT_RETRY_HEADER)) return payload;
    const headers = new Headers(response.headers);
    headers.set(DO_NOT_RETRY_HEADER, 'no');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  });
  fastify.addHook('onResponse', async (request: FastifyRequest) => {
    release(request);
  });
  fastify.addHook('onClose', async () => {
    shedder.close();
  });
}

function release(request: FastifyRequest): void {
  const free = slots.get(request);
  if (free === undefined) return;
  slots.delete(request);
  free();
}

// fastify-plugin's marks, without the dependency: the hooks apply beyond this plugin's own
// encapsulation context (to the routes of the instance that registers it), under a readable name.
Object.assign(fastifyLoadShedder, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'herdless-load-shedder',
  [Symbol.for('plugin-meta')]: { name: 'herdless-load-shedder', fastify: '5.x' },
});

declare module 'fastify' {
  interface FastifyInstance {
    /** herdless's load shedder, when `fastifyLoadShedder` is registered: `stats()`, `retryRatio()`. */
    loadShedder: LoadShedder;
  }
}
