/**
 * A real HTTP server for the fetch adapter's tests: node:http on 127.0.0.1, an ephemeral port,
 * answering each request with the next step of a script. It records every request (with the
 * virtual time it arrived at, when given a clock), counts connections, and holds an idempotency
 * store for POST side effects. Tests start one per test and close it in afterEach.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server does with one request. */
export type Step =
  /** Answer with this status, headers and body (after reading the request body); `sendDate: false` leaves out node's automatic `Date` header. */
  | { readonly status: number; readonly headers?: Record<string, string | string[]>; readonly body?: string | Uint8Array; readonly sendDate?: boolean }
  /** Reset the connection (TCP RST) as soon as the request head arrives: nothing is processed. */
  | { readonly reset: 'on-arrival' }
  /** Read the request, then never answer: the response stays open until the client gives up or the server closes. */
  | { readonly hang: true }
  /** Send a 200 with the head and the first part of the body, then nothing more: a slow body. */
  | { readonly partial: string }
  /** Wait for `release` before answering `then`. */
  | { readonly release: Promise<void>; readonly then: Step }
  /**
   * The idempotency store: a POST's side effect is applied once per `Idempotency-Key` (a request
   * without a key always applies it) and answered 201 with the effect's record; a repeated key
   * gets the stored answer without a new effect. With `resetAfter`, the connection is reset after
   * the effect is stored, so the client never sees the answer.
   */
  | { readonly store: true; readonly resetAfter?: boolean };

/** One request as the server saw it. */
export interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The request body (empty when the step reset the connection before reading it). */
  body: Buffer;
  /** The clock's reading when the request head arrived (0 without a clock). */
  readonly at: number;
  /** True when the client went away before the response was complete. */
  aborted: boolean;
  /** Settles when the exchange is over (answered, reset, or abandoned by the client). */
  readonly closed: Promise<void>;
}

/** A side effect applied by the store. */
export interface Effect {
  readonly id: number;
  readonly key: string | undefined;
  readonly body: string;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly requests: Recorded[];
  /** Connections: accepted in all, open now, and the most open at once. */
  readonly connections: { total: number; open: number; peak: number };
  /** Side effects the store applied, in order. */
  readonly effects: Effect[];
  /** Replaces the script: request i (from now on) gets steps[i], then `fallback` (default 200 "ok"). */
  script(steps: readonly Step[], fallback?: Step): void;
  /** Resolves once `count` requests have arrived in all; rejects after `guardMs` of real time (a safety net, not a wait). */
  waitForRequests(count: number, guardMs?: number): Promise<void>;
  close(): Promise<void>;
}

const OK: Step = { status: 200, body: 'ok' };

export async function startScriptedServer(clock?: { now(): number }): Promise<ScriptedServer> {
  let steps: readonly Step[] = [];
  let fallback: Step = OK;
  let next = 0;
  const requests: Recorded[] = [];
  const connections = { total: 0, open: 0, peak: 0 };
  const effects: Effect[] = [];
  const stored = new Map<string, { status: number; body: string }>();
  const arrivals = new Set<() => void>();

  const readBody = async (req: http.IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  const play = async (step: Step, req: http.IncomingMessage, res: http.ServerResponse, record: Recorded): Promise<void> => {
    if ('reset' in step) {
      req.socket.resetAndDestroy();
      return;
    }
    record.body = await readBody(req);
    if ('hang' in step) return;
    if ('partial' in step) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(step.partial);
      return;
    }
    if ('release' in step) {
      await step.release;
      if (!res.destroyed) await play(step.then, req, res, record);
      return;
    }
    if ('store' in step) {
      const key = req.headers['idempotency-key'] as string | undefined;
      let answer = key === undefined ? undefined : stored.get(key);
      if (answer === undefined) {
        const effect: Effect = { id: effects.length + 1, key, body: record.body.toString() };
        effects.push(effect);
        answer = { status: 201, body: JSON.stringify(effect) };
        if (key !== undefined) stored.set(key, answer);
        if (step.resetAfter === true) {
          req.socket.resetAndDestroy();
          return;
        }
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
      return;
    }
    const body = step.body ?? '';
    res.sendDate = step.sendDate !== false;
    res.writeHead(step.status, { 'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength), ...step.headers });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
    const closed = once(res, 'close').then(() => {
      if (!res.writableFinished) record.aborted = true;
    });
    const record: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0), at: clock?.now() ?? 0, aborted: false, closed };
    requests.push(record);
    const step = steps[next++] ?? fallback;
    for (const wake of arrivals) wake();
    play(step, req, res, record).catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    connections.total++;
    connections.open++;
    if (connections.open > connections.peak) connections.peak = connections.open;
    socket.on('close', () => connections.open--);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    connections,
    effects,
    script(newSteps, newFallback = OK) {
      steps = newSteps;
      fallback = newFallback;
      next = 0;
    },
    waitForRequests(count, guardMs = 5000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const guard = setTimeout(() => {
          arrivals.delete(wake);
          reject(new Error(`expected ${count} requests, the server saw ${requests.length} within ${guardMs} ms`));
        }, guardMs);
        const wake = (): void => {
          if (requests.length < count) return;
          clearTimeout(guard);
          arrivals.delete(wake);
          resolve();
        };
        arrivals.add(wake);
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
