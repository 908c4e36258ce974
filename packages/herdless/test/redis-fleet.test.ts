/**
 * The live fleet check: real client processes, each with its own Redis connection, call one
 * loopback server during an outage through herdless's retrying fetch, sharing one gRFC A6 bucket
 * {10, 0.1} kept by a real redis-server. Fleet-wide, the retries the server receives stay within
 * what that one bucket admits; with a bucket per process they are 20 times as many.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from './support/redis-server.js';

const CLIENT = fileURLToPath(new URL('./support/fleet-client.mjs', import.meta.url));
const PROCESSES = 20;
const CALLS = 10;

let redis: RedisServer;
let server: http.Server;
let requests = 0;
/** Requests that came as retries (x-herdless-attempt ≥ 2). */
let retries = 0;

beforeAll(async () => {
  redis = await RedisServer.start();
  // The outage: every request gets a 503, which the retrying fetch retries (budget permitting).
  server = http.createServer((req, res) => {
    requests++;
    if (Number(req.headers['x-herdless-attempt'] ?? 1) >= 2) retries++;
    req.resume();
    res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

interface Report {
  statuses: Record<string, number>;
  admitted?: number;
  fallbacks: number;
  stats: { sharedDecisions: number; localDecisions: number } | null;
}

/** Starts the fleet, lets every process go at once, and collects the reports. */
async function runFleet(mode: 'shared' | 'local' | 'race' | 'stall', calls = CALLS, extra: string[] = []): Promise<Report[]> {
  const port = (server.address() as AddressInfo).port;
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, [CLIENT, String(redis.port), String(port), String(calls), mode, ...extra], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const exits = children.map((child) => once(child, 'exit') as Promise<[number | null]>);
  const lines = children.map((child) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
  for (const line of lines) expect((await line.next()).value).toBe('ready');
  for (const child of children) child.stdin!.end('go\n');
  const reports: Report[] = [];
  for (const [i, line] of lines.entries()) {
    const next = await line.next();
    reports.push(JSON.parse(String(next.value)) as Report);
    expect((await exits[i]!)[0]).toBe(0);
  }
  return reports;
}

describe('live: 20 processes share one budget through a real Redis during an outage', () => {
  it('20 processes × 500 failures racing on one bucket {10, 0.1} admit 4 retries in all, as one A6 bucket does', async () => {
    const reports = await runFleet('race', 500);
    // Each process's own bucket lets its first 4 failures ask Redis; all 500 failures reach Redis.
    for (const r of reports) expect([r.fallbacks, r.stats!.sharedDecisions]).toEqual([0, 4]);
    expect(reports.reduce((a, r) => a + r.admitted!, 0)).toBe(4);
  }, 600_000);

  it('fleet-wide retries stay within one A6 bucket {10, 0.1}: at most 4, where a bucket per process lets 60 through', async () => {
    requests = 0;
    const shared = await runFleet('shared');
    const sharedRetries = requests - PROCESSES * CALLS;
    for (const r of shared) {
      expect(r.statuses).toEqual({ 503: CALLS });
      expect(r.fallbacks).toBe(0);
    }
    expect(shared.reduce((a, r) => a + r.stats!.sharedDecisions, 0)).toBeGreaterThan(0);
    // One bucket fed only failures grants the decisions after failures 1–4 (tokens 9, 8, 7, 6 > 5).
    expect(sharedRetries).toBeGreaterThanOrEqual(1);
    expect(sharedRetries).toBeLessThanOrEqual(4);

    requests = 0;
    const local = await runFleet('local');
    for (const r of local) expect(r.statuses).toEqual({ 503: CALLS });
    // Each process's own bucket: 3 retries for its first call (the 4th attempt is the last), then none.
    expect(requests - PROCESSES * CALLS).toBe(PROCESSES * 3);
  }, 600_000); // 40 Node.js processes start on a machine that may be busy: counts, not speed

  it('loaded processes (a 20 ms synchronous stall every 100 ms each), a 2 s outage, the default timeoutMs: at most 8 retries in all', async () => {
    retries = 0;
    requests = 0;
    const reports = await runFleet('stall', 2000);
    for (const r of reports) expect(Object.keys(r.statuses)).toEqual(['503']);
    const fallbacks = reports.reduce((a, r) => a + r.fallbacks, 0);
    const decisions = reports.reduce((a, r) => a + r.stats!.sharedDecisions, 0);
    // One A6 bucket {10, 0.1} fed only failures admits 4; a decision that fell back lets its
    // process's own bucket admit one more. Figures for the notes: retries, fallbacks, decisions.
    console.info(`stall fleet: ${requests} requests, ${retries} retries, ${fallbacks} fallbacks, ${decisions} shared decisions`);
    expect(retries).toBeLessThanOrEqual(8);
    // A fresh bucket: the first failures to reach it are granted, so the test cannot pass by admitting nothing.
    expect(retries).toBeGreaterThanOrEqual(1);
    expect(decisions).toBeGreaterThan(0);
  }, 600_000);
});
