/**
 * Adaptive throttling on real sockets: the retrying fetch against a node:http server that answers
 * 503 to everything for 10 s, then 200. Time is virtual — a ManualClock moves 50 ms per request
 * and the server reads the same clock to know whether it is "down" — so the run's timing does not
 * depend on the machine's speed; the requests, the answers and what the server counts are real.
 * 20 requests per virtual second for 60 s: 1200 requests on one keep-alive connection.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, adaptiveThrottling, isRetryError } from 'herdless';
import { withRetry } from 'herdless/http';
import { PyRandom } from 'herdless/sim';
import { startLoopback, stopLoopback } from './support/loopback.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await stopLoopback(server);
});

describe('adaptive throttling over node:http (K = 2, 10 s window, virtual time)', () => {
  it('during a 10 s outage what reaches the server falls well under the offered load, and all of it returns after recovery', async () => {
    const clock = new ManualClock();
    const down = (t: number) => t >= 20_000 && t < 30_000;
    /** Requests the server received, per virtual second. */
    const received = new Array<number>(60).fill(0);
    const { server, origin } = await startLoopback((request, response) => {
      const now = clock.now();
      received[Math.floor(now / 1000)]!++;
      request.resume();
      response.writeHead(down(now) ? 503 : 200, { 'content-type': 'text/plain' }).end('.');
    });
    servers.push(server);
    const throttle = adaptiveThrottling({ windowMs: 10_000, buckets: 10, firstTryFloor: 0.1 });
    const fetch2 = withRetry(fetch, { throttle, clock, random: new PyRandom(0), maxAttempts: 1 });
    const url = `${origin}/item`;
    let throttled = 0;
    for (let i = 0; i < 1200; i++) {
      try {
        const response = await fetch2(url);
        await response.arrayBuffer();
      } catch (error) {
        if (!isRetryError(error, 'throttled')) throw error;
        throttled++;
      }
      await clock.advance(50);
    }
    const sum = (from: number, to: number) => received.slice(from, to).reduce((a, b) => a + b, 0);
    // Healthy: every request reaches the server.
    expect(sum(0, 20)).toBe(400);
    // The outage's first half: accepts from before it still cover requests / K.
    expect(sum(20, 25)).toBe(100);
    // Its last second: at most a few requests beyond the floor's 10% (2 of 20) reach the server
    // (the formula gives about 2 × accepts-in-window / requests ≈ 0 by then).
    expect(received[29]).toBeLessThanOrEqual(6);
    // Over the outage: 137 of the offered 200 on this seed (20 a second until 26 s, then 16, 6, 5,
    // 4); the refused ones were not sent. After it: 1–4 a second, back to 20 by 49 s.
    expect(sum(20, 30)).toBeLessThan(160);
    expect(throttled).toBe(1200 - sum(0, 60));
    // Recovered: full traffic (20 a second) within 2 windows of the end of the outage.
    for (let s = 50; s < 60; s++) expect(received[s]).toBe(20);
    expect(throttle.rejectionProbability(clock.now())).toBe(0);
  }, 60_000);
});
