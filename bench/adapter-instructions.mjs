// 7b. The adapters' success path in machine instructions (valgrind's cachegrind): the client
// process only — the loopback server runs in a process valgrind does not follow. Each subject runs
// twice after the same warm-up, with `short` and `long` requests; (long − short) ÷ the difference is
// the count per request (start-up, warm-up and JIT compilation cancel out). Slow (node under
// valgrind on a busy machine: a minute or more per run), so only the compared pairs are counted.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { adapterPairs } from './lib/adapter-subjects.mjs';
import { SEMI_SPACE_MIB } from './instructions.mjs';

const run = promisify(execFile);
const child = new URL('./adapter-instructions-child.mjs', import.meta.url).pathname;

async function count(name, warmup, calls) {
  // As section 1b: --predictable (no concurrent compiler or GC threads, fixed seeds) and a young
  // generation larger than the run allocates, so that no GC runs mid-count and runs repeat.
  const node = [process.execPath, '--predictable', `--min-semi-space-size=${SEMI_SPACE_MIB}`, `--max-semi-space-size=${SEMI_SPACE_MIB}`];
  const { stderr } = await run('valgrind', ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', ...node, child, name, String(warmup), String(calls)], {
    maxBuffer: 16 << 20,
  });
  const match = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (match === null) throw new Error(`valgrind printed no instruction count for ${name}:\n${stderr.slice(-2000)}`);
  return Number(match[1].replaceAll(',', ''));
}

export async function benchAdapterInstructions({ warmup = 300, calls = [100, 400] } = {}) {
  try {
    await run('valgrind', ['--version']);
  } catch {
    return { skipped: 'valgrind is not installed' };
  }
  const names = adapterPairs.flat();
  const jobs = names.flatMap((name) => calls.map((n) => ({ name, n })));
  const results = new Map();
  // Two at a time: the machine has two cores, and each run is single-threaded enough.
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      results.set(`${job.name}\u0000${job.n}`, await count(job.name, warmup, job.n));
    }
  };
  await Promise.all([worker(), worker()]);
  const perRequest = {};
  for (const name of names) perRequest[name] = (results.get(`${name}\u0000${calls[1]}`) - results.get(`${name}\u0000${calls[0]}`)) / (calls[1] - calls[0]);
  return { perRequest, warmup, calls };
}
