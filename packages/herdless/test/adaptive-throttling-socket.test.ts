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
  it('during a 10 s outage what reaches the server falls to the cap, and full traffic returns within the window after recovery', async () => {
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
    // The default cap on a first try's rejection (maxRejectionProbability 0.5).
    const throttle = adaptiveThrottling({ windowMs: 10_000, buckets: 10 });
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
    // Its second half: the rule refuses more and more, down to the cap — half of the first tries
    // (10 a second) still reach the dead server, so that the client sees the recovery at once.
    // On this seed 16, 10, 13, 15 from 26 s to 29 s (the cap's expectation: 10 a second).
    expect(received.slice(26, 30)).toEqual([16, 10, 13, 15]);
    // After it: 12, 6, 10, 7, 9, 12, 11, 16, 19 a second — accepts regrow from the cap's trickle,
    // e-fold every windowMs / K — and full traffic (20 a second) from 39 s: within the window
    // (10 s) after the recovery, as windowMs / K × (1 + ln 2) = 8.5 s predicts.
    expect(received.slice(30, 39)).toEqual([12, 6, 10, 7, 9, 12, 11, 16, 19]);
    expect(throttled).toBe(1200 - sum(0, 60));
    for (let s = 39; s < 60; s++) expect(received[s]).toBe(20);
  }, 60_000);
});
