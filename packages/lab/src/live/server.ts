import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ServerModel } from 'herdless/sim';
import { HOST, listenLoopback } from '../listen.js';
import { latenessOf, type Lateness } from './lateness.js';
import { LiveServerModel, type LiveServerStats, type LiveVerdict } from './server-model.js';

/** The path of the stats (GET, JSON). Every other path is the model's: 200 or 503. */
export const STATS_PATH = '/_lab/stats';
/** Answers 204 at once, outside the model: a client can open its connections before a run. */
export const PING_PATH = '/_lab/ping';
/** POST here starts the server's time again (start-up, empty stats): the live lab's runs begin with it. */
export const RESET_PATH = '/_lab/reset';

/** `GET /_lab/stats`: the model the server runs and what it recorded since its time 0. */
export interface LiveStatsResponse extends LiveServerStats {
  server: ServerModel;
  /** ms since the server's time 0 (its start, or the last reset). */
  nowMs: number;
  /**
   * How late the server's tick timer fired against the tick's end, ms, over the latest 10,000
   * firings since time 0 (nearest-rank percentiles): the server's own clock error. A late timer
   * means the process was busy or descheduled, and then requests read late land in a later tick.
   */
  timerLateness: Lateness;
  /** TCP connections accepted since time 0 (keep-alive clients open few). */
  connections: number;
}

/** A running `lab server` of either model, whose `GET /_lab/stats` answers `S`. */
export interface LabServer<S> {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  port: number;
  /** The stats so far (what `GET /_lab/stats` answers). */
  stats(): S;
  /** Answers the requests still waiting (503), closes every connection and stops listening. */
  close(): Promise<void>;
}

/** A running `lab server` of the article's model. */
export type LiveServer = LabServer<LiveStatsResponse>;

/** Timer firings whose lateness the stats keep. */
const LATENESS_SAMPLES = 10_000;
const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const BODIES: Record<LiveVerdict, string> = { 200: 'ok\n', 503: 'unavailable\n' };

/**
 * Starts the article's server model as a real HTTP server on 127.0.0.1:`port` (0 = any free port):
 * see {@link LiveServerModel} for the rules. Any method on any path but the three `/_lab/` ones (stats, reset, ping) is a
 * request to the model and gets 200 or 503 with a short text body, at the end of the tick it
 * arrived in. Its time 0 is its start; `POST /_lab/reset` sets it to now.
 *
 * No timer runs while nothing waits: a tick is decided by a timer set for its end when a request
 * is waiting for it, or when the stats are asked for.
 * @throws UsageError `--port N: …` when the port is taken or not allowed.
 */
export async function startLiveServer(model: ServerModel, port: number): Promise<LiveServer> {
  const now = (): number => performance.now();
  const sim = new LiveServerModel<ServerResponse>(model, now());
  let timer: NodeJS.Timeout | undefined;
  let due = 0;
  const lateness = new Float64Array(LATENESS_SAMPLES);
  let firings = 0;
  let connections = 0;

  const reply = (res: ServerResponse, verdict: LiveVerdict): void => {
    if (res.destroyed || res.writableEnded) return; // the client gave up on it
    const body = BODIES[verdict];
    res.writeHead(verdict, { ...TEXT, 'Content-Length': body.length });
    res.end(body);
  };
  const tick = (): void => {
    timer = undefined;
    const t = now();
    lateness[firings++ % LATENESS_SAMPLES] = Math.max(0, t - due);
    sim.advance(t, reply);
    arm();
  };
  /** Sets the timer for the end of the tick the oldest waiting request belongs to. */
  function arm(): void {
    if (timer !== undefined || !sim.waiting) return;
    due = sim.tickEnd(sim.oldestTick);
    timer = setTimeout(tick, Math.max(0, due - now()));
  }
  const stats = (): LiveStatsResponse => {
    const t = now();
    sim.advance(t, reply);
    const timerLateness = latenessOf(lateness.subarray(0, Math.min(firings, LATENESS_SAMPLES)), firings);
    return { ...sim.snapshot(), server: model, nowMs: t - sim.startedAt, timerLateness, connections };
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    req.resume(); // a body, if any, is read and dropped: the model looks at arrivals only
    if (path === STATS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      const body = JSON.stringify(stats());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === PING_PATH) {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === RESET_PATH && req.method === 'POST') {
      for (const left of sim.reset(now())) reply(left, 503);
      firings = 0;
      connections = 0;
      res.writeHead(204);
      res.end();
      return;
    }
    sim.arrive(now(), res);
    arm();
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
        for (const left of sim.reset(now())) reply(left, 503);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
