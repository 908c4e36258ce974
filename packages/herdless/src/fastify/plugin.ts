import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseAttempt, requestSource, shedAnswer } from '../server/answers.js';
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
