/**
 * herdless/fastify — `herdless/server`'s load shedding as a fastify plugin: the in-flight limit
 * (fixed or adaptive), the queue, shedding on event-loop delay, 503 with a jittered `Retry-After`,
 * and "overloaded; don't retry" for shed retries (SRE book, "Handling Overload"). fastify is an
 * optional peer dependency of this subpath.
 * @packageDocumentation
 */
export { fastifyLoadShedder, type FastifyLoadShedderOptions } from './plugin.js';
