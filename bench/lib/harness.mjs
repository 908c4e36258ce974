// The measuring harness: mitata's `measure` for each case (batches of calls, per-call median), run
// side by side in one process, in rounds whose order rotates, so that drift and noise from a shared
// machine spread over every case alike. A case's figure is the median over rounds of its per-round
// median; ratios are taken within each round (same conditions), then their median over rounds.
import { measure } from 'mitata';

/**
 * The clock samples are timed with: 'cpu' (this process's CPU time, user + system, in ns — time
 * the process spends descheduled by other work on a shared machine is not counted; the GC's helper
 * threads are) or 'wall' (mitata's monotonic clock). BENCH_CLOCK=wall|cpu; default wall.
 */
export const defaultClock = process.env.BENCH_CLOCK === 'cpu' ? 'cpu' : 'wall';

function cpuNow() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}

/** Median of a list of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** { median, min, max } of a list of numbers. */
export function spread(xs) {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

/**
 * Measures each case for `rounds` rounds, rotating the order every round.
 * @param cases { name: () => unknown | Promise<unknown> } — one call of the thing measured
 * @param opts.rounds rounds; opts.minCpuMs the time mitata spends on one case in one round;
 *   opts.perCall divides each sample (a case doing N calls reports per call); opts.baseline the
 *   name ratios are taken against; opts.batchSamples, opts.minSamples mitata's batch size (calls
 *   per sample when a call is fast) and least number of samples — smaller for slow subjects.
 * @returns { [name]: { ns: spread, ratio?: spread, rounds: number[] } }
 */
export async function compare(cases, { rounds = 5, minCpuMs = 100, perCall = 1, baseline, batchSamples, minSamples, onRound, clock = defaultClock } = {}) {
  const names = Object.keys(cases);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  // A warm-up round, not counted: the JIT settles every case (and every shared function in the
  // mix) before the first counted figure.
  for (const name of names) await measure(cases[name], { min_cpu_time: minCpuMs * 1e6 });
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      const stats = await measure(cases[name], {
        min_cpu_time: minCpuMs * 1e6,
        ...(clock === 'cpu' ? { now: cpuNow } : {}),
        ...(batchSamples === undefined ? {} : { batch_samples: batchSamples }),
        ...(minSamples === undefined ? {} : { min_samples: minSamples }),
      });
      samples[name].push(stats.p50 / perCall);
    }
    onRound?.(r);
  }
  return summarize(samples, baseline);
}

/**
 * Per case: `ns` (median, min, max over rounds), `ratio` to the baseline (taken round by round),
 * and the raw `rounds`.
 */
export function summarize(samples, baseline) {
  const out = {};
  for (const [name, rounds] of Object.entries(samples)) {
    const entry = { ns: spread(rounds), rounds };
    if (baseline !== undefined) entry.ratio = spread(rounds.map((x, r) => x / samples[baseline][r]));
    out[name] = entry;
  }
  return out;
}

/** Pools the rounds of several `compare` results (from several processes) into one. */
export function pool(results, baseline) {
  const samples = {};
  for (const result of results) {
    for (const [name, entry] of Object.entries(result)) (samples[name] ??= []).push(...entry.rounds);
  }
  return summarize(samples, baseline);
}

/** Formats nanoseconds: 38.2 ns, 5.81 µs, 1.23 ms. */
export function ns(x) {
  if (x < 1e3) return `${x.toFixed(x < 100 ? 1 : 0)} ns`;
  if (x < 1e6) return `${(x / 1e3).toFixed(2)} µs`;
  return `${(x / 1e6).toFixed(2)} ms`;
}

/** "median (min–max)" with a formatter. */
export function mmm(s, f = ns) {
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** A ratio: 1.42×. */
export function times(x) {
  return `${x.toFixed(x < 10 ? 2 : 1)}×`;
}
