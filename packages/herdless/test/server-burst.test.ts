/**
 * The load shedder under a bounded burst on loopback: 10 000 calls from herdless clients, 64 at a
 * time against a limit of 32 in flight (plus a queue of 8). Asserts counts, never speed.
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullJitterBackoff } from 'herdless';
import { ATTEMPT_HEADER, DO_NOT_RETRY_HEADER, retryInfo, withRetry } from 'herdless/http';
import { loadShedder } from 'herdless/server';
import { startLoopback, stopLoopback } from './support/loopback.js';

const CALLS = 10_000;
const CLIENTS = 64;
const LIMIT = 32;

let server: http.Server;
let origin: string;
const shedding = loadShedder({ maxInFlight: LIMIT, maxQueue: 8, maxQueueWaitMs: 2, retryAfterMs: 2 });
/** What the server saw: requests arrived, responses finished, and the most handlers running at once. */
const seen = { arrived: 0, finished: 0, running: 0, maxRunning: 0 };

beforeAll(async () => {
  const handler = shedding.node(async (_req, res) => {
    seen.running++;
    seen.maxRunning = Math.max(seen.maxRunning, seen.running);
    // Long enough for 64 clients to outrun 32 slots.
    await new Promise((resolve) => setTimeout(resolve, 30));
    seen.running--;
    res.end('ok');
  });
  ({ server, origin } = await startLoopback((req, res) => {
    seen.arrived++;
    res.once('finish', () => seen.finished++);
    handler(req, res);
  }));
});

afterAll(() => stopLoopback(server));

interface Exchange {
  attempt: number;
  status: number;
  retryAfter: string | null;
  retryAfterMs: string | null;
  marked: boolean;
}

describe('a burst at twice the limit', () => {
  it('never exceeds the limit, answers every request once, sheds with 503 + Retry-After, marks shed retries', async () => {
    const exchanges: Exchange[] = [];
    let failures = 0;
    const counting = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const attempt = Number(new Headers(init?.headers).get(ATTEMPT_HEADER) ?? 1);
      try {
        const res = await fetch(input, init);
        const h = res.headers;
        exchanges.push({ attempt, status: res.status, retryAfter: h.get('retry-after'), retryAfterMs: h.get('retry-after-ms'), marked: h.get(DO_NOT_RETRY_HEADER) === 'no' });
        return res;
      } catch (error) {
        failures++;
        throw error;
      }
    };
    const api = withRetry(counting, { maxAttempts: 3, backoff: fullJitterBackoff({ initialBackoffMs: 2, maxBackoffMs: 10 }) });
    const outcomes = { ok: 0, shed: 0, doNotRetry: 0, exhausted: 0 };
    let next = 0;
    const client = async (): Promise<void> => {
      while (next < CALLS) {
        next++;
        const res = await api(`${origin}/work`);
        await res.text();
        if (res.ok) outcomes.ok++;
        else {
          outcomes.shed++;
          const reason = retryInfo(res)?.reason;
          if (reason === 'do-not-retry') outcomes.doNotRetry++;
          if (reason === 'exhausted') outcomes.exhausted++;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));

    const stats = shedding.stats();
    const shed = exchanges.filter((e) => e.status !== 200);
    const shedRetries = shed.filter((e) => e.attempt >= 2);
    const figures = {
      calls: CALLS,
      requests: exchanges.length,
      served: exchanges.length - shed.length,
      shed: shed.length,
      shedMarked: shed.filter((e) => e.marked).length,
      retriesSent: exchanges.filter((e) => e.attempt >= 2).length,
      peakInFlight: stats.peakInFlight,
      callOutcomes: outcomes,
      server: { arrived: seen.arrived, finished: seen.finished, maxRunning: seen.maxRunning, stats },
    };
    if (process.env.HERDLESS_FIGURES) console.info(JSON.stringify(figures));

    // Every call ended, and every request sent got exactly one answer: none dropped, none failed.
    expect(outcomes.ok + outcomes.shed).toBe(CALLS);
    expect(failures).toBe(0);
    expect([seen.arrived, seen.finished, stats.requests]).toEqual([exchanges.length, exchanges.length, exchanges.length]);
    expect(stats.admitted + stats.shed).toBe(exchanges.length);
    expect([stats.inFlight, stats.queued, stats.abandoned]).toEqual([0, 0, 0]);
    // The limit held, and the burst really hit it.
    expect(stats.peakInFlight).toBe(LIMIT);
    expect(seen.maxRunning).toBeLessThanOrEqual(LIMIT);
    expect(shed.length).toBe(stats.shed);
    expect(shed.length).toBeGreaterThan(0);
    // Every shed answer is a 503 with Retry-After (whole seconds) and retry-after-ms.
    // The wait is spread over [2, 4) ms (retryAfterMs 2, jittered), rounded up.
    expect(shed.every((e) => e.status === 503 && e.retryAfter === '1' && ['2', '3', '4'].includes(e.retryAfterMs!))).toBe(true);
    // Every shed retry says "don't retry"; first attempts only while retries are more than 10 % of recent requests.
    expect(shedRetries.every((e) => e.marked)).toBe(true);
    expect(shed.filter((e) => e.marked).length).toBe(stats.shedDoNotRetry);
    expect(stats.retriesSeen).toBe(figures.retriesSent);
    // A marked answer ends its call: no call went on after one, so no attempt 3 follows a marked attempt 2.
    expect(outcomes.doNotRetry).toBe(figures.shedMarked);
    expect(outcomes.exhausted + outcomes.doNotRetry).toBe(outcomes.shed);
  });
});
