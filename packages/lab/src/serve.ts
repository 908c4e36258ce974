import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { HOST, listenLoopback } from './listen.js';
import { UsageError } from './usage-error.js';
import { pageHtml } from './web/page-html.js';

interface Asset {
  type: string;
  body: string;
}

/** The bundles `scripts/bundle-page.mjs` writes when the lab is built or packed. */
const BUNDLES = ['page.js', 'sim-worker.js'] as const;

/**
 * The page and its worker, bundled when the lab was built or packed (dist/web/bundle: the lab's page
 * code with the library's ESM), read into memory: serving needs no bundler.
 * @throws Error naming the missing file and the command that writes it, in a tree built by `tsc` alone.
 */
export function loadPage(): Map<string, Asset> {
  const js = 'text/javascript; charset=utf-8';
  const assets = new Map<string, Asset>([['/', { type: 'text/html; charset=utf-8', body: pageHtml() }]]);
  for (const name of BUNDLES) {
    const url = new URL(`./web/bundle/${name}`, import.meta.url);
    let body: string;
    try {
      body = readFileSync(url, 'utf8');
    } catch (error) {
      throw new Error(`the lab page is not bundled (${url.pathname} is missing): run \`npm run build\` in the herdless repository`, { cause: error });
    }
    assets.set(`/${name}`, { type: js, body });
  }
  return assets;
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** A running lab page server. */
export interface LabServer {
  url: string;
  /** The port asked for, when it was taken and the server moved to a free one. */
  movedFrom?: number;
  close(): Promise<void>;
}

/**
 * Serves the lab page on 127.0.0.1 only. It serves its own in-memory files and nothing else — no
 * path ever reaches the file system — answers GET and HEAD only, and refuses requests whose Host is
 * not its own address (a guard against DNS rebinding).
 * @param port 0 picks a free port.
 * @param options.orAnyFreePort when `port` is taken, serve on any free port instead (and say so in `movedFrom`).
 * @throws UsageError `--port N: …` when the port is taken (without `orAnyFreePort`) or not allowed.
 */
export async function startServer(port: number, options: { orAnyFreePort?: boolean } = {}): Promise<LabServer> {
  const assets = loadPage();
  let allowedHosts: Set<string> = new Set();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const send = (status: number, type: string, body: string, extra: Record<string, string> = {}): void => {
      res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) return send(421, 'text/plain; charset=utf-8', 'wrong host\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD' });
    const path = (req.url ?? '/').split('?')[0]!;
    const asset = assets.get(path === '/index.html' ? '/' : path);
    if (!asset) return send(404, 'text/plain; charset=utf-8', 'not found\n');
    send(200, asset.type, asset.body);
  };
  const server = createServer(handle);
  let movedFrom: number | undefined;
  let actual: number;
  try {
    actual = await listenLoopback(server, port);
  } catch (error) {
    // The default port may be taken by another program (or another lab page): any free port will do then.
    if (!options.orAnyFreePort || !(error instanceof UsageError) || !/already in use/.test(error.message)) throw error;
    server.removeAllListeners('error');
    movedFrom = port;
    actual = await listenLoopback(server, 0);
  }
  allowedHosts = new Set([`${HOST}:${actual}`, `localhost:${actual}`]);
  return {
    url: `http://${HOST}:${actual}/`,
    ...(movedFrom === undefined ? {} : { movedFrom }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
