// Wall time of the full herd table (6 strategies × seeds 0–19 = 120 runs), as the lab runs it:
// on worker threads, and in one thread for comparison. Run with `npm run bench`.
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { herdBase, herdPolicies } from '../packages/lab/dist/experiments/herd.js';
import { runHerdExperiment } from '../packages/lab/dist/experiments/herd-run.js';

const seeds = [...Array(20).keys()];
const rounds = Number(process.env.HERD_BENCH_ROUNDS ?? 5);

async function once(workers) {
  const t0 = performance.now();
  const result = await runHerdExperiment({ experiment: 'herd', base: herdBase(0), policies: herdPolicies(), seeds, workers });
  const ms = performance.now() - t0;
  const events = result.rows.reduce((sum, r) => sum + r.requests.mean * seeds.length, 0);
  return { ms, events };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export async function benchHerdTable() {
  const out = [];
  for (const workers of [availableParallelism(), 0]) {
    const times = [];
    let events = 0;
    for (let i = 0; i < rounds; i++) {
      const r = await once(workers);
      times.push(r.ms);
      events = r.events;
    }
    out.push({ workers, median: median(times), min: Math.min(...times), max: Math.max(...times), events });
  }
  return out;
}
