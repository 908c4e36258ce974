/**
 * herdless/hono — `herdless/server`'s load shedding as a Hono middleware `(c, next)`: the
 * in-flight limit (fixed or adaptive), the queue, shedding on event-loop delay, 503 with a
 * jittered `Retry-After`, "overloaded; don't retry" for shed retries, and a downstream give-up
 * passed on with the mark. Hono is an optional peer dependency of this subpath.
 * @packageDocumentation
 */
export { honoLoadShedder, type HonoLoadShedder, type HonoLoadShedderOptions } from './middleware.js';
