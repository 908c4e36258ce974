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
/**
 * How long a live run waits for its `lab server` to print its address, ms: a failsafe against a
 * server that hangs, not a speed limit. An idle machine starts one in well under a second, but a
 * niced process on a loaded 2-core machine was seen taking 21 s just to print `--version`.
 */
export const SERVER_START_LIMIT_MS = 120_000;

/** What a live run's server start can be given instead of the defaults (tests give a short limit or another program). */
export interface ServerStartOptions {
  /** How long to wait for the address, ms. Default {@link SERVER_START_LIMIT_MS}. */
  limitMs?: number;
  /** The program and its leading arguments. Default: this Node.js and the lab's compiled `main.js`. */
  command?: readonly string[];
}

/** The last lines of a server's output, for an error message (one line; main.ts shortens it further). */
function excerpt(out: string): string {
  const lines = out.trim().split(/\r?\n/).filter((l) => l.trim() !== '');
  return lines.length === 0 ? 'it printed nothing' : `it printed: ${lines.slice(-3).join(' / ')}`;
}

/**
 * Starts `herdless-lab server --port 0` with `args` in a child process — so that the clients'
 * load does not delay the server's clock — and resolves once it prints its address.
 * @throws UsageError `lab server …` when it exits first, or prints no address within
 *   `options.limitMs` (default {@link SERVER_START_LIMIT_MS}); the message says what it printed
 *   and what to try. The CLI prints it as one line and exits with status 2.
 */
export function startServerProcess(args: readonly string[], options: ServerStartOptions = {}): Promise<ServerProcess> {
  const limitMs = options.limitMs ?? SERVER_START_LIMIT_MS;
  const [program, ...lead] = options.command ?? [process.execPath, MAIN];
  const child: ChildProcess = spawn(program!, [...lead, 'server', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
  // The same server as a command the user can run by hand, for the advice in an error.
  const byHand = ['herdless-lab', 'server', '--port', '0', ...args].map((a) => (/^[\w.,:/=+-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  return new Promise<ServerProcess>((resolve, reject) => {
    const fail = (why: () => string): void => {
      clearTimeout(timer);
      child.off('exit', early);
      child.off('error', failedToSpawn);
      // After stop(): its output is complete, and no process is left behind.
      void stop().then(() => reject(new UsageError(why())));
    };
    const timer = setTimeout(
      () =>
        fail(
          () =>
            `lab server (started for this live run) printed no address within ${limitMs / 1000} s, so the run was stopped (${excerpt(out)}): ` +
            `the machine may be too loaded to start it: close other load and retry, or start \`${byHand}\` yourself and pass the address it prints with --target`,
        ),
      limitMs,
    );
    const check = (): void => {
      const m = /^lab server: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.off('exit', early);
      child.off('error', failedToSpawn);
      resolve({ url: m[1]!, pid: child.pid!, stop });
    };
    const early = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(
        () =>
          `lab server (started for this live run) exited before printing its address (${signal === null ? `status ${code}` : `signal ${signal}`}; ${excerpt(out)}): ` +
          `run \`${byHand}\` to see why`,
      );
    const failedToSpawn = (error: Error): void => fail(() => `lab server (started for this live run) could not be started (${error.message})`);
    child.stdout!.on('data', check);
    child.once('exit', early);
    child.once('error', failedToSpawn);
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
