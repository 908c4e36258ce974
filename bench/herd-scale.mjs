// 5b. The herd with full jitter at 1k, 10k, 100k and 1M clients: time, request events per second,
// peak memory. Each run in a fresh process, sizes rotated, so a run's memory is its own.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { spread } from './lib/harness.mjs';

const run = promisify(execFile);
const child = new URL('./herd-scale-child.mjs', import.meta.url).pathname;

export async function benchHerdScale({ rounds, sizes = [1_000, 10_000, 100_000, 1_000_000] }) {
  const results = new Map(sizes.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sizes.length; i++) {
      const clients = sizes[(i + r) % sizes.length];
      const { stdout } = await run(process.execPath, ['--expose-gc', child, String(clients), '0', String(repeats(clients))], { maxBuffer: 1 << 20 });
      results.get(clients).push(JSON.parse(stdout.trim().split('\n').pop()));
    }
  }
  return sizes.map((clients) => {
    const runs = results.get(clients);
    const first = runs[0];
    return {
      clients,
      requests: first.requests,
      ticks: first.ticks,
      finished: first.finished,
      crashes: first.crashes,
      outstanding: first.outstanding,
      ms: spread(runs.map((x) => x.ms)),
      eventsPerS: spread(runs.map((x) => (x.requests / x.ms) * 1000)),
      nsPerEvent: spread(runs.map((x) => (x.ms * 1e6) / x.requests)),
      maxRssMiB: spread(runs.map((x) => x.peakMiB)),
      baseRssMiB: spread(runs.map((x) => x.baseMiB)),
    };
  });
}

/** Runs per process: enough that a small size's figure is not one GC pause (1k: 25, 10k: 5, 100k+: 1). */
function repeats(clients) {
  return clients <= 1_000 ? 25 : clients <= 10_000 ? 5 : 1;
}
