import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** A `herdless-lab serve` process started by a test. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far. */
  output: () => string;
  /** Sends SIGINT and resolves with the exit code. */
  stop: () => Promise<number | null>;
}

/** Starts `herdless-lab serve --port 0` (any free port) and waits for the URL it prints. */
export function startServe(): Promise<ServeProcess> {
  const child = spawn(process.execPath, [main, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 120 s: ${out}`)), 120_000);
    const check = (): void => {
      const m = /lab page: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve({
        child,
        url: m[1]!,
        output: () => out,
        stop: () => {
          child.kill('SIGINT');
          return exited;
        },
      });
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

/** True while a process with this pid exists (signal 0 tests for it without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
