import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * withRetry(fetch) against real failed connections, in every runtime herdless claims, each with its
 * own fetch and its own error shapes: Node (whichever line runs the suite), Bun, Deno, Debian's
 * chromium, and a Workers-like sandbox without setImmediate. Every runtime runs the same
 * runtimes/scenario.mjs against the built library (dist/, which the test setup builds):
 *  - a refused connection (nothing listens) is tried three times and given up as 'exhausted';
 *  - a server that closes the first two requests' connections without an answer, then answers, is
 *    answered on the third attempt — and saw exactly three requests.
 * The refused port is one the system just handed out and was closed again; another program taking
 * it in the few milliseconds between is the one (unlikely) way this run would fail for no fault.
 *
 * Bun and Deno are found as HERDLESS_BUN / HERDLESS_DENO or on PATH (.ci/run installs both from
 * npm); chromium at /usr/bin/chromium. A missing runtime skips its test with a note, except under
 * CI=true, where it fails.
 */

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const DIST = here('../dist/index.js');
const SCENARIO = here('./runtimes/run-scenario.mjs');

function findBinary(env: string, name: string): string | undefined {
  const given = process.env[env];
  if (given !== undefined && given !== '') return given;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

const CHROMIUM = '/usr/bin/chromium';
const BUN = findBinary('HERDLESS_BUN', 'bun');
const DENO = findBinary('HERDLESS_DENO', 'deno');
const required = (what: string, found: boolean): boolean => {
  if (!found && !process.env.CI) console.warn(`runtime-fetch.test: ${what} skipped (not installed; .ci/run installs it)`);
  return found || Boolean(process.env.CI);
};
/** The binary found, or (under CI=true, where a runtime may not be skipped) a failure that says what to install. */
const binary = (what: string, variable: string, path: string | undefined): string => {
  if (path === undefined) throw new Error(`runtime-fetch.test: ${what} not found: set ${variable} to its binary or put it on PATH (.ci/run installs it from npm)`);
  return path;
};

/** What scenario.mjs records (see there). */
interface ErrorShape {
  name?: string;
  message?: string;
  code?: string;
  cause?: ErrorShape;
}
interface ScenarioRecord {
  refused: { attempts: number; retried: ErrorShape[]; isRetryError?: boolean; reason?: string; cause?: ErrorShape; unexpected?: string };
  dropped: { retried: ErrorShape[]; status?: number; body?: string; attempts?: number; unexpected?: ErrorShape };
}

/** A loopback port nothing listens on: one the system hands out, closed again at once. */
async function refusedUrl(): Promise<string> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}/refused`;
}

/** A server that destroys the connection of its first `drops` requests, unanswered, then answers `answered` (with CORS, for the page). */
async function droppingServer(drops: number) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (requests <= drops) {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*', connection: 'close' });
    res.end('answered');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/dropped`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Runs the scenario with `run` against a fresh refused port and dropping server; checks the record and the server's count. */
async function scenario(run: (refused: string, dropped: string) => Promise<ScenarioRecord>): Promise<ScenarioRecord> {
  const server = await droppingServer(2);
  try {
    const record = await run(await refusedUrl(), server.url);
    expect(record.refused).toMatchObject({ attempts: 3, isRetryError: true, reason: 'exhausted' });
    expect(record.refused.retried).toHaveLength(2);
    expect(record.refused.cause?.name).toBe('TypeError');
    expect(record.dropped).toMatchObject({ status: 200, body: 'answered', attempts: 3 });
    expect(record.dropped.retried).toHaveLength(2);
    expect(server.requests()).toBe(3);
    return record;
  } finally {
    await server.close();
  }
}

/** Runs run-scenario.mjs under a runtime's binary; resolves with the JSON line it prints. */
async function runBinary(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ScenarioRecord> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  // A generous guard for a busy machine: the scenario itself takes well under a second.
  const guard = setTimeout(() => child.kill('SIGKILL'), 50_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(guard);
  if (code !== 0) throw new Error(`${command} exited with ${code}: ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as ScenarioRecord;
}

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
const temp = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};

describe('withRetry(fetch) retries a failed connection in every runtime', () => {
  it('Node (this process’s line): the TypeError("fetch failed") with the socket error as cause', async () => {
    expect(existsSync(DIST)).toBe(true);
    const record = await scenario((refused, dropped) => runBinary(process.execPath, [SCENARIO, refused, dropped]));
    expect(record.refused.cause).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it.runIf(required('Bun', BUN !== undefined))('Bun: the code on the TypeError itself', async () => {
    const record = await scenario((refused, dropped) => runBinary(binary('Bun', 'HERDLESS_BUN', BUN), [SCENARIO, refused, dropped], { BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' }));
    expect(record.refused.cause).toMatchObject({ name: 'TypeError', code: 'ECONNREFUSED' });
  });

  it.runIf(required('Deno', DENO !== undefined))('Deno: no code, the message says what failed', async () => {
    const env = { DENO_DIR: temp('herdless-deno-'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
    const record = await scenario((refused, dropped) => runBinary(binary('Deno', 'HERDLESS_DENO', DENO), ['run', '--no-prompt', '--allow-net=127.0.0.1', SCENARIO, refused, dropped], env));
    expect(record.refused.cause?.code).toBeUndefined();
    expect(JSON.stringify(record.refused.cause)).toContain('error sending request');
  });

  it('a Workers-like sandbox: no setImmediate, no Node.js modules, only fetch and timers', async () => {
    const out = await build({
      entryPoints: [here('./runtimes/worker-entry.mjs')],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0]!.text;
    // The globals a Worker has that the library may use; setImmediate and process are absent.
    const sandbox = createContext({
      fetch,
      Request,
      Response,
      Headers,
      AbortController,
      AbortSignal,
      DOMException,
      URL,
      URLSearchParams,
      TextEncoder,
      TextDecoder,
      crypto,
      performance,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      console,
    });
    runInContext(code, sandbox);
    expect(runInContext('[typeof setImmediate, typeof process, typeof runFailedConnections]', sandbox)).toEqual(['undefined', 'undefined', 'function']);
    const run = (sandbox as { runFailedConnections: (a: string, b: string) => Promise<ScenarioRecord> }).runFailedConnections;
    // JSON round trip: the record is built from the sandbox's own objects.
    await scenario(async (refused, dropped) => JSON.parse(JSON.stringify(await run(refused, dropped))) as ScenarioRecord);
  });

  describe.runIf(required('chromium', existsSync(CHROMIUM)))('chromium: "Failed to fetch", no code', () => {
    let context: BrowserContext | undefined;
    let page: http.Server | undefined;
    afterAll(async () => {
      await context?.close();
      if (page !== undefined) {
        page.closeAllConnections();
        page.close();
      }
    });

    it('the bundled library in a page, against the loopback servers', async () => {
      const out = await build({
        entryPoints: [here('./runtimes/browser-entry.mjs')],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        write: false,
        logLevel: 'silent',
      });
      const bundle = out.outputFiles[0]!.text;
      // The page comes from its own origin; the scenario's servers are other origins (CORS applies).
      page = http.createServer((req, res) => {
        if ((req.url ?? '').startsWith('/bundle.js')) {
          res.writeHead(200, { 'content-type': 'text/javascript' });
          res.end(bundle);
        } else {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<!doctype html><title>herdless</title><body><script type="module" src="/bundle.js"></script></body>');
        }
      });
      page.listen(0, '127.0.0.1');
      await once(page, 'listening');
      const origin = `http://127.0.0.1:${(page.address() as net.AddressInfo).port}`;
      context = await chromium.launchPersistentContext(temp('herdless-chromium-'), {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
      });
      const tab = context.pages()[0] ?? (await context.newPage());
      const problems: string[] = [];
      tab.on('pageerror', (e) => problems.push(e.message));
      const record = await scenario(async (refused, dropped) => {
        await tab.goto(`${origin}/?${new URLSearchParams({ refused, dropped }).toString()}`);
        await tab.waitForFunction(() => document.body.dataset.done === 'true', undefined, { timeout: 50_000 });
        return tab.evaluate(() => (window as unknown as { herdlessRecord: ScenarioRecord }).herdlessRecord);
      });
      expect(record.refused.cause).toEqual({ name: 'TypeError', message: 'Failed to fetch' });
      expect(record.dropped.retried).toEqual([
        { name: 'TypeError', message: 'Failed to fetch' },
        { name: 'TypeError', message: 'Failed to fetch' },
      ]);
      expect(problems).toEqual([]);
    }, 90_000);
  });
});
