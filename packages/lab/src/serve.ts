import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import { HOST, listenLoopback } from './listen.js';
import { UsageError } from './usage-error.js';
import { pageHtml } from './web/page-html.js';

interface Asset {
  type: string;
  body: string;
}

/**
 * Bundles the page and its worker from the compiled lab (dist/web) with the library's compiled ESM
 * (herdless/dist, through the workspace link) into two ES modules, in memory.
 */
export async function bundlePage(): Promise<Map<string, Asset>> {
  const entry = (name: string): string => fileURLToPath(new URL(`./web/${name}.js`, import.meta.url));
  const out = await build({
    entryPoints: { page: entry('page'), 'sim-worker': entry('sim-worker') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: '/bundle',
    logLevel: 'silent',
    legalComments: 'none',
  });
  await stop(); // esbuild's helper process is not needed once the bundles are in memory
  const js = 'text/javascript; charset=utf-8';
  const assets = new Map<string, Asset>([['/', { type: 'text/html; charset=utf-8', body: pageHtml() }]]);
  for (const f of out.outputFiles) assets.set(`/${f.path.replace(/^.*\//, '')}`, { type: js, body: f.text });
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
  const assets = await bundlePage();
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
