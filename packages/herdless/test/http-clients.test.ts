/**
 * The HTTP behaviour table, one suite for the three clients (fetch, undici, axios), against a real
 * loopback server: statuses, Retry-After in every form, POST safety, body replay, abort, the
 * "don't retry" mark, network failures, telemetry. Waits run on a ManualClock that the test drives.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, isRetryError, type TelemetryEvent } from 'herdless';
import { type HttpRetryEvent, type HttpRetryOptions } from 'herdless/http';
import { httpClients, type ClientOutcome, type ClientRequest, type HttpClientDriver } from './support/http-clients.js';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

/** The wall clock of RFC 9110's example: 21 Oct 2015 07:28:00 GMT, moving with the virtual clock. */
const WALL = Date.UTC(2015, 9, 21, 7, 28, 0);

let server: ScriptedServer;
let clock: ManualClock;
let closers: Array<() => Promise<void>> = [];
beforeEach(async () => {
  server = await startScriptedServer();
  clock = new ManualClock();
  closers = [];
});
afterEach(async () => {
  for (const close of closers) await close();
  await server.close();
  expect(clock.pending).toBe(0);
});

const origin = (): string => server.origin;

/**
 * Sends `req` and drives the virtual clock until it settles: whenever a wait is pending it is run
 * at once (virtual time), else real I/O is given a moment. Bounded: 2 000 turns.
 */
async function drive(send: Promise<ClientOutcome>): Promise<ClientOutcome> {
  let done = false;
  void send.finally(() => (done = true));
  for (let turn = 0; turn < 2000 && !done; turn++) {
    if (clock.pending > 0) await clock.runAll();
    else await new Promise((r) => setTimeout(r, 1));
  }
  return send;
}

for (const client of httpClients(origin)) {
  describe(`${client.name}: the shared HTTP behaviour`, () => {
    let delays: Array<[number, HttpRetryEvent['delaySource']]>;
    const make = (options: HttpRetryOptions<never> = {}): ((req: ClientRequest) => Promise<ClientOutcome>) => {
      delays = [];
      const c = client.make({
        maxAttempts: 3,
        backoff: constantBackoff({ delayMs: 7 }),
        clock,
        now: () => WALL + clock.now(),
        onRetry: (e) => void delays.push([e.delayMs, e.delaySource]),
        ...options,
      });
      closers.push(() => c.close());
      return (req) => drive(c.send(req));
    };

    it('503, 503, 200 → the 200, after 3 requests; a 404 is the result at once', async () => {
      const send = make();
      server.script([{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
      expect(await send({ path: '/a' })).toEqual({ status: 200, body: 'ok', reason: undefined });
      expect(server.requests).toHaveLength(3);
      expect(delays).toEqual([
        [7, 'backoff'],
        [7, 'backoff'],
      ]);
      // Each retry carries its number; the first attempt carries none.
      expect(server.requests.map((r) => r.headers['x-herdless-attempt'])).toEqual([undefined, '2', '3']);
      server.script([{ status: 404, body: 'no' }]);
      expect(await send({ path: '/b' })).toEqual({ status: 404, body: 'no', reason: undefined });
      expect(server.requests).toHaveLength(4);
    });

    it('always 503 → the last 503 is the result, reason exhausted, maxAttempts requests', async () => {
      const send = make();
      server.script([], { status: 503, body: 'busy' });
      expect(await send({ path: '/' })).toEqual({ status: 503, body: 'busy', reason: 'exhausted' });
      expect(server.requests).toHaveLength(3);
    });

    it('Retry-After in every form: seconds, HTTP-date, retry-after-ms; an invalid one leaves the backoff', async () => {
      const send = make({ maxAttempts: 5 });
      server.script([
        { status: 503, headers: { 'retry-after': '2' } },
        // The response's own Date is the virtual now (WALL + 2 s): node:http would otherwise send the real date.
        { status: 429, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT', date: 'Wed, 21 Oct 2015 07:28:02 GMT' } },
        { status: 503, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } },
        { status: 503, headers: { 'retry-after': 'soon' } },
        { status: 200, body: 'ok' },
      ]);
      expect(await send({ path: '/' })).toEqual({ status: 200, body: 'ok', reason: undefined });
      // The date is 30 s after WALL; the clock (and the response's Date) had moved 2 s by then.
      expect(delays).toEqual([
        [2000, 'server-hint'],
        [28_000, 'server-hint'],
        [1500, 'server-hint'],
        [7, 'backoff'],
      ]);
      expect(server.requests).toHaveLength(5);
    });

    it('a Retry-After above maxRetryAfterMs ends the call with that response (reason hint-too-long)', async () => {
      const send = make({ maxRetryAfterMs: 60_000 });
      server.script([{ status: 429, headers: { 'retry-after': '120' }, body: 'later' }]);
      expect(await send({ path: '/' })).toEqual({ status: 429, body: 'later', reason: 'hint-too-long' });
      expect(server.requests).toHaveLength(1);
    });

    it('X-Herdless-Retry: no → the response at once, even with Retry-After (reason do-not-retry)', async () => {
      const send = make();
      server.script([{ status: 503, headers: { 'x-herdless-retry': 'no', 'retry-after': '0' }, body: 'shed' }]);
      expect(await send({ path: '/' })).toEqual({ status: 503, body: 'shed', reason: 'do-not-retry' });
      expect(server.requests).toHaveLength(1);
    });

    it('POST without a key is not retried; with idempotencyKey: true, every attempt carries the same key; its own key makes it retryable', async () => {
      const plain = make();
      server.script([{ status: 503, body: 'busy' }]);
      expect(await plain({ method: 'POST', path: '/orders', body: 'o1' })).toEqual({ status: 503, body: 'busy', reason: 'fatal' });
      expect(server.requests).toHaveLength(1);

      const keyed = make({ idempotencyKey: true });
      server.script([{ status: 503 }, { status: 503 }, { status: 201, body: 'made' }]);
      expect(await keyed({ method: 'POST', path: '/orders', body: 'o2' })).toEqual({ status: 201, body: 'made', reason: undefined });
      const keys = server.requests.slice(1).map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(typeof keys[0]).toBe('string');
      expect(new Set(keys).size).toBe(1);
      expect(server.requests.slice(1).map((r) => r.body.toString())).toEqual(['o2', 'o2', 'o2']);

      server.script([{ status: 503 }, { status: 200, body: 'ok' }]);
      expect(await plain({ method: 'PATCH', path: '/orders/1', body: 'p', headers: { 'Idempotency-Key': 'k-1' } })).toEqual({ status: 200, body: 'ok', reason: undefined });
      expect(server.requests.slice(4).map((r) => r.headers['idempotency-key'])).toEqual(['k-1', 'k-1']);
    });

    it('a PUT body is sent whole on every attempt; a stream body is sent once and not retried', async () => {
      const send = make();
      server.script([{ status: 503 }, { status: 502 }, { status: 200, body: 'ok' }]);
      expect(await send({ method: 'PUT', path: '/doc', body: '{"n":1}' })).toEqual({ status: 200, body: 'ok', reason: undefined });
      expect(server.requests.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":1}', '{"n":1}']);

      server.script([{ status: 503, body: 'busy' }]);
      expect(await send({ method: 'PUT', path: '/doc', body: { stream: ['ab', 'cd'] } })).toEqual({ status: 503, body: 'busy', reason: 'fatal' });
      expect(server.requests).toHaveLength(4);
      expect(server.requests[3]!.body.toString()).toBe('abcd');
    });

    it('network failures are retried; when they last, the call rejects with a RetryError whose cause is the last one', async () => {
      const send = make();
      server.script([{ reset: 'on-arrival' }, { reset: 'on-arrival' }, { status: 200, body: 'ok' }]);
      expect(await send({ path: '/' })).toEqual({ status: 200, body: 'ok', reason: undefined });
      server.script([], { reset: 'on-arrival' });
      const out = await send({ path: '/' });
      expect(isRetryError(out.error)).toBe(true);
      expect(out.reason).toBe('exhausted');
      expect((out.error as { cause?: unknown }).cause).toBeDefined();
      expect(server.requests).toHaveLength(6);
    });

    it('the caller’s abort during a Retry-After wait ends the call at once: one request, no timer left', async () => {
      const send = make();
      server.script([{ status: 503, headers: { 'retry-after': '30' } }]);
      const controller = new AbortController();
      const reason = new Error('user cancelled');
      const pending = client.make({ maxAttempts: 3, clock, now: () => WALL });
      closers.push(() => pending.close());
      const outcome = pending.send({ path: '/', signal: controller.signal });
      for (let turn = 0; turn < 2000 && clock.pending === 0; turn++) await new Promise((r) => setTimeout(r, 1));
      expect(clock.pending).toBe(1);
      controller.abort(reason);
      const out = await outcome;
      expect(client.isAbort(out.error, reason)).toBe(true);
      expect(out.reason).toBe('aborted');
      expect(clock.pending).toBe(0);
      expect(server.requests).toHaveLength(1);
      void send;
    });

    it('the caller’s abort of the attempt in flight: the server sees the request go away; no retry', async () => {
      const send = make();
      server.script([{ hang: true }]);
      const controller = new AbortController();
      const reason = new Error('stop');
      const outcome = send({ path: '/', signal: controller.signal });
      await server.waitForRequests(1);
      controller.abort(reason);
      const out = await outcome;
      expect(client.isAbort(out.error, reason)).toBe(true);
      await server.requests[0]!.closed;
      expect(server.requests[0]!.aborted).toBe(true);
      expect(server.requests).toHaveLength(1);
    });

    it('attemptTimeoutMs aborts only the slow attempt (the server sees it go away), which is retried', async () => {
      const c = client.make({ maxAttempts: 3, clock, attemptTimeoutMs: 1000, backoff: constantBackoff() });
      closers.push(() => c.close());
      server.script([{ hang: true }, { status: 200, body: 'ok' }]);
      const outcome = c.send({ path: '/' });
      await server.waitForRequests(1);
      await clock.advance(1000);
      expect(await outcome).toEqual({ status: 200, body: 'ok', reason: undefined });
      await server.requests[0]!.closed;
      expect(server.requests[0]!.aborted).toBe(true);
      expect(server.requests).toHaveLength(2);
    });

    it('50 retries of a 503 with a 64 KiB body on keep-alive: discarded bodies are let go, open sockets stay bounded', async () => {
      const send = make({ maxAttempts: 51, backoff: constantBackoff() });
      const big = 'x'.repeat(64 * 1024);
      server.script(Array.from({ length: 50 }, () => ({ status: 503, body: big })));
      expect(await send({ path: '/' })).toEqual({ status: 200, body: 'ok', reason: undefined });
      expect(server.requests).toHaveLength(51);
      expect(server.connections.peak).toBeLessThanOrEqual(4);
    });

    it('telemetry: one attempt-start and attempt-end per request the server saw, the retries and the give-up', async () => {
      const events: TelemetryEvent[] = [];
      const send = make({ telemetry: { onEvent: (e) => void events.push(e) } });
      server.script([{ status: 503 }, { status: 200, body: 'ok' }, { status: 503 }, { status: 503 }, { status: 503 }]);
      await send({ path: '/one' });
      await send({ path: '/two' });
      expect(server.requests).toHaveLength(5);
      const ends = events.filter((e) => e.type === 'attempt-end');
      expect(ends.map((e) => [e.attempt, e.status, e.outcome])).toEqual([
        [1, 503, 'failure'],
        [2, 200, 'success'],
        [1, 503, 'failure'],
        [2, 503, 'failure'],
        [3, 503, 'failure'],
      ]);
      expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(5);
      expect(events.filter((e) => e.type === 'retry')).toHaveLength(3);
      const giveUps = events.filter((e) => e.type === 'give-up');
      expect(giveUps.map((e) => [e.reason, e.attempts, e.status])).toEqual([['exhausted', 3, 503]]);
      expect(ends.every((e) => e.call.layer === 'http' && e.call.client === client.name && e.call.method === 'GET')).toBe(true);
    });
  });
}

describe('the drivers themselves', () => {
  it('cover the three clients', () => {
    expect(httpClients(origin).map((c: HttpClientDriver) => c.name)).toEqual(['fetch', 'undici', 'axios']);
  });
});
