// 5a. Wall time of the full herd table (6 strategies × seeds 0–19 = 120 runs), as the lab runs it:
// on worker threads, and in one thread, rounds alternating between the two.
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { herdBase, herdPolicies } from '../packages/lab/dist/experiments/herd.js';
import { runHerdExperiment } from '../packages/lab/dist/experiments/herd-run.js';
import { spread } from './lib/harness.mjs';

const seeds = [...Array(20).keys()];

async function once(workers) {
  const t0 = performance.now();
  const result = await runHerdExperiment({ experiment: 'herd', base: herdBase(0), policies: herdPolicies(), seeds, workers });
  const ms = performance.now() - t0;
  // Request events: every request that reached the server, summed over the 120 runs.
  const events = result.rows.reduce((sum, r) => sum + r.requests.mean * seeds.length, 0);
  return { ms, events };
}

export async function benchHerdTable({ rounds }) {
  const modes = [availableParallelism(), 0];
  const times = new Map(modes.map((w) => [w, []]));
  let events = 0;
  for (let r = 0; r < rounds; r++) {
    for (const workers of r % 2 ? [...modes].reverse() : modes) {
      const run = await once(workers);
      times.get(workers).push(run.ms);
      events = run.events;
    }
  }
  return modes.map((workers) => ({ workers, ms: spread(times.get(workers)), events }));
}
