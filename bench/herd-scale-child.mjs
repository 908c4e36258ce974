// One full-jitter herd run with N clients in a fresh process (run by herd-scale.mjs): prints the
// run's time, its request events and the process's peak resident memory.
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { herdScenario, runScenario } from '../packages/herdless/dist/sim/index.js';

const clients = Number(process.argv[2]);
const seed = Number(process.argv[3] ?? 0);
const repeat = Number(process.argv[4] ?? 1);

/**
 * Peak RSS in MiB: Linux's VmHWM (this process image's high-water mark; resourceUsage().maxRSS
 * would include the parent's memory from before exec), else the largest sampled rss.
 */
let sampled = 0;
const sample = () => {
  sampled = Math.max(sampled, process.memoryUsage.rss());
};
function peakMiB() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // not Linux
  }
  return sampled / 2 ** 20;
}

// Warm-up: a small run first, so the timed one measures the engine, not the JIT's start.
runScenario(herdScenario('full jitter', { clients: 10_000, horizonMs: 20_000 }), seed);
function resetPeak() {
  globalThis.gc?.();
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // not Linux: the sampled peak covers every run
  }
  sampled = 0;
  sample();
  baseMiB = currentMiB();
}

function currentMiB() {
  return process.memoryUsage.rss() / 2 ** 20;
}

let baseMiB = currentMiB();
// `repeat` runs (small sizes: one run is over in a few ms, within the noise of one GC); the median.
// Before the last one, the garbage of the others is collected and the high-water mark reset
// (Linux: `5` to /proc/self/clear_refs), so the peak is that of one run.
const times = [];
let r;
for (let i = 0; i < repeat; i++) {
  if (i === repeat - 1) resetPeak();
  const t0 = performance.now();
  r = runScenario(herdScenario('full jitter', { clients }), seed, { onTick: (t) => t % 500 === 0 && sample() });
  times.push(performance.now() - t0);
}
const ms = times.sort((a, b) => a - b)[times.length >> 1];
sample();
process.stdout.write(
  JSON.stringify({ clients, seed, ms, requests: r.requests, ticks: r.ticks, finished: r.finished, crashes: r.crashes, succeeded: r.succeeded, outstanding: r.outstanding, baseMiB, peakMiB: peakMiB() }) + '\n',
);
