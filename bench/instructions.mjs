// 1b. The success path in machine instructions and bytes allocated: figures of section 1 that a
// shared, noisy machine cannot move. Each subject runs in its own process under valgrind's
// cachegrind, once with `short` calls after the warm-up and once with `long`; the difference divided
// by `long − short` is the count per call (start-up, warm-up and JIT compilation cancel out).
// `--predictable`: no concurrent compiler or GC threads and fixed seeds, so that runs repeat to within a few instructions. A 256 MiB
// young generation: no GC runs at all, so the count is the calls' own work (the mutator), and the
// heap's growth is what they allocated; the GC's later cost follows from the bytes. Optional:
// skipped when valgrind is missing.
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { median } from './lib/harness.mjs';
import { breakerSubjects, successSubjects } from './lib/subjects.mjs';

const run = promisify(execFile);
/** The subjects counted: the baseline, the floor, every herdless and cockatiel success subject (p-retry is left out: two orders slower); then both breakers' shells. */
const SUBJECTS = /^(bare|floor|herdless|cockatiel)/;
const child = new URL('./instructions-child.mjs', import.meta.url).pathname;

/** Whether valgrind runs here (its version line), or undefined. */
async function valgrindVersion() {
  try {
    const { stdout } = await run('valgrind', ['--version']);
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** { instructions, allocated } of one process of `script` running `calls` calls of `name` after `warmup` calls. */
async function measureRun(name, warmup, calls, script = child) {
  const { stdout, stderr } = await run(
    'valgrind',
    ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, '--predictable', `--min-semi-space-size=${SEMI_SPACE_MIB}`, `--max-semi-space-size=${SEMI_SPACE_MIB}`, script, name, String(warmup), String(calls)],
    { maxBuffer: 16 << 20 },
  );
  const match = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (match === null) throw new Error(`valgrind printed no instruction count for ${name}:\n${stderr.slice(-2000)}`);
  return { instructions: Number(match[1].replaceAll(',', '')), allocated: JSON.parse(stdout.trim().split('\n').pop()).allocated };
}

/** MiB of each young-generation semi-space: more than a run allocates, so that no GC runs. */
export const SEMI_SPACE_MIB = 256;

/** Runs `jobs` (functions returning promises) at most `width` at a time, results in order. */
async function pooled(jobs, width) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}

/**
 * @param opts.repeats measurements per subject (median taken); opts.calls [short, long] call counts.
 * @returns { valgrind, perCall: { [name]: { median, runs, bytes, bytesRuns } } } or { skipped: why }
 */
export async function benchInstructions({ repeats, calls }) {
  const names = [...Object.keys(successSubjects()).filter((name) => SUBJECTS.test(name)), ...Object.keys(breakerSubjects())];
  return countPerCall(names, child, { repeats, calls });
}

/** The overload section's subjects (bench/lib/overload-subjects.mjs), counted the same way. */
export async function benchOverloadInstructions({ repeats, calls }) {
  const { overloadSubjects } = await import('./lib/overload-subjects.mjs');
  return countPerCall(Object.keys(overloadSubjects()), new URL('./overload-instructions-child.mjs', import.meta.url).pathname, { repeats, calls });
}

/** Instructions and bytes per call of each of `names`, each run by `script` under valgrind. */
async function countPerCall(names, script, { repeats, calls: [short, long] }) {
  const valgrind = await valgrindVersion();
  if (valgrind === undefined) return { skipped: 'valgrind is not installed (Debian: apt-get install valgrind)' };
  const warmup = 20_000;
  const jobs = [];
  for (let r = 0; r < repeats; r++) {
    for (const name of names) {
      const [a, b] = [short, long];
      jobs.push(async () => {
        const long = await measureRun(name, warmup, b, script);
        const short = await measureRun(name, warmup, a, script);
        return { name, perCall: (long.instructions - short.instructions) / (b - a), bytes: (long.allocated - short.allocated) / (b - a) };
      });
    }
  }
  const results = await pooled(jobs, os.availableParallelism());
  const perCall = {};
  for (const name of names) {
    const mine = results.filter((x) => x.name === name);
    const runs = mine.map((x) => x.perCall);
    const bytes = mine.map((x) => x.bytes);
    perCall[name] = { median: median(runs), runs, bytes: median(bytes), bytesRuns: bytes };
  }
  return { valgrind, perCall };
}
