/**
 * The adaptive in-flight limit (Netflix concurrency-limits' gradient) against the best fixed limit
 * a sweep finds. The handler waits for one of 8 workers, each busy 100 ms per request (a pool, a
 * database with 8 connections): at most 80 answers a second, and every request beyond 8 at once
 * only queues. Offered 2× that (160 a second, open-loop).
 *
 * "Best" is Kleinrock's power, served per second ÷ mean served latency: it peaks where the server
 * is full but nothing queues — 8 here. The adaptive limit, started far above (24), must settle
 * within 20 % of it; by its rule it settles near workers × fastest / mean unqueued latency +
 * queueSize (9 on a steady server).
 *
 * The sweep runs twice: in virtual time (the real `LoadShedder` on a simulated clock, with and
 * without the disturbances of a busy machine; deterministic, so its figures are exact) and on
 * real sockets, where the figures vary with the machine and the bound has the 20 % as its margin.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { GradientLimit, loadShedder, type LoadShedderOptions, type LoadShedding } from 'herdless/server';
import { startLoopback, stopLoopback } from './support/loopback.js';
import { median, runPool, type PoolScenario } from './support/pool-sim.js';

const CLIENT = fileURLToPath(new URL('./support/open-loop-client.mjs', import.meta.url));
const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await stopLoopback(server);
});

/** A pool of `size` workers: `use()` resolves after waiting for a free worker and `ms` of its time. */
function pool(size: number, ms: number): () => Promise<void> {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) busy--;
    else next();
  };
  return () =>
    new Promise<void>((resolve) => {
      const work = (): void => {
        setTimeout(() => {
          release();
          resolve();
        }, ms);
      };
      if (busy < size) {
        busy++;
        work();
      } else waiting.push(work);
    });
}

function load(origin: string, rate: number, durationMs: number): Promise<{ status: number; ms: number }[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLIENT, origin, String(rate), String(durationMs)], { timeout: 120_000 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout) as { status: number; ms: number }[]);
    });
  });
}

/**
 * One run; latency is measured in the server, from admission to the answer, so that a client
 * process starved of CPU on a busy machine does not add its own delays to the figure.
 */
async function run(options: LoadShedderOptions, durationMs: number, readFromMs: number): Promise<{ power: number; shedding: LoadShedding; served: number; meanMs: number; limits: number[] }> {
  const use = pool(8, 100);
  const shedding = loadShedder(options);
  let served = 0;
  let totalMs = 0;
  const { server, origin } = await startLoopback((req, res) =>
    shedding.middleware(req, res, () => {
      const admittedAt = performance.now();
      void use().then(() => {
        served++;
        totalMs += performance.now() - admittedAt;
        res.end('done');
      });
    }),
  );
  servers.push(server);
  // The limit as it moves: read every 50 ms from `readFromMs`, once it has come down from its start
  // (about 2 s from 24). One reading is one window's verdict; the settled limit is where they centre.
  const limits: number[] = [];
  const startedAt = performance.now();
  const reader = setInterval(() => {
    if (performance.now() - startedAt >= readFromMs) limits.push(shedding.stats().limit);
  }, 50);
  try {
    await load(origin, 160, durationMs);
  } finally {
    clearInterval(reader);
  }
  const meanMs = totalMs / served;
  return { power: served / (durationMs / 1000) / meanMs, shedding, served, meanMs, limits };
}

const BUSY = { lateMs: 5, stallMs: 150, stallEveryMs: 1000 };
const HEAVY = { lateMs: 15, stallMs: 300, stallEveryMs: 700 };

/** The fixed limits 2–16 and the adaptive one (from 24) on one scenario. */
function sweep(scenario: PoolScenario): { best: number; settled: number; table: string } {
  const rows: string[] = [];
  let best = { limit: 0, power: -1 };
  for (let limit = 2; limit <= 16; limit++) {
    const r = runPool(scenario, { maxInFlight: limit });
    rows.push(`${limit}: ${r.power.toFixed(3)} (${r.meanMs.toFixed(1)} ms, ${r.served} served)`);
    if (r.power > best.power) best = { limit, power: r.power };
  }
  const adaptive = runPool(scenario, { maxInFlight: 64, adaptiveLimit: { initialLimit: 24, windowSize: 10 } });
  return { best: best.limit, settled: median(adaptive.limits), table: rows.join('; ') };
}

describe('adaptiveLimit in virtual time: 8 workers of 100 ms', () => {
  const base = { workers: 8, serviceMs: 100, durationMs: 60_000, readFromMs: 10_000 };
  // Power by fixed limit (quiet, 2×): 7 0.660, 8 0.754, 9 0.753, 10 0.674 — 9 serves no more than
  // 8 and waits 6 % longer; under the busy disturbances 8 leads 9 by 3 % (0.641 to 0.621, seed 0).
  it.each([
    ['quiet, 2× overload', 160, undefined, 8, 9],
    ['busy (timers 5 ms late, client stalls 150 ms/s), 2×', 160, BUSY, 8, 9],
    ['heavy (timers 15 ms late, client stalls 300 ms per 700 ms), 2×', 160, HEAVY, 8, 7],
    ['busy, 0.9× the capacity in bursts', 72, BUSY, 9, 9],
  ] as const)('%s: settles within a fifth of the best fixed limit', (_name, rate, busy, best, settled) => {
    for (const seed of [0, 1, 2]) {
      const r = sweep({ ...base, rate, busy, seed });
      const detail = JSON.stringify({ seed, ...r });
      expect(r.best, detail).toBe(best);
      expect(r.settled, detail).toBe(settled);
      expect(Math.abs(r.settled - r.best), detail).toBeLessThanOrEqual(0.2 * r.best);
    }
  });
});

describe('adaptiveLimit on real sockets: a pool of 8 workers of 100 ms, 2× overload', () => {
  it('settles within 20 % of the best fixed limit of a sweep', async () => {
    const table: { limit: number; power: number; served: number; meanMs: number }[] = [];
    for (const limit of [4, 6, 8, 10, 12, 16]) {
      const r = await run({ maxInFlight: limit }, 2000, 0);
      table.push({ limit, power: r.power, served: r.served, meanMs: r.meanMs });
    }
    const best = table.reduce((a, b) => (b.power > a.power ? b : a));
    // 6 s, read over the last 3: from 24 the limit is down by about 2 s.
    const adaptive = await run({ maxInFlight: 64, adaptiveLimit: { initialLimit: 24, windowSize: 10 } }, 6000, 3000);
    expect(adaptive.limits.length).toBeGreaterThan(0);
    // The median of the readings: one late timer is one slow sample, and one reading follows it.
    const settled = median(adaptive.limits);
    const detail = JSON.stringify({ table, settled, readings: adaptive.limits });
    // Margin: 20 % of 8 is 1.6, so 7–9 pass; the rule's steady value is 9 (8 + queueSize), and the
    // disturbances of a busy machine lower it (7 under the heaviest ones simulated above).
    expect(Math.abs(settled - best.limit), detail).toBeLessThanOrEqual(0.2 * best.limit);
  }, 180_000);
});

describe('GradientLimit (pure)', () => {
  it('grows by queueSize while latency stays at its lowest, and falls as latency rises', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1 }, 100);
    limit.onSample(50, 10);
    limit.onSample(50, 10);
    expect(limit.estimate).toBe(11); // gradient 1: + queueSize
    limit.onSample(100, 11);
    limit.onSample(100, 11);
    expect(limit.estimate).toBeCloseTo(11 * 0.5 + 1, 12); // latency doubled: gradient 0.5
    limit.onSample(60, 2);
    limit.onSample(40, 2);
    expect(limit.minLatencyMs).toBe(40);
    expect(limit.estimate).toBeCloseTo(6.5 * 0.8, 12); // mean 50 vs 40; app-limited (2 in use of 6.5): no growth
  });

  it('grows only in a window whose requests reached the limit (RFC 7661)', () => {
    const limit = new GradientLimit({ initialLimit: 8, windowSize: 2, smoothing: 1 }, 100);
    limit.onSample(100, 7);
    limit.onSample(100, 6);
    expect(limit.estimate).toBe(8); // 7 of 8 at most: latency at its lowest says nothing about 9
    limit.onSample(100, 8);
    limit.onSample(100, 3);
    expect(limit.estimate).toBe(9); // the limit was full once, and nothing queued: + queueSize
    limit.onSample(150, 9);
    limit.onSample(150, 2);
    expect(limit.estimate).toBeCloseTo(9 * (100 / 150) + 1, 12); // shrinking needs no full window
  });

  it('stays within [minLimit, maxInFlight] and refuses bad options, naming them', () => {
    const limit = new GradientLimit({ initialLimit: 3, minLimit: 2, windowSize: 1, smoothing: 1, queueSize: 0 }, 4);
    for (let i = 0; i < 10; i++) limit.onSample(1000 * (i + 1), 3);
    expect(limit.limit).toBe(2);
    expect(() => loadShedder({ maxInFlight: 4, adaptiveLimit: { tolerance: 0.5 } })).toThrow(/adaptiveLimit\.tolerance/);
    expect(() => loadShedder({ maxInFlight: 4, adaptiveLimit: 'yes' as never })).toThrow(/adaptiveLimit/);
  });
});
