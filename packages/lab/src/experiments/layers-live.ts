import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fullJitterBackoff } from 'herdless';
import { DO_NOT_RETRY_HEADER, throwIfNotOk, withRetry } from 'herdless/http';
import { loadShedder } from 'herdless/server';
import { LAYERS_POLICIES, layerNames, type LayersRow } from 'herdless/sim';

/** The most calls a live run may make to its deepest service: attempts^depth. */
export const LIVE_LAYERS_MAX_CALLS = 1000;

/** One running chain: the services' servers (index 0 is the frontend) and the requests each one counted. */
interface Chain {
  readonly urls: string[];
  readonly counts: number[];
  readonly servers: http.Server[];
}

async function listen(server: http.Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * Starts the chain from the bottom up (each service must know the URL of the one below). Every
 * service calls the next with herdless's retrying fetch (`maxAttempts` = `attempts`, a short full
 * jitter so the run takes milliseconds). The last service always answers 503.
 *
 * Under the one-layer rule every service below the frontend answers a failure with
 * `X-Herdless-Retry: no` — the db as its own answer, the others by `herdless/server`'s propagation
 * of a downstream give-up — so its caller does not retry; the frontend answers a plain 503, and
 * only the user's client retries. When every layer retries, nobody sends the mark.
 */
async function startChain(depth: number, attempts: number, oneLayer: boolean): Promise<Chain> {
  const counts = new Array<number>(depth).fill(0);
  const urls = new Array<string>(depth);
  const servers: http.Server[] = [];
  const backoff = fullJitterBackoff({ initialBackoffMs: 1, maxBackoffMs: 4 });
  for (let i = depth - 1; i >= 0; i--) {
    const mark = oneLayer && i > 0;
    let handler: http.RequestListener;
    if (i === depth - 1) {
      handler = (req, res) => {
        req.resume();
        res.writeHead(503, mark ? { [DO_NOT_RETRY_HEADER]: 'no' } : {}).end('db unavailable\n');
      };
    } else {
      const below = urls[i + 1]!;
      const api = withRetry(fetch, { maxAttempts: attempts, backoff });
      // propagate: a downstream give-up is answered 503 with the mark (below the frontend, one-layer rule) or without it.
      handler = loadShedder({ maxInFlight: 1000, propagate: mark }).node(async (_req, res) => {
        const response = throwIfNotOk(await api(below));
        res.end(await response.text());
      });
    }
    const server = http.createServer((req, res) => {
      counts[i]!++;
      handler(req, res);
    });
    servers.push(server);
    urls[i] = await listen(server);
  }
  return { urls, counts, servers };
}

async function stopChain(chain: Chain): Promise<void> {
  await Promise.all(
    chain.servers.map(async (server) => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    }),
  );
}

/**
 * The layers experiment on real sockets: `depth` node:http servers on 127.0.0.1 (ephemeral ports),
 * each calling the next through `withRetry(fetch)`, the last always failing; a user's client calls
 * the frontend with the same `maxAttempts`. The counts are the requests each server received —
 * the same rows as the simulated {@link runLayers}: with depth 3 and 3 attempts, 3 / 9 / 27 when
 * every layer retries and 3 / 3 / 3 under the one-layer rule.
 *
 * @param depth services in the chain (1–10); `attempts ** depth` ≤ {@link LIVE_LAYERS_MAX_CALLS}.
 * @param attempts `maxAttempts` of every caller (1–10).
 */
export async function runLiveLayers(depth: number, attempts: number): Promise<LayersRow[]> {
  const rows: LayersRow[] = [];
  const names = layerNames(depth);
  for (const policy of LAYERS_POLICIES) {
    const chain = await startChain(depth, attempts, policy === 'retry at one layer');
    try {
      const user = withRetry(fetch, { maxAttempts: attempts, backoff: fullJitterBackoff({ initialBackoffMs: 1, maxBackoffMs: 4 }) });
      const response = await user(chain.urls[0]!);
      await response.text();
      rows.push({ policy, calls: Object.fromEntries(names.map((n, i) => [n, chain.counts[i]!])) });
    } finally {
      await stopChain(chain);
    }
  }
  return rows;
}
