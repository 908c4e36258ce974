import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, isAttemptTimeoutError, isRetryError, retryThrottlingBudget, type RetryError } from 'herdless';
import { fetchWithRetry, retryInfo, withRetry, type HttpGiveUpEvent, type HttpRetryEvent } from 'herdless/http';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

/** A ManualClock that records the delay of every timer and lets a test await the next one. */
class TimerClock extends ManualClock {
  delays: number[] = [];
  #wake: (() => void) | undefined;
  override setTimeout(callback: () => void, delayMs: number): number {
    this.delays.push(delayMs);
    const id = super.setTimeout(callback, delayMs);
    this.#wake?.();
    return id;
  }
  /** Resolves once a timer is pending (it waits for real I/O to lead to one); a 5 s real-time guard. */
  timerScheduled(): Promise<void> {
    if (this.pending > 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('no timer was scheduled within 5 s')), 5000);
      this.#wake = () => {
        clearTimeout(guard);
        this.#wake = undefined;
        resolve();
      };
    });
  }
}

/** The wall clock of MDN's Retry-After example: 21 Oct 2015 07:28:00 GMT, moving with the virtual clock. */
const WALL = Date.UTC(2015, 9, 21, 7, 28, 0);
const noWait = constantBackoff();

let server: ScriptedServer;
let clock: TimerClock;
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeEach(async () => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
  clock = new TimerClock();
  server = await startScriptedServer(clock);
});
afterEach(async () => {
  await server.close();
  await new Promise((r) => setImmediate(r));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** Settles `promise` into a box, so a test can check whether it has settled yet. */
function track<T>(promise: Promise<T>) {
  const box: { done: boolean; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => Object.assign(box, { done: true, value }),
    (error: unknown) => Object.assign(box, { done: true, error }),
  );
  return box;
}

const ok = async (res: Response, status = 200): Promise<string> => {
  expect(res.status).toBe(status);
  return res.text();
};

describe('Retry-After (virtual time for waits, an injected wall clock for dates)', () => {
  it('a now() that reads NaN fails the call naming now(), without a retry', async () => {
    server.script([{ status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }, body: 'busy' }]);
    const api = withRetry(fetch, { clock, now: () => Number.NaN });
    const error = await api(`${server.origin}/a`).catch((e: unknown) => e);
    expect(isRetryError(error)).toBe(true);
    expect((error as Error & { reason: string }).reason).toBe('fatal');
    expect(String((error as Error).cause)).toBe('InvalidOptionError: withRetry: now() must return a finite number of ms since the epoch, as Date.now() does, got NaN');
    expect(server.requests).toHaveLength(1);
  });
  it('503 with Retry-After: Wed, 21 Oct 2015 07:28:10 GMT at 07:28:00 (no Date header) → the second request goes out after exactly 10 000 ms', async () => {
    server.script([{ status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }, body: 'busy', sendDate: false }]);
    const events: HttpRetryEvent[] = [];
    const api = withRetry(fetch, { clock, now: () => WALL + clock.now(), onRetry: (e) => void events.push(e) });
    const promise = api(`${server.origin}/a`);
    const call = track(promise);
    await clock.timerScheduled();
    expect(clock.delays).toEqual([10_000]);
    await clock.advance(9_999);
    expect(server.requests).toHaveLength(1);
    expect(clock.pending).toBe(1);
    expect(call.done).toBe(false);
    await clock.advance(1);
    const res = await promise;
    expect(await ok(res)).toBe('ok');
    expect(server.requests.map((r) => r.at)).toEqual([0, 10_000]);
    expect(events).toEqual([
      {
        method: 'GET',
        url: `${server.origin}/a`,
        attempt: 1,
        status: 503,
        error: expect.objectContaining({ name: 'HttpStatusError', status: 503, retryAfterMs: 10_000 }),
        delayMs: 10_000,
        delaySource: 'server-hint',
      },
    ]);
    expect(retryInfo(res)).toEqual({ attempts: 2, reason: undefined, error: undefined });
  });

  it.each([
    ['RFC 850', 'Wednesday, 21-Oct-15 07:28:10 GMT'],
    ['asctime', 'Wed Oct 21 07:28:10 2015'],
  ])('the obsolete %s form waits 10 000 ms too, measured from the response\'s Date (the client clock 10 s fast)', async (_form, value) => {
    server.script([{ status: 429, headers: { 'retry-after': value, date: 'Wed, 21 Oct 2015 07:28:00 GMT' } }]);
    const promise = withRetry(fetch, { clock, now: () => WALL + 10_000 + clock.now() })(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(10_000);
    expect(await ok(await promise)).toBe('ok');
    expect(clock.delays).toEqual([10_000]);
    expect(server.requests.map((r) => r.at)).toEqual([0, 10_000]);
  });

  it('Retry-After: 0 → the second request at once (no timer), then the 200 is returned', async () => {
    server.script([{ status: 503, headers: { 'retry-after': '0' } }]);
    const events: HttpRetryEvent[] = [];
    const res = await withRetry(fetch, { clock, onRetry: (e) => void events.push(e) })(`${server.origin}/`);
    expect(await ok(res)).toBe('ok');
    expect(clock.delays).toEqual([]);
    expect(server.requests.map((r) => r.at)).toEqual([0, 0]);
    expect(events.map((e) => [e.delayMs, e.delaySource])).toEqual([[0, 'server-hint']]);
  });

  it('client clock 10 s fast, Date: T, Retry-After: T + 5 s → the second request after 5 000 ms, not at once', async () => {
    server.script([{ status: 503, headers: { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' } }]);
    const promise = withRetry(fetch, { clock, now: () => WALL + 10_000 + clock.now() })(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(5000);
    expect(await ok(await promise)).toBe('ok');
    expect(clock.delays).toEqual([5000]);
    expect(server.requests.map((r) => r.at)).toEqual([0, 5000]);
  });

  it.each([
    ['before the response\'s Date', { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:00:00 GMT' }, true],
    ['equal to the response\'s Date', { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, true],
    ['in the past by the local clock (no Date header)', { 'retry-after': 'Wed, 21 Oct 2015 07:00:00 GMT' }, false],
  ] as [string, Record<string, string>, boolean][])('an HTTP-date %s is no hint: the backoff applies, with its jitter (not an immediate retry)', async (_name, headers, sendDate) => {
    server.script([{ status: 503, headers, sendDate }]);
    const promise = withRetry(fetch, { clock, now: () => WALL, random: { random: () => 0.5 } })(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(50);
    expect((await promise).status).toBe(200);
    // The default backoff: full jitter, 100 ms × 0.5 for the first retry.
    expect(clock.delays).toEqual([50]);
  });

  it('retry-after-ms wins over Retry-After', async () => {
    server.script([{ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '30' } }]);
    const promise = withRetry(fetch, { clock })(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(1500);
    expect((await promise).status).toBe(200);
    expect(clock.delays).toEqual([1500]);
  });

  it.each([429, 503])('%i with Retry-After: 120 and maxRetryAfterMs 10 000 → no retry; that response is returned with reason hint-too-long', async (status) => {
    server.script([{ status, headers: { 'retry-after': '120' }, body: 'come back later' }]);
    const giveUps: HttpGiveUpEvent[] = [];
    const api = withRetry(fetch, { clock, maxRetryAfterMs: 10_000, onGiveUp: (e) => void giveUps.push(e) });
    const res = await api(`${server.origin}/`);
    expect(await ok(res, status)).toBe('come back later'); // the body is the caller's
    expect(server.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
    const info = retryInfo(res)!;
    expect(info.attempts).toBe(1);
    expect(info.reason).toBe('hint-too-long');
    expect(isRetryError(info.error, 'hint-too-long')).toBe(true);
    expect(info.error!.message).toContain('the server asked to wait 120000 ms, more than maxRetryAfterMs (10000 ms)');
    expect(info.error!.cause).toMatchObject({ status, retryAfterMs: 120_000 });
    expect(giveUps).toEqual([
      { method: 'GET', url: `${server.origin}/`, reason: 'hint-too-long', attempts: 1, status, response: res, error: info.error },
    ]);
  });

  it('Retry-After: 9999999999 → a wait of 9 999 999 999 s: too long, the 503 is returned (no crash, no date)', async () => {
    server.script([{ status: 503, headers: { 'retry-after': '9999999999' } }]);
    const res = await withRetry(fetch, { clock })(`${server.origin}/`);
    expect(res.status).toBe(503);
    expect(retryInfo(res)?.reason).toBe('hint-too-long');
    expect(retryInfo(res)?.error?.message).toContain('9999999999000 ms');
    expect(server.requests).toHaveLength(1);
  });

  it.each(['-1', '1.5', '+3', 'soon', '', '120 seconds', '2015-10-21T07:28:10Z'])(
    'Retry-After: %j is ignored: the backoff (250 ms) applies and the retry succeeds',
    async (value) => {
      server.script([{ status: 503, headers: { 'retry-after': value } }]);
      const events: HttpRetryEvent[] = [];
      const promise = withRetry(fetch, { clock, backoff: constantBackoff({ delayMs: 250 }), onRetry: (e) => void events.push(e) })(`${server.origin}/`);
      await clock.timerScheduled();
      await clock.advance(250);
      expect((await promise).status).toBe(200);
      expect(clock.delays).toEqual([250]);
      expect(events.map((e) => [e.delayMs, e.delaySource])).toEqual([[250, 'backoff']]);
      expect((events[0]!.error as { retryAfterMs?: number }).retryAfterMs).toBeUndefined();
    },
  );

  it.each([
    [500, undefined],
    [408, undefined],
    [425, [425]],
    [413, [413]],
  ] as [number, number[] | undefined][])('Retry-After: 2 on a retried %i is honoured: 2 000 ms, not the 50 ms backoff', async (status, retryStatuses) => {
    server.script([{ status, headers: { 'retry-after': '2' } }]);
    const events: HttpRetryEvent[] = [];
    const promise = withRetry(fetch, { clock, retryStatuses, backoff: constantBackoff({ delayMs: 50 }), onRetry: (e) => void events.push(e) })(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(2000);
    expect((await promise).status).toBe(200);
    expect(clock.delays).toEqual([2000]);
    expect(events.map((e) => [e.status, e.delayMs, e.delaySource])).toEqual([[status, 2000, 'server-hint']]);
  });

  it('ignoreHints: an absurd Retry-After is ignored and the backoff applies (no hint-too-long give-up)', async () => {
    server.script([{ status: 503, headers: { 'retry-after': '86400' } }, { status: 429, headers: { 'retry-after-ms': '999999999' } }]);
    const events: HttpRetryEvent[] = [];
    const api = withRetry(fetch, { clock, ignoreHints: true, backoff: constantBackoff({ delayMs: 50 }), throttlingBackoff: constantBackoff({ delayMs: 70 }), onRetry: (e) => void events.push(e) });
    const promise = api(`${server.origin}/`);
    await clock.timerScheduled();
    await clock.advance(50);
    await clock.timerScheduled();
    await clock.advance(70);
    expect((await promise).status).toBe(200);
    expect(clock.delays).toEqual([50, 70]);
    expect(events.map((e) => [e.status, e.delayMs, e.delaySource])).toEqual([
      [503, 50, 'backoff'],
      [429, 70, 'backoff'],
    ]);
  });

  it('a server that always answers 429 without a hint: 8 retries, draws of 0.05, wait from the 500 ms throttling base', async () => {
    server.script([], { status: 429 });
    const api = withRetry(fetch, { clock, maxAttempts: 9, random: { random: () => 0.05 } });
    const promise = api(`${server.origin}/`);
    for (let i = 0; i < 8; i++) {
      await clock.timerScheduled();
      await clock.advance(clock.delays[i]!);
    }
    const res = await promise;
    expect(res.status).toBe(429);
    expect(retryInfo(res)?.reason).toBe('exhausted');
    // 0.05 × (500, 1000, 2000, 4000, 8000, 10 000, 10 000, 10 000): 2 275 ms in all, where the
    // 100 ms base of other failures gives 1 135 ms.
    expect(clock.delays.map((d) => Math.round(d * 1000) / 1000)).toEqual([25, 50, 100, 200, 400, 500, 500, 500]);
    expect(clock.delays.reduce((a, b) => a + b, 0)).toBeCloseTo(2275, 9);
  });

  it('the caller’s abort during a Retry-After wait rejects with its reason at once and leaves no timer', async () => {
    server.script([{ status: 503, headers: { 'retry-after': '10' } }]);
    const controller = new AbortController();
    const giveUps: HttpGiveUpEvent[] = [];
    const promise = withRetry(fetch, { clock, onGiveUp: (e) => void giveUps.push(e) })(`${server.origin}/`, { signal: controller.signal });
    await clock.timerScheduled();
    controller.abort();
    await expect(promise).rejects.toBe(controller.signal.reason);
    expect(clock.pending).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(giveUps.map((e) => [e.reason, e.attempts])).toEqual([['aborted', 1]]);
  });
});

describe('statuses and outcomes', () => {
  it('503, 503, 200 → 200 after 3 attempts; 404 is returned at once', async () => {
    server.script([{ status: 503 }, { status: 503 }]);
    const api = withRetry(fetch, { clock, backoff: noWait });
    const res = await api(`${server.origin}/`);
    expect(res.status).toBe(200);
    expect(retryInfo(res)?.attempts).toBe(3);
    server.script([{ status: 404, body: 'nope' }]);
    const missing = await api(`${server.origin}/missing`);
    expect(await ok(missing, 404)).toBe('nope');
    expect(retryInfo(missing)).toEqual({ attempts: 1, reason: undefined, error: undefined });
  });

  it('exhaustion resolves with the last response (fetch semantics), reason exhausted', async () => {
    server.script([], { status: 502, body: 'bad gateway' });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 4 })(`${server.origin}/`);
    expect(await ok(res, 502)).toBe('bad gateway');
    expect(server.requests).toHaveLength(4);
    expect(retryInfo(res)).toMatchObject({ attempts: 4, reason: 'exhausted' });
  });

  it('network failures reject with a RetryError whose cause is the last failure', async () => {
    server.script([], { reset: 'on-arrival' });
    const error = (await withRetry(fetch, { clock, backoff: noWait })(`${server.origin}/`).catch((e: unknown) => e)) as RetryError;
    expect(isRetryError(error, 'exhausted')).toBe(true);
    expect(error.attempts).toBe(3);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect((error.cause as Error).cause).toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toHaveLength(3);
  });

  it('a connection reset before the server processed a GET → retried', async () => {
    server.script([{ reset: 'on-arrival' }]);
    const events: HttpRetryEvent[] = [];
    const res = await withRetry(fetch, { clock, backoff: noWait, onRetry: (e) => void events.push(e) })(`${server.origin}/`);
    expect(res.status).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0]!.status).toBeUndefined();
    expect(events[0]!.error).toBeInstanceOf(TypeError);
  });

  it('retryStatuses and the retryable override are the classification', async () => {
    server.script([{ status: 409 }, { status: 500 }]);
    const api = withRetry(fetch, {
      clock,
      backoff: noWait,
      retryStatuses: [409, 500],
      retryable: (e, { transient }) => ((e as { status?: number }).status === 500 ? false : transient),
    });
    const res = await api(`${server.origin}/`);
    expect(res.status).toBe(500);
    expect(retryInfo(res)).toMatchObject({ attempts: 2, reason: 'fatal' });
    server.script([{ status: 503 }]);
    expect((await api(`${server.origin}/`)).status).toBe(503); // 503 is not in this retryStatuses
    expect(server.requests).toHaveLength(3);
  });

  it('X-Herdless-Retry: no → the response is returned at once (even with Retry-After), reason do-not-retry', async () => {
    server.script([{ status: 503, headers: { 'x-herdless-retry': ' No ', 'retry-after': '1' } }]);
    const res = await withRetry(fetch, { clock })(`${server.origin}/`);
    expect(res.status).toBe(503);
    expect(retryInfo(res)?.reason).toBe('do-not-retry');
    expect(server.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });

  it.each([
    ['sent twice (arrives as "no, no")', ['no', 'no']],
    ['a list holding no', 'maybe, NO'],
    ['conflicting members', ['yes', 'no']],
  ])('X-Herdless-Retry %s is a list per RFC 9110: not retried', async (_name, value) => {
    server.script([{ status: 503, headers: { 'x-herdless-retry': value } }], { status: 200 });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 4 })(`${server.origin}/`);
    expect(res.status).toBe(503);
    expect(retryInfo(res)?.reason).toBe('do-not-retry');
    expect(server.requests).toHaveLength(1);
  });

  it('X-Herdless-Retry with no member "no" is ignored: retried as usual', async () => {
    server.script([{ status: 503, headers: { 'x-herdless-retry': ['yes', 'nope'] } }], { status: 200 });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 4 })(`${server.origin}/`);
    expect(res.status).toBe(200);
    expect(server.requests).toHaveLength(2);
  });

  it('a retry budget refusal ends the call with reason budget and the last response', async () => {
    // 4 tokens; each failure takes 1; a retry needs more than 2 left: the 2nd failure is refused.
    const budget = retryThrottlingBudget({ maxTokens: 4, tokenRatio: 0.1 });
    server.script([], { status: 503, body: 'overloaded' });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 5, budget })(`${server.origin}/`);
    expect(await ok(res, 503)).toBe('overloaded');
    expect(retryInfo(res)).toMatchObject({ attempts: 2, reason: 'budget' });
    expect(server.requests).toHaveLength(2);
  });
});

describe('methods and idempotency keys (a real side-effect store)', () => {
  const order = JSON.stringify({ item: 'book', qty: 1 });

  it('POST without a key, connection reset after the server stored it → not retried: 1 side effect, the error returned', async () => {
    server.script([{ store: true, resetAfter: true }], { store: true });
    const giveUps: HttpGiveUpEvent[] = [];
    const api = withRetry(fetch, { clock, backoff: noWait, onGiveUp: (e) => void giveUps.push(e) });
    const error = (await api(`${server.origin}/orders`, { method: 'POST', body: order }).catch((e: unknown) => e)) as RetryError;
    expect(isRetryError(error, 'fatal')).toBe(true);
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('POST is not idempotent: it is retried only with an Idempotency-Key header');
    expect((error.cause as Error).cause).toMatchObject({ code: 'ECONNRESET' });
    expect(server.effects).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
    expect(giveUps.map((e) => [e.method, e.reason, e.attempts, e.error])).toEqual([['POST', 'fatal', 1, error]]);
  });

  it('the same with idempotencyKey: true → retried with the same key: still 1 side effect, the stored response returned', async () => {
    server.script([{ store: true, resetAfter: true }], { store: true });
    const api = withRetry(fetch, { clock, backoff: noWait, idempotencyKey: true });
    const res = await api(`${server.origin}/orders`, { method: 'POST', body: order });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ id: 1, key: server.effects[0]!.key, body: order });
    expect(server.effects).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/);
    expect(keys[1]).toBe(keys[0]);
    expect(server.requests.map((r) => r.body.toString())).toEqual([order, order]);
    // a second logical request gets a new key
    await api(`${server.origin}/orders`, { method: 'POST', body: order });
    expect(server.requests[2]!.headers['idempotency-key']).not.toBe(keys[0]);
    expect(server.effects).toHaveLength(2);
  });

  it('a POST carrying its own Idempotency-Key (PATCH too) is retried with it; per-request idempotencyKey: false turns the default off', async () => {
    server.script([{ store: true, resetAfter: true }, { store: true }, { status: 503 }], { status: 200 });
    const api = withRetry(fetch, { clock, backoff: noWait, idempotencyKey: true });
    const res = await api(`${server.origin}/orders`, { method: 'POST', body: order, headers: { 'Idempotency-Key': 'order-42' } });
    expect(res.status).toBe(201);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['order-42', 'order-42']);
    expect(server.effects).toHaveLength(1);
    const patched = await api(`${server.origin}/orders/1`, { method: 'PATCH', body: '{}' }, { idempotencyKey: false });
    expect(patched.status).toBe(503);
    expect(retryInfo(patched)?.reason).toBe('fatal');
    expect(retryInfo(patched)?.error?.message).toContain('PATCH is not idempotent');
    expect(server.requests[2]!.headers['idempotency-key']).toBeUndefined();
  });

  it('a POST whose failure is not retryable anyway (an invalid URL) is not blamed on the method', async () => {
    const error = (await withRetry(fetch, { clock })('http://127.0.0.1:99999/', { method: 'POST', body: 'x' }).catch((e: unknown) => e)) as RetryError;
    expect(isRetryError(error, 'fatal')).toBe(true);
    expect(error.message).toContain('the failure is not retryable');
    expect(error.message).not.toContain('Idempotency-Key');
  });

  it('a POST reset before the server processed it is not retried either (the client cannot tell): 0 side effects', async () => {
    server.script([{ reset: 'on-arrival' }], { store: true });
    const error = await withRetry(fetch, { clock, backoff: noWait })(`${server.origin}/orders`, { method: 'POST', body: order }).catch((e: unknown) => e);
    expect(isRetryError(error, 'fatal')).toBe(true);
    expect(server.effects).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it('idempotencyKey as a function: its value is sent as is, the same on every attempt', async () => {
    server.script([{ status: 503 }], { store: true });
    let made = 0;
    const api = withRetry(fetch, { clock, backoff: noWait, idempotencyKey: () => `order-${++made}` });
    expect((await api(`${server.origin}/orders`, { method: 'POST', body: order })).status).toBe(201);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['order-1', 'order-1']);
    expect(made).toBe(1);
  });

  it('GET, HEAD, OPTIONS, PUT, DELETE are retried without a key', async () => {
    const api = withRetry(fetch, { clock, backoff: noWait });
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']) {
      server.script([{ status: 503 }]);
      const res = await api(`${server.origin}/`, { method });
      expect([method, res.status, retryInfo(res)?.attempts]).toEqual([method, 200, 2]);
    }
  });
});

describe('bodies', () => {
  it('new Request(url, { method: PUT, body: {"n":1} }), server 503, 503, 200 → all three requests carry the 7-byte body', async () => {
    server.script([{ status: 503 }, { status: 503 }]);
    const request = new Request(`${server.origin}/items/1`, { method: 'PUT', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
    const res = await withRetry(fetch, { clock, backoff: noWait })(request);
    expect(res.status).toBe(200);
    expect(server.requests).toHaveLength(3);
    for (const r of server.requests) {
      expect(r.method).toBe('PUT');
      expect(r.headers['content-length']).toBe('7');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body.toString()).toBe('{"n":1}');
    }
    expect(request.bodyUsed).toBe(false); // each attempt sent a clone
  });

  const form = new FormData();
  form.set('n', '1');
  const bodies: [string, () => BodyInit, string][] = [
    ['string', () => '{"n":1}', '{"n":1}'],
    ['ArrayBuffer', () => new TextEncoder().encode('{"n":1}').buffer as ArrayBuffer, '{"n":1}'],
    ['Uint8Array', () => new TextEncoder().encode('{"n":1}'), '{"n":1}'],
    ['DataView', () => new DataView(new TextEncoder().encode('{"n":1}').buffer as ArrayBuffer), '{"n":1}'],
    ['Blob', () => new Blob(['{"n":1}']), '{"n":1}'],
    ['URLSearchParams', () => new URLSearchParams({ n: '1' }), 'n=1'],
  ];
  it.each(bodies)('a %s body is sent whole on every attempt', async (_kind, make, text) => {
    server.script([{ status: 503 }, { status: 500 }]);
    const res = await withRetry(fetch, { clock, backoff: noWait })(`${server.origin}/`, { method: 'PUT', body: make() });
    expect(res.status).toBe(200);
    expect(server.requests.map((r) => r.body.toString())).toEqual([text, text, text]);
  });

  it('a FormData body is sent whole on every attempt', async () => {
    server.script([{ status: 503 }]);
    const res = await withRetry(fetch, { clock, backoff: noWait })(`${server.origin}/`, { method: 'PUT', body: form });
    expect(res.status).toBe(200);
    const [a, b] = server.requests.map((r) => r.body.toString());
    expect(a).toContain('name="n"');
    expect(b!.replace(/-+[\w-]+/g, '')).toBe(a!.replace(/-+[\w-]+/g, '')); // the same parts, a new boundary
  });

  const stream = (): ReadableStream<Uint8Array> =>
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"n":1}'));
        controller.close();
      },
    });

  it('a stream body is not retried: the 503 is returned with the reason, never an empty body on a second try', async () => {
    server.script([{ status: 503 }]);
    const res = await withRetry(fetch, { clock, backoff: noWait })(`${server.origin}/`, { method: 'PUT', body: stream(), duplex: 'half' } as RequestInit);
    expect(res.status).toBe(503);
    expect(retryInfo(res)?.reason).toBe('fatal');
    expect(retryInfo(res)?.error?.message).toContain('the request body is a stream, which can be sent only once; pass bodyFactory to retry it');
    expect(server.requests.map((r) => r.body.toString())).toEqual(['{"n":1}']);
  });

  it('with a bodyFactory a stream body is retried: a fresh stream per attempt', async () => {
    server.script([{ status: 503 }, { status: 503 }]);
    const attempts: number[] = [];
    const res = await withRetry(fetch, { clock, backoff: noWait })(
      `${server.origin}/`,
      { method: 'PUT' },
      {
        bodyFactory: (attempt) => {
          attempts.push(attempt);
          return stream();
        },
      },
    );
    expect(res.status).toBe(200);
    expect(attempts).toEqual([1, 2, 3]);
    expect(server.requests.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":1}', '{"n":1}']);
  });
});

describe('abort and attempt timeouts', () => {
  it('attemptTimeoutMs aborts only the slow attempt, which is retried', async () => {
    server.script([{ hang: true }]);
    const events: HttpRetryEvent[] = [];
    const promise = withRetry(fetch, { clock, backoff: noWait, attemptTimeoutMs: 1000, onRetry: (e) => void events.push(e) })(`${server.origin}/`);
    await server.waitForRequests(1);
    expect(clock.delays).toEqual([1000]);
    await clock.advance(1000);
    const res = await promise;
    expect(await ok(res)).toBe('ok');
    await server.requests[0]!.closed;
    expect(server.requests.map((r) => [r.at, r.aborted])).toEqual([
      [0, true],
      [1000, false],
    ]);
    expect(events).toHaveLength(1);
    expect(isAttemptTimeoutError(events[0]!.error)).toBe(true);
    expect(events[0]!.status).toBeUndefined();
  });

  it('a POST without a key that times out is not retried (it may have been applied)', async () => {
    server.script([{ hang: true }]);
    const outcome = withRetry(fetch, { clock, backoff: noWait, attemptTimeoutMs: 1000 })(`${server.origin}/`, { method: 'POST', body: 'x' }).catch(
      (e: unknown) => e,
    );
    await server.waitForRequests(1);
    await clock.advance(1000);
    const error = await outcome;
    expect(isRetryError(error, 'fatal')).toBe(true);
    expect(isAttemptTimeoutError((error as RetryError).cause)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('the caller’s signal aborts the attempt in flight: the server sees the request go away; no retry', async () => {
    server.script([{ hang: true }]);
    const controller = new AbortController();
    const request = new Request(`${server.origin}/slow`, { signal: controller.signal });
    const promise = withRetry(fetch, { clock, backoff: noWait })(request);
    await server.waitForRequests(1);
    controller.abort();
    const error = await promise.catch((e: unknown) => e);
    expect(error).toBe(controller.signal.reason);
    expect((error as Error).name).toBe('AbortError');
    await server.requests[0]!.closed;
    expect(server.requests[0]!.aborted).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('with attemptTimeoutMs, the caller’s signal still aborts the reading of the returned body (fetch semantics)', async () => {
    server.script([{ partial: 'first part…' }]);
    const controller = new AbortController();
    const res = await withRetry(fetch, { clock, attemptTimeoutMs: 1000 })(`${server.origin}/`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const reading = res.text().catch((e: unknown) => e);
    controller.abort();
    expect(await reading).toBe(controller.signal.reason);
    await server.requests[0]!.closed;
    expect(server.requests[0]!.aborted).toBe(true);
  });

  it('slow responses within attemptTimeoutMs are simply waited for', async () => {
    let release!: () => void;
    server.script([{ release: new Promise<void>((r) => (release = r)), then: { status: 200, body: 'late but fine' } }]);
    const promise = withRetry(fetch, { clock, attemptTimeoutMs: 5000 })(`${server.origin}/`);
    await server.waitForRequests(1);
    await clock.advance(4999);
    release();
    expect(await ok(await promise)).toBe('late but fine');
    expect(server.requests).toHaveLength(1);
  });
});

describe('connections', () => {
  it('200 retries of a 503 with a 64 KiB body on keep-alive: discarded bodies are cancelled, open sockets stay bounded', async () => {
    // Unread, each 64 KiB body would hold its socket (the body does not fit undici's buffer): 200 open sockets.
    server.script([], { status: 503, body: new Uint8Array(65_536) });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 201 })(`${server.origin}/`);
    expect(res.status).toBe(503);
    expect(retryInfo(res)).toMatchObject({ attempts: 201, reason: 'exhausted' });
    expect(server.requests).toHaveLength(201);
    expect(server.connections.peak).toBeLessThanOrEqual(4);
    expect((await res.arrayBuffer()).byteLength).toBe(65_536); // the returned response is whole
  });

  it('small discarded bodies leave the keep-alive connection reusable', async () => {
    server.script([], { status: 503, body: 'busy' });
    const res = await withRetry(fetch, { clock, backoff: noWait, maxAttempts: 50 })(`${server.origin}/`);
    expect(res.status).toBe(503);
    expect(server.requests).toHaveLength(50);
    expect(server.connections.total).toBeLessThanOrEqual(3);
  });
});

describe('fetchWithRetry (the global fetch)', () => {
  it('retries with options and per-request options in one object', async () => {
    server.script([{ store: true, resetAfter: true }], { store: true });
    const res = await fetchWithRetry(`${server.origin}/orders`, { method: 'POST', body: 'x' }, { clock, backoff: noWait, idempotencyKey: true });
    expect(res.status).toBe(201);
    expect(server.effects).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });
});

describe('edges', () => {
  it('a signal that has already aborted: no request, rejects with its reason', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const giveUps: HttpGiveUpEvent[] = [];
    const error = await withRetry(fetch, { clock, onGiveUp: (e) => void giveUps.push(e) })(`${server.origin}/`, { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(error).toBe(controller.signal.reason);
    expect(server.requests).toHaveLength(0);
    expect(giveUps.map((e) => [e.reason, e.attempts])).toEqual([['aborted', 0]]);
  });

  it('a throwing onRetry hook goes to onHookError and changes nothing', async () => {
    server.script([{ status: 503 }]);
    const hookErrors: [unknown, string][] = [];
    const boom = new Error('hook bug');
    const res = await withRetry(fetch, {
      clock,
      backoff: noWait,
      onRetry: () => {
        throw boom;
      },
      onHookError: (error, hook) => void hookErrors.push([error, hook]),
    })(`${server.origin}/`);
    expect(res.status).toBe(200);
    expect(hookErrors).toEqual([[boom, 'onRetry']]);
  });

  it('a POST Request gets the generated key on every attempt; the caller’s Request is left as it was', async () => {
    server.script([{ store: true, resetAfter: true }], { store: true });
    const request = new Request(`${server.origin}/orders`, { method: 'POST', body: 'abc', headers: { 'x-trace': 't1' } });
    const res = await withRetry(fetch, { clock, backoff: noWait, idempotencyKey: true })(request);
    expect(res.status).toBe(201);
    const [a, b] = server.requests;
    expect(a!.headers['idempotency-key']).toBe(b!.headers['idempotency-key']);
    expect([a!.headers['x-trace'], b!.headers['x-trace'], b!.body.toString()]).toEqual(['t1', 't1', 'abc']);
    expect(request.headers.has('idempotency-key')).toBe(false);
    expect(await request.text()).toBe('abc');
    expect(server.effects).toHaveLength(1);
  });

  it('a late response to a timed-out attempt (from a fetch that ignores the signal) is discarded, not leaked', async () => {
    let release!: () => void;
    server.script([{ release: new Promise<void>((r) => (release = r)), then: { status: 200, body: 'late' } }]);
    let late!: Promise<Response>;
    const deaf = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const response = fetch(input, { ...init, signal: undefined });
      late ??= response;
      return response;
    };
    const promise = withRetry(deaf, { clock, backoff: noWait, attemptTimeoutMs: 1000 })(`${server.origin}/`);
    await server.waitForRequests(1);
    await clock.advance(1000);
    expect(await ok(await promise)).toBe('ok'); // attempt 2
    release();
    const lateResponse = await late;
    await new Promise((r) => setImmediate(r));
    expect(lateResponse.bodyUsed).toBe(true); // cancelled by the adapter
    expect(retryInfo(lateResponse)).toBeUndefined();
  });
});
