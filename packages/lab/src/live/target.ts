import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, fetch as undiciFetch } from 'undici';
import { UsageError } from '../usage-error.js';
import type { LiveTarget } from './fleet.js';
import { STATS_PATH } from './server.js';

/** A `lab server` in its own process, started by a live run. */
export interface ServerProcess {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  pid: number;
  /** SIGTERM, and resolves once it has exited. */
  stop(): Promise<void>;
}

// The compiled command line; tests run this module from its source, beside which the build is in dist/.
const MAIN = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/main.js' : '../main.js', import.meta.url));
/** A server that has not printed its address by then is broken. */
const START_TIMEOUT_MS = 15_000;

/**
 * Starts `herdless-lab server --port 0` with `args` in a child process — so that the clients'
 * load does not delay the server's clock — and resolves once it prints its address.
 * @throws Error when it exits or stays silent instead (its output is in the message).
 */
export function startServerProcess(args: readonly string[]): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'server', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  // 'close' comes after 'exit' and after its pipes are closed; the process handle itself is
  // released in the next turn of the event loop, so the promise resolves after that turn.
  const exited = new Promise<void>((resolve) => child.once('close', () => setTimeout(resolve, 0)));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise<ServerProcess>((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`lab server ${why}: ${out.trim()}`)));
    };
    const timer = setTimeout(() => fail(`printed no address within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const check = (): void => {
      const m = /^lab server: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.off('exit', early);
      resolve({ url: m[1]!, pid: child.pid!, stop });
    };
    const early = (): void => fail('exited early');
    child.stdout!.on('data', check);
    child.once('exit', early);
  });
}

/**
 * Checks `--target URL` before a run: an http(s) URL that answers. Asks its stats path once to
 * learn whether it is a `lab server` (whose time and stats the run can then use).
 * @throws UsageError `--target URL: …` for a URL that is not http(s), or a server that does not answer.
 */
export async function checkTarget(text: string): Promise<LiveTarget> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--target ${JSON.stringify(text)}: not a URL (expected http://host:port/path)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--target ${JSON.stringify(text)}: not an HTTP URL (expected http:// or https://, got ${url.protocol})`);
  }
  const agent = new Agent({ connect: { timeout: 3000 } });
  try {
    const res = await undiciFetch(new URL(STATS_PATH, url), { dispatcher: agent, signal: AbortSignal.timeout(5000) });
    const body = await res.text();
    let lab = false;
    if (res.status === 200) {
      try {
        lab = typeof (JSON.parse(body) as { tickMs?: unknown }).tickMs === 'number';
      } catch {
        lab = false;
      }
    }
    return { url: url.href, labServer: lab ? new URL('/', url).href : undefined };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new UsageError(`--target ${JSON.stringify(text)}: unreachable (${why})`);
  } finally {
    await agent.destroy();
  }
}
