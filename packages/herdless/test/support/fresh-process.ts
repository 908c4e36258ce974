/**
 * Runs code in a new Node.js process, for the tests that need what one process cannot show: that a
 * result does not depend on the process it was computed in (its Math.random seed, its time zone, its
 * start time), or that an independent implementation (scripts/sim-reference.py, in CPython) agrees.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Runs an ES module source (which imports `herdless`, `herdless/sim`… as a user does: the built
 * package) in a fresh process and returns what it printed. `randomSeed` seeds V8's Math.random, so
 * two calls with different seeds differ in every hidden source of randomness.
 */
export function inFreshProcess(code: string, options: { randomSeed: number; timeZone: string }): string {
  const r = spawnSync(process.execPath, [`--random-seed=${options.randomSeed}`, '--input-type=module', '-e', code], {
    cwd: root,
    env: { ...process.env, TZ: options.timeZone },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`fresh process exited with ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/**
 * CPython, when this machine has it (Debian: python3). Without it the reference checks are skipped
 * locally; under CI=true (`.ci/run` installs it) they fail instead.
 */
export const PYTHON3 = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p));

/** Runs scripts/sim-reference.py with `what` ('paths' or 'fleet') and returns its JSON. */
export function simReference(what: 'paths' | 'fleet'): unknown {
  if (PYTHON3 === undefined) throw new Error('python3 is missing (apt-get install python3): the simulator\'s reference figures cannot be checked');
  const r = spawnSync(PYTHON3, [`${root}scripts/sim-reference.py`, what], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sim-reference.py ${what} exited with ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
