import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';

/*
 * Runs a command as a user pastes it into bash, e.g. `npm run lab -- herd --seeds 0`, from a folder
 * outside the repository: an `npm` on PATH forwards to the real npm with `--prefix <repository>`,
 * so `npm run lab` runs this repository's script (and npm passes the folder as INIT_CWD, as it
 * does for a user in a subfolder). `--silent` keeps npm's own banner out of the output.
 */

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

let bin: string | undefined;
function shimDir(): string {
  if (bin) return bin;
  const real = spawnSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!real) throw new Error('npm is not on PATH');
  bin = tempDir('herdless-npm-');
  const shim = join(bin, 'npm');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(real)} --prefix ${JSON.stringify(REPO)} --silent "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

function env(): NodeJS.ProcessEnv {
  const e = { ...process.env, PATH: `${shimDir()}:${process.env.PATH ?? ''}` };
  delete e.INIT_CWD;
  return e;
}

/** Runs `command` with bash in `cwd` and waits for it. */
export function pasted(command: string, cwd: string, timeout = 120_000): SpawnSyncReturns<string> {
  return spawnSync('bash', ['-c', command], { cwd, env: env(), encoding: 'utf8', timeout });
}

/**
 * Starts `command` with bash in `cwd`, in its own process group, its output piped. Bash runs a lone
 * command in its own process (exec), and the `npm` shim execs the real npm: for `npm run …` the
 * child's pid is npm's, as a user's `kill <npm's pid>` would find it.
 */
export function startPasted(command: string, cwd: string): ChildProcess {
  return spawn('bash', ['-c', command], { cwd, env: env(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Starts a long-running command (a server) with bash in `cwd` in its own process group, waits until
 * its output matches `ready`, hands that output to `check`, then presses Ctrl+C (SIGINT to the group)
 * and resolves with everything it printed.
 */
export function pastedUntil(command: string, cwd: string, ready: RegExp, check: (output: string) => Promise<void>): Promise<string> {
  const child = spawn('bash', ['-c', command], { cwd, env: env(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`${command}: not ready after 120 s: ${out}`));
    }, 120_000);
    let checked = false;
    const onData = (s: string): void => {
      out += s;
      if (checked || !ready.test(out)) return;
      checked = true;
      check(out).then(
        () => process.kill(-child.pid!, 'SIGINT'),
        (error: unknown) => {
          process.kill(-child.pid!, 'SIGINT');
          reject(error as Error);
        },
      );
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', onData);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}
