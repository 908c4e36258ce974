import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from './lab-server.js';
import { startPasted } from './shell.js';
import { tempDir } from './temp.js';

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

/** The processes below `pid` (children, their children, …), from /proc: pid → command line. */
function descendants(pid: number): Map<number, string> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the 4th field of /proc/PID/stat, after the command name in parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while we read.
    }
  }
  const found = new Map<number, string>();
  let frontier = [pid];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const [child, parent] of parents) {
      if (!frontier.includes(parent) || found.has(child)) continue;
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      } catch {
        // ended meanwhile
      }
      found.set(child, cmd);
      next.push(child);
    }
    frontier = next;
  }
  return found;
}

/** True while `pid` runs: an ended process not yet reaped by its new parent (a zombie) is not running. */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

describe.skipIf(process.platform !== 'linux')('npm run lab -- serve and SIGTERM', () => {
  it("SIGTERM to npm's process stops the server too: no node process is left and the port is free", async () => {
    const child = startPasted('npm run lab -- serve --port 0', tempDir('herdless-cwd-'));
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
    // Every stream closed: npm and every process that held its output (the lab) have exited.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    let below = new Map<number, string>();
    try {
      // Ready once it prints its address: a margin of 60 s for a build and a busy machine.
      for (let waited = 0; !/lab page: http:\/\/127\.0\.0\.1:\d+\//.test(out); waited += 100) {
        if (waited > 60_000 || child.exitCode !== null) throw new Error(`serve did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const port = Number(/lab page: http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)![1]);
      expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).toContain('npm');
      below = descendants(child.pid!);
      expect([...below.values()].some((cmd) => cmd.includes('run-lab.mjs serve'))).toBe(true);

      process.kill(child.pid!, 'SIGTERM');
      // The lab notices within a fraction of a second; 30 s is the margin for a busy machine. Without
      // the lab's own check it never ends, and this times out.
      await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`still running: ${[...below.entries()].filter(([pid]) => alive(pid)).map(([pid, cmd]) => `${pid} ${cmd}`).join('; ')}`)), 30_000))]);
      // Its output closed as it exited; the process itself is gone a moment later.
      for (let waited = 0; [...below.keys()].some(alive) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect([...below.keys()].filter(alive)).toEqual([]);
      expect(await refused(port)).toBe(true);
      expect(out).toContain('stopped (SIGTERM)');
    } finally {
      for (const pid of [child.pid!, ...below.keys()]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);
});
