import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from './lab-server.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** A raw request: the path goes out exactly as written (no URL normalisation). */
function get(url: string, path: string, options: { method?: string; host?: string } = {}): Promise<{ status: number; type: string; body: string; headers: Record<string, unknown> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: options.method ?? 'GET', headers: options.host ? { host: options.host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => (body += s));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('herdless-lab serve', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await startServe();
  });
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  it('serves the page and its two bundles from 127.0.0.1', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await get(server.url, '/');
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="/page.js"></script>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    for (const path of ['/page.js', '/sim-worker.js']) {
      const js = await get(server.url, path);
      expect(js.status).toBe(200);
      expect(js.type).toBe('text/javascript; charset=utf-8');
    }
    // The worker carries the library's engine (its bundle holds PyRandom's error text).
    expect((await get(server.url, '/sim-worker.js')).body).toContain('PyRandom: seed must be a safe integer');
  });

  it.each([
    ['/../package.json', 404],
    ['/%2e%2e/%2e%2e/package.json', 404],
    ['/dist/main.js', 404],
    ['/web/page.js', 404],
    ['/etc/passwd', 404],
    ['//page.js', 404],
    ['/page.js?v=1', 200],
  ])('GET %s → %i (only its own files)', async (path, status) => {
    expect((await get(server.url, path)).status).toBe(status);
  });

  it('answers GET and HEAD only, and only to its own host name', async () => {
    expect((await get(server.url, '/', { method: 'POST' })).status).toBe(405);
    expect((await get(server.url, '/', { method: 'HEAD' })).status).toBe(200);
    expect((await get(server.url, '/', { host: 'attacker.example' })).status).toBe(421);
    const { port } = new URL(server.url);
    expect((await get(server.url, '/', { host: `localhost:${port}` })).status).toBe(200);
  });

  it('stops on SIGINT with status 0', async () => {
    expect(await server.stop()).toBe(0);
    expect(server.output()).toContain('stopped (SIGINT)');
  });
});

describe('herdless-lab serve --port', () => {
  it.each([['70000'], ['-1'], ['http'], ['80.5']])('--port %s exits 2 naming the flag', (port) => {
    const r = spawnSync(process.execPath, [main, 'serve', '--port', port], { encoding: 'utf8', timeout: 300_000 });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`herdless-lab: --port ${JSON.stringify(port)}: expected an integer from 0 to 65535`);
  });

  it('a port in use exits 2 with one line', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = spawnSync(process.execPath, [main, 'serve', '--port', String(port)], { encoding: 'utf8', timeout: 300_000 });
      expect(r.status).toBe(2);
      expect(r.stderr.trim()).toBe(`herdless-lab: --port ${port}: already in use (try another, or 0 for any free port)`);
    } finally {
      blocker.close();
    }
  });
});
