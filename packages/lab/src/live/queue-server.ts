import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isInvalidOptionError } from 'herdless';
import { loadShedder } from 'herdless/server';
import { METASTABLE_SETUP, metastableSetup, type MetastableServer, type MetastableTrigger } from 'herdless/sim';
import { closestName } from '../closest.js';
import { HOST, listenLoopback } from '../listen.js';
import { latenessOf, type Lateness } from './lateness.js';
import { QueueModel, type QueueOutcome, type QueueStats } from './queue-model.js';
import { PING_PATH, RESET_PATH, STATS_PATH, type LabServer } from './server.js';

/** The model a `lab server --model metastable` runs: the server variant, the trigger and the seed of its service times. */
export interface QueueServerModel {
  server: MetastableServer;
  trigger: MetastableTrigger;
  seed: number;
}

/** `GET /_lab/stats` of a metastable `lab server`: its model and what it recorded per second since its time 0. */
export interface QueueStatsResponse extends QueueStats {
  model: 'metastable';
  server: MetastableServer;
  trigger: MetastableTrigger;
  seed: number;
  /** ms since the server's time 0 (its start, or the last reset). */
  nowMs: number;
  /**
   * How late the service timer fired against the service's end, ms, over the latest 10,000
   * firings since time 0 (nearest-rank percentiles): the server's own clock error. A late timer
   * delays answers (the schedule of services keeps to the drawn times).
   */
  timerLateness: Lateness;
  /** TCP connections accepted since time 0 (a client that gives up on an attempt closes its connection). */
  connections: number;
}

/**
 * The body a `POST /_lab/reset` may carry to change the model for the next run: any of the server's
 * and the trigger's fields (the others keep the server's start-up model) and the seed.
 */
export interface QueueResetBody {
  server?: Partial<MetastableServer>;
  trigger?: Partial<MetastableTrigger>;
  seed?: number;
}

/** A running metastable `lab server`. */
export type QueueServer = LabServer<QueueStatsResponse>;

const LATENESS_SAMPLES = 10_000;
/** The request header that carries the client's timeout (Connect protocol: deadline propagation over HTTP). */
export const TIMEOUT_HEADER = 'connect-timeout-ms';
const OK_BODY = 'ok\n';
/** A reset body larger than this is refused: the model's fields fit in a few hundred bytes. */
const MAX_RESET_BYTES = 16_384;

/**
 * Refuses a reset body's object `field` (the body itself when undefined) that is no JSON object (the
 * model is spread over the start-up one, where `"server": 3` would change nothing and `"x"` would
 * read as a key `0`) or has a key that is not one of `known`, naming it by its path (`server.workrs`)
 * with the closest field, as the lab's scenario files do. An absent object passes.
 */
function checkFields(field: string | undefined, value: unknown, known: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${field ?? 'the reset body'} must be a JSON object of fields (${known.join(', ')}), got ${JSON.stringify(value)}`);
  const path = field === undefined ? '' : `${field}.`;
  const unknown = Object.keys(value).find((k) => !known.includes(k));
  if (unknown === undefined) return;
  const near = closestName(unknown, known);
  throw new TypeError(`${path}${unknown} is not a field of the reset body (${near === undefined ? '' : `did you mean ${near}? `}${field === undefined ? 'fields' : `${field}'s fields`}: ${known.join(', ')})`);
}

/**
 * Checks a model (a reset body over the start-up model) with the simulator's own rules.
 * @throws InvalidOptionError naming the field (`server.workers`, `trigger.factor`, `seed`…).
 */
export function queueModelOf(base: QueueServerModel, body: unknown): QueueServerModel {
  const b = (body ?? {}) as QueueResetBody;
  checkFields(undefined, b, ['server', 'trigger', 'seed']);
  checkFields('server', b.server, Object.keys(METASTABLE_SETUP.server));
  checkFields('trigger', b.trigger, Object.keys(METASTABLE_SETUP.trigger));
  // The server's time has no horizon: the simulator's bound on the trigger's end (the run's last
  // seconds) is moot here, so check against the longest run the simulator allows.
  const setup = metastableSetup({ horizonMs: 3_600_000, server: { ...base.server, ...b.server }, trigger: { ...base.trigger, ...b.trigger } });
  const seed = b.seed ?? base.seed;
  if (!Number.isSafeInteger(seed) || seed < 0) throw new TypeError(`seed must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(seed)}`);
  return { server: setup.server, trigger: setup.trigger, seed };
}

/**
 * The deadline a request propagates, ms from its arrival: Connect's `connect-timeout-ms` header
 * (the HTTP form of gRPC's `grpc-timeout`: a positive integer of at most 10 digits), or undefined.
 */
export function timeoutOf(req: { headers: Record<string, string | string[] | undefined> }): number | undefined {
  const value = req.headers[TIMEOUT_HEADER];
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  const ms = Number(value);
  return ms > 0 ? ms : undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_RESET_BYTES) {
        req.destroy();
        reject(new TypeError(`the reset body is over ${MAX_RESET_BYTES} bytes`));
      }
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

/**
 * Starts the metastable experiment's server as a real HTTP server on 127.0.0.1:`port` (0 = any
 * free port): see {@link QueueModel} for the rules. Any method on any path but the three `/_lab/`
 * ones is a request to the model: it waits in the queue, is served for a drawn time on one of the
 * workers (a counter and a timer, no CPU work), and is answered 200 when its service ends — unless
 * its client closed the connection first (it gave up), in which case the service was wasted work.
 * With `shedding`, `herdless/server`'s `loadShedder` stands in front (`maxInFlight` = workers, no
 * queue): a request that finds every worker busy is answered 503 "overloaded" at once, with
 * `Retry-After`, and `X-Herdless-Retry: no` for a retry (the `x-herdless-attempt` header
 * `withRetry()` sends) or while retries are above 10% of the recent requests.
 *
 * Its time 0 is its start; `POST /_lab/reset` sets it to now, and its JSON body ({@link QueueResetBody})
 * may change the server, the trigger and the seed (400 with the reason for a bad one).
 * @throws UsageError `--port N: …` when the port is taken or not allowed.
 */
export async function startQueueServer(initial: QueueServerModel, port: number): Promise<QueueServer> {
  const now = (): number => performance.now();
  const base = initial;
  let model = initial;
  let timer: NodeJS.Timeout | undefined;
  let due = 0;
  const lateness = new Float64Array(LATENESS_SAMPLES);
  let firings = 0;
  let connections = 0;

  const ends = new Map<ServerResponse, () => void>();
  const answer = (res: ServerResponse, outcome: QueueOutcome): void => {
    if (outcome === 'served' && !res.destroyed && !res.writableEnded) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': OK_BODY.length });
      res.end(OK_BODY);
    } else if (outcome === 'reset' && !res.destroyed && !res.writableEnded) {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('reset\n');
    }
    const end = ends.get(res);
    ends.delete(res);
    end?.();
  };
  const sim = new QueueModel<ServerResponse>(model.server, model.trigger, model.seed, now(), answer);
  let shedding = model.server.shedding ? loadShedder({ maxInFlight: model.server.workers, maxQueue: 0 }) : undefined;

  const fire = (): void => {
    timer = undefined;
    const t = now();
    lateness[firings++ % LATENESS_SAMPLES] = Math.max(0, t - due);
    sim.advance(t);
    arm();
  };
  /** Sets the timer for the next service's end (re-set when an earlier one begins). */
  function arm(): void {
    const next = sim.nextEndAt;
    if (next === undefined) return;
    if (timer !== undefined) {
      if (due <= next) return;
      clearTimeout(timer);
    }
    due = next;
    timer = setTimeout(fire, Math.max(0, due - now()));
  }

  /** One request to the model: served (a promise that settles when its time at the server ends). */
  const serve = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    new Promise<void>((resolve) => {
      ends.set(res, resolve);
      const ticket = sim.arrive(now(), res, timeoutOf(req));
      if (ends.has(res)) res.once('close', () => sim.leave(now(), ticket));
      arm();
    });

  const stats = (): QueueStatsResponse => {
    const t = now();
    const timerLateness = latenessOf(lateness.subarray(0, Math.min(firings, LATENESS_SAMPLES)), firings);
    return { model: 'metastable', ...sim.snapshot(t), server: model.server, trigger: model.trigger, seed: model.seed, nowMs: t - sim.startedAt, timerLateness, connections };
  };

  const reset = (next: QueueServerModel): void => {
    model = next;
    sim.reset(now(), model.server, model.trigger, model.seed);
    shedding = model.server.shedding ? loadShedder({ maxInFlight: model.server.workers, maxQueue: 0 }) : undefined;
    firings = 0;
    connections = 0;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === STATS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      req.resume();
      const body = JSON.stringify(stats());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === PING_PATH) {
      req.resume();
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === RESET_PATH && req.method === 'POST') {
      readBody(req).then(
        (text) => {
          let next: QueueServerModel;
          try {
            next = queueModelOf(base, text.trim() === '' ? {} : JSON.parse(text));
          } catch (error) {
            const why = isInvalidOptionError(error) ? `${error.field} ${error.requirement}, got ${JSON.stringify(error.value)}` : (error as Error).message;
            res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
            res.end(`bad reset: ${why}\n`);
            return;
          }
          reset(next);
          res.writeHead(204);
          res.end();
        },
        (error: Error) => {
          if (!res.destroyed) {
            res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
            res.end(`bad reset: ${error.message}\n`);
          }
        },
      );
      return;
    }
    req.resume(); // a body, if any, is read and dropped: the model looks at arrivals only
    if (shedding === undefined) {
      void serve(req, res);
      return;
    }
    let admitted = false;
    shedding.node((rq: IncomingMessage, rs: ServerResponse) => {
      admitted = true;
      return serve(rq, rs);
    })(req, res);
    // No queue in front (maxQueue 0): the shedder decides at once.
    if (!admitted) sim.shed(now());
  };

  const server = createServer({ keepAliveTimeout: 10_000 }, handle);
  server.on('connection', () => connections++);
  const actual = await listenLoopback(server, port);
  return {
    url: `http://${HOST}:${actual}/`,
    port: actual,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        sim.reset(now(), model.server, model.trigger, model.seed);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
