/**
 * The shared HTTP exchange (what withRetry, the undici interceptor and the axios adapter share), one
 * rule at a time through the retrying fetch, with a scripted fetch in place of the network and every
 * wait on a ManualClock: what beforeAttempt is told and may return, what onRetry, onGiveUp and
 * telemetry hear (every field), which responses are let go, the dependency's default name, and what
 * a request that may not be sent twice says when it is not retried.
 */
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  adaptiveThrottling,
  circuitBreaker,
  consecutiveFailures,
  constantBackoff,
  isInvalidOptionError,
  isRetryError,
  retryThrottlingBudget,
  type InvalidOptionError,
  type RetryError,
  type TelemetryEvent,
} from 'herdless';
import { HttpStatusError, retryInfo, withRetry, type HttpGiveUpEvent, type HttpRetryEvent, type HttpRetryOptions } from 'herdless/http';
import { attemptHeaders, hostOf } from '../src/http/exchange.js';
import { connectionReset, fetchDouble, trackedResponse, type FetchStep } from './support/fetch-double.js';
import { settle } from './support/settle.js';

const URL_A = 'http://127.0.0.1:8080/a';

function api(steps: readonly FetchStep[], options: HttpRetryOptions = {}, fallback?: FetchStep) {
  const clock = new ManualClock();
  const double = fetchDouble(steps, fallback);
  const call = withRetry(double.fetch as never, { clock, backoff: constantBackoff({ delayMs: 7 }), ...options });
  return { clock, double, call };
}

/** Settles `promise` into a box, so a test can read its outcome once the virtual clock has moved it. */
function track<T>(promise: Promise<T>): { value?: T; error?: unknown } {
  const box: { value?: T; error?: unknown } = {};
  promise.then(
    (value) => void (box.value = value),
    (error: unknown) => void (box.error = error),
  );
  return box;
}

/** Telemetry events without their `call` and duration, for comparison. */
const shape = (events: TelemetryEvent[]) =>
  events.map((e) => {
    const { call: _call, ...rest } = e as TelemetryEvent & { durationMs?: number };
    delete (rest as { durationMs?: number }).durationMs;
    return rest;
  });


/** One attempt during which the caller aborts (`Error('left')`); the attempt rejects with the abort's reason, as fetch does. */
function abortedDuringAttempt(controller: AbortController): FetchStep {
  return (init) =>
    new Promise<Response>((_resolve, reject) => {
      init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
      controller.abort(new Error('left'));
    });
}
describe('beforeAttempt: what it is told, what it may return', () => {
  it('is told the method, URL, attempt and the previous failure: none, a 503, then a network failure (no status)', async () => {
    const reset = connectionReset();
    const seen: unknown[] = [];
    const { clock, call } = api([503, { reject: reset }, 200], {
      maxAttempts: 3,
      beforeAttempt: (info) => void seen.push({ ...info, error: info.error === undefined ? undefined : isRetryError(info.error) ? 'retry' : (info.error as Error).constructor.name }),
    });
    const out = await settle(clock, call(URL_A, { method: 'put', body: 'x' }));
    expect((out.value as Response).status).toBe(200);
    expect(seen).toEqual([
      { method: 'PUT', url: URL_A, attempt: 1, status: undefined, error: undefined },
      { method: 'PUT', url: URL_A, attempt: 2, status: 503, error: 'HttpStatusError' },
      { method: 'PUT', url: URL_A, attempt: 3, status: undefined, error: 'TypeError' },
    ]);
  });

  it('a failure that carries a status of its own but is no HttpStatusError tells no status', async () => {
    const odd = Object.assign(connectionReset(), { status: 502 });
    const statuses: unknown[] = [];
    const { clock, call } = api([{ reject: odd }, 200], { beforeAttempt: ({ status }) => void statuses.push(status) });
    await settle(clock, call(URL_A));
    expect(statuses).toEqual([undefined, undefined]);
  });

  it('a beforeAttempt that throws a transient-looking error still ends the call: it is part of the request, not a failing dependency', async () => {
    let calls = 0;
    const { clock, double, call } = api([], {
      maxAttempts: 3,
      beforeAttempt: () => {
        calls++;
        throw connectionReset();
      },
    });
    const out = await settle(clock, call(URL_A));
    expect(isRetryError(out.error)).toBe(true);
    expect((out.error as RetryError).reason).toBe('fatal');
    expect(calls).toBe(1);
    expect(double.calls).toHaveLength(0);
  });

  it('…even when the caller’s retryable override says retry', async () => {
    let calls = 0;
    const { clock, call } = api([], {
      maxAttempts: 3,
      retryable: () => true,
      beforeAttempt: () => {
        calls++;
        throw new Error('no token');
      },
    });
    const out = await settle(clock, call(URL_A));
    expect((out.error as RetryError).reason).toBe('fatal');
    expect(calls).toBe(1);
  });

  it('its headers are lower-cased and set over the request’s; { headers: undefined } and null change nothing', async () => {
    const changes = [{ headers: { 'X-Token': 'a', Accept: 'text/plain' } }, { headers: undefined }, null];
    let i = 0;
    const { clock, double, call } = api([503, 503, 200], { maxAttempts: 3, attemptHeader: false, beforeAttempt: () => changes[i++] as never });
    await settle(clock, call(URL_A, { headers: { accept: 'application/json' } }));
    expect(double.header('x-token')).toEqual(['a', null, null]);
    expect(double.header('accept')).toEqual(['text/plain', 'application/json', 'application/json']);
    const names = [...new Headers(double.calls[0]!.init!.headers).keys()];
    expect(names).toEqual(['accept', 'x-token']);
    // With the attempt header off, a retry carries no header of that kind, under any name.
    expect([...new Headers(double.calls[1]!.init!.headers).keys()]).toEqual(['accept']);
  });

  it('attemptHeaders: lower-cases names and returns the values as given', () => {
    expect(attemptHeaders({ headers: { 'X-A': 'One', b: '' } }, 'o')).toEqual({ 'x-a': 'One', b: '' });
    expect(attemptHeaders(undefined, 'o')).toBeUndefined();
    expect(attemptHeaders(null as never, 'o')).toBeUndefined();
    expect(attemptHeaders({}, 'o')).toBeUndefined();
    expect(attemptHeaders({ headers: undefined }, 'o')).toBeUndefined();
  });

  const bad = (change: unknown): InvalidOptionError => {
    try {
      attemptHeaders(change as never, 'withRetry');
    } catch (error) {
      if (isInvalidOptionError(error)) return error as InvalidOptionError;
      throw error;
    }
    throw new Error(`accepted ${JSON.stringify(change)}`);
  };
  it.each([
    ['a string', 'x', 'withRetry: beforeAttempt must return undefined or { headers }, got "x"'],
    ['a number', 3, 'withRetry: beforeAttempt must return undefined or { headers }, got 3'],
    ['an array', [], 'withRetry: beforeAttempt must return undefined or { headers }, got an array of length 0'],
    ['another key', { headers: {}, body: 'x' }, 'withRetry: beforeAttempt must return undefined or { headers } (body is not a change it may make), got an object (Object)'],
    ['headers as a string', { headers: 'a: b' }, 'withRetry: beforeAttempt must return headers as an object of name → string value, got "a: b"'],
    ['headers null', { headers: null }, 'withRetry: beforeAttempt must return headers as an object of name → string value, got null'],
    ['headers as an array', { headers: [['a', 'b']] }, 'withRetry: beforeAttempt must return headers as an object of name → string value, got an array of length 1'],
    ['a name with a space before', { headers: { ' a': 'b' } }, 'withRetry: beforeAttempt must return header names that are HTTP tokens (RFC 9110 §5.1), got " a"'],
    ['a name with a space after', { headers: { 'a ': 'b' } }, 'withRetry: beforeAttempt must return header names that are HTTP tokens (RFC 9110 §5.1), got "a "'],
    ['a name with a colon', { headers: { 'a:b': 'c' } }, 'withRetry: beforeAttempt must return header names that are HTTP tokens (RFC 9110 §5.1), got "a:b"'],
    ['an empty name', { headers: { '': 'c' } }, 'withRetry: beforeAttempt must return header names that are HTTP tokens (RFC 9110 §5.1), got ""'],
    ['a number value', { headers: { a: 1 } }, 'withRetry: beforeAttempt must return string header values without CR, LF or NUL (header a), got 1'],
    ['a CR', { headers: { a: 'x\ry' } }, 'withRetry: beforeAttempt must return string header values without CR, LF or NUL (header a), got "x\\ry"'],
    ['an LF', { headers: { a: 'x\ny' } }, 'withRetry: beforeAttempt must return string header values without CR, LF or NUL (header a), got "x\\ny"'],
    ['a NUL', { headers: { a: 'x\0y' } }, 'withRetry: beforeAttempt must return string header values without CR, LF or NUL (header a), got "x\\u0000y"'],
  ])('%s → refused with its words', (_name, change, message) => {
    const error = bad(change);
    expect(error.field).toBe('beforeAttempt');
    expect(error.message).toBe(message);
  });
});

describe('onRetry and onGiveUp: every field', () => {
  it('onRetry hears a 503 (status, hint) and a network failure (no status); each discarded 503 has its body cancelled before the wait', async () => {
    const reset = connectionReset();
    const events: HttpRetryEvent[] = [];
    const cancelledAtRetry: boolean[][] = [];
    const { clock, double, call } = api([{ status: 503, headers: { 'retry-after': '2' } }, { reject: reset }, 200], {
      maxAttempts: 3,
      onRetry: (e) => {
        events.push(e);
        cancelledAtRetry.push(double.cancelled());
      },
    });
    const out = await settle(clock, call(URL_A, { method: 'DELETE' }));
    expect((out.value as Response).status).toBe(200);
    expect(out.at).toBe(2007);
    expect(retryInfo(out.value as Response)).toEqual({ attempts: 3, reason: undefined, error: undefined });
    expect(events.map((e) => ({ ...e, error: e.error instanceof HttpStatusError ? `HTTP ${e.error.status}` : e.error }))).toEqual([
      { method: 'DELETE', url: URL_A, attempt: 1, status: 503, error: 'HTTP 503', delayMs: 2000, delaySource: 'server-hint' },
      { method: 'DELETE', url: URL_A, attempt: 2, status: undefined, error: reset, delayMs: 7, delaySource: 'backoff' },
    ]);
    expect(cancelledAtRetry).toEqual([[true], [true, false]]);
    expect(double.cancelled()).toEqual([true, false, false]);
  });

  it('onGiveUp for a returned 503: the response, its status, the RetryError, the attempts — and retryInfo is recorded before it runs', async () => {
    const events: HttpGiveUpEvent[] = [];
    const info: unknown[] = [];
    const { clock, double, call } = api([], { maxAttempts: 2, onGiveUp: (e) => void (events.push(e), info.push(retryInfo(e.response!)?.reason)) }, 503);
    const out = await settle(clock, call(URL_A));
    const res = out.value as Response;
    expect(res).toBe(double.calls[1]!.response);
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect([e.method, e.url, e.reason, e.attempts, e.status, e.response]).toEqual(['GET', URL_A, 'exhausted', 2, 503, res]);
    expect(isRetryError(e.error) && (e.error as RetryError).reason).toBe('exhausted');
    expect(e.error).toBe(retryInfo(res)!.error);
    expect(info).toEqual(['exhausted']);
    // The returned response keeps its body; the one before it was let go.
    expect(double.cancelled()).toEqual([true, false]);
    expect(await res.text()).toBe('body');
  });

  it('onGiveUp for a rejection: no response, no status, the RetryError', async () => {
    const events: HttpGiveUpEvent[] = [];
    const { clock, call } = api([], { maxAttempts: 2, onGiveUp: (e) => void events.push(e) }, { reject: connectionReset() });
    const out = await settle(clock, call(URL_A));
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect([e.method, e.url, e.reason, e.attempts, e.status, e.response, e.error]).toEqual(['GET', URL_A, 'exhausted', 2, undefined, undefined, out.error]);
  });

  it('onGiveUp for the caller’s abort during a wait: reason aborted, the abort reason, the attempts so far; the pending 503 is let go', async () => {
    const events: HttpGiveUpEvent[] = [];
    const controller = new AbortController();
    const { clock, double, call } = api([], { maxAttempts: 5, backoff: constantBackoff({ delayMs: 1000 }), onGiveUp: (e) => void events.push(e) }, 503);
    const box = track(call(URL_A, { signal: controller.signal }));
    // Two attempts: one at 0, one at 1000; the caller aborts during the second wait.
    for (let i = 0; i < 1500 && double.calls.length < 2; i++) await clock.advance(1);
    expect(double.calls).toHaveLength(2);
    const reason = new Error('caller left');
    controller.abort(reason);
    await clock.advance(0);
    expect(box.error).toBe(reason);
    expect(events.map((e) => [e.reason, e.attempts, e.status, e.response, e.error])).toEqual([['aborted', 2, undefined, undefined, reason]]);
    expect(double.cancelled()).toEqual([true, true]);
  });

  it('the caller aborts as its 503 arrives (before the 503 is classified): the call rejects with the reason, the 503 let go', async () => {
    const controller = new AbortController();
    const reason = new Error('gone');
    const events: HttpGiveUpEvent[] = [];
    const retries: unknown[] = [];
    const { clock, double, call } = api([503], {
      maxAttempts: 3,
      onGiveUp: (e) => void events.push(e),
      onRetry: (e) => void retries.push(e),
      // The attempt's end is reported just before the 503 becomes the attempt's failure.
      telemetry: { onEvent: (e) => void (e.type === 'attempt-end' && controller.abort(reason)) },
    });
    const out = await settle(clock, call(URL_A, { signal: controller.signal }));
    expect(out.error).toBe(reason);
    expect(retries).toEqual([]);
    expect(double.cancelled()).toEqual([true]);
    expect(events.map((e) => [e.reason, e.attempts, e.response])).toEqual([['aborted', 1, undefined]]);
  });

  it('a retryable override that throws: the call rejects with what it threw, the pending 503 let go', async () => {
    const boom = new Error('override failed');
    const { clock, double, call } = api([503], {
      retryable: () => {
        throw boom;
      },
    });
    const out = await settle(clock, call(URL_A));
    expect(out.error).toBe(boom);
    expect(double.cancelled()).toEqual([true]);
  });

  it('the retryable override is told the attempt and that a 503 is transient; undefined keeps that answer', async () => {
    const seen: unknown[] = [];
    const { clock, double, call } = api([503, { reject: new Error('not transient') }], {
      maxAttempts: 3,
      retryable: (error, info) => void seen.push([error instanceof HttpStatusError, info]),
    });
    const out = await settle(clock, call(URL_A));
    expect(seen).toEqual([
      [true, { attempt: 1, transient: true }],
      [false, { attempt: 2, transient: false }],
    ]);
    expect((out.error as RetryError).reason).toBe('fatal');
    expect(double.calls).toHaveLength(2);
  });

  it('a listed status the classification does not know (404 in retryStatuses) is retried', async () => {
    const seen: unknown[] = [];
    const { clock, double, call } = api([404, 200], { retryStatuses: [404], retryable: (_e, info) => void seen.push(info) });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    expect(seen).toEqual([{ attempt: 1, transient: true }]);
    expect(double.calls).toHaveLength(2);
  });

  it('the override’s false stops a 503: it is returned at once', async () => {
    const { clock, double, call } = api([503], { maxAttempts: 3, retryable: () => false });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(503);
    expect(retryInfo(out.value as Response)?.reason).toBe('fatal');
    expect(double.calls).toHaveLength(1);
  });
});

describe('hooks that are absent or throw, and a breaker', () => {
  it('without onRetry no hook error is reported; an onGiveUp that throws is reported under its name', async () => {
    const hookErrors: unknown[] = [];
    const boom = new Error('hook broke');
    const { clock, call } = api([], {
      maxAttempts: 2,
      onHookError: (error, hook) => void hookErrors.push([error, hook]),
      onGiveUp: () => {
        throw boom;
      },
    }, 503);
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(503);
    expect(hookErrors).toEqual([[boom, 'onGiveUp']]);
  });

  it('a breaker and refreshStatuses: a network failure is the breaker’s failure, and is retried as itself', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 5 }), clock: new ManualClock() });
    const { clock, call } = api([{ reject: connectionReset() }, 200], { maxAttempts: 3, breaker, refreshStatuses: [401], beforeAttempt: () => undefined });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
  });

  it('a breaker and refreshStatuses: after a refreshed 401, a network failure still opens a threshold-1 breaker', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock: new ManualClock() });
    const { clock, double, call } = api([401, { reject: connectionReset() }, 200], { maxAttempts: 3, breaker, refreshStatuses: [401], beforeAttempt: () => undefined });
    const out = await settle(clock, call(URL_A));
    expect((out.error as RetryError).reason).toBe('circuit-open');
    expect(double.calls).toHaveLength(2);
    expect(breaker.state).toBe('open');
  });

  it('the caller’s abort is no failure of the dependency: a threshold-1 breaker stays closed', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock: new ManualClock() });
    const controller = new AbortController();
    const steps = [abortedDuringAttempt(controller)];
    const { clock, call } = api(steps, { breaker });
    const out = await settle(clock, call(URL_A, { signal: controller.signal }));
    expect((out.error as Error).message).toBe('left');
    expect(breaker.state).toBe('closed');
  });
});

describe('a request that may not be sent twice', () => {
  it('a POST without a key that fails transiently: fatal, and the message says why it was not retried', async () => {
    const { clock, double, call } = api([], { maxAttempts: 3 }, { reject: connectionReset() });
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect((out.error as RetryError).reason).toBe('fatal');
    expect((out.error as Error).message).toContain('POST is not idempotent: it is retried only with an Idempotency-Key header (send one, or set idempotencyKey: true)');
    expect(double.calls).toHaveLength(1);
  });

  it('…that fails for good: fatal with the failure’s own words (retrying would not have been tried anyway)', async () => {
    const { clock, call } = api([], { maxAttempts: 3 }, { reject: new Error('certificate expired') });
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect((out.error as RetryError).reason).toBe('fatal');
    expect((out.error as Error).message).not.toContain('not idempotent');
    expect((out.error as Error).message).toContain('certificate expired');
  });

  it('a POST with a 503 is returned, its retryInfo fatal, the message saying why', async () => {
    const { clock, call } = api([503], { maxAttempts: 3 });
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    const info = retryInfo(out.value as Response)!;
    expect(info.reason).toBe('fatal');
    expect(info.error!.message).toContain('POST is not idempotent');
  });

  it('a key generator that returns a non-string rejects naming idempotencyKey', async () => {
    const { call } = api([], { idempotencyKey: () => 42 as never });
    const error = await call(URL_A, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe('withRetry: idempotencyKey must return a non-empty string, got 42');
  });

  it('a request’s idempotencyKey: false overrides the adapter’s true, and its true the adapter’s false', async () => {
    const off = api([], { maxAttempts: 2, idempotencyKey: true }, 503);
    const outOff = await settle(off.clock, off.call(URL_A, { method: 'POST', body: 'x' }, { idempotencyKey: false }));
    expect(retryInfo(outOff.value as Response)?.reason).toBe('fatal');
    expect(off.double.header('idempotency-key')).toEqual([null]);
    const on = api([], { maxAttempts: 2 }, 503);
    const outOn = await settle(on.clock, on.call(URL_A, { method: 'POST', body: 'x' }, { idempotencyKey: () => '"k1"' }));
    expect(retryInfo(outOn.value as Response)?.reason).toBe('exhausted');
    expect(on.double.header('idempotency-key')).toEqual(['"k1"', '"k1"']);
  });

  it('a POST carrying its own key is retried with it, no option needed', async () => {
    const { clock, double, call } = api([], { maxAttempts: 2 }, 503);
    await settle(clock, call(URL_A, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': '"own"' } }));
    expect(double.header('idempotency-key')).toEqual(['"own"', '"own"']);
  });
});

describe('telemetry of the retrying exchange', () => {
  const observe = () => {
    const events: TelemetryEvent[] = [];
    return { events, telemetry: { onEvent: (e: TelemetryEvent) => void events.push(e) } };
  };

  it('the call: layer http, client fetch, method, URL, and the URL’s host:port as the name', async () => {
    const { events, telemetry } = observe();
    const { clock, call } = api([], { telemetry });
    await settle(clock, call(URL_A, { method: 'head' }));
    expect(events[0]!.call).toEqual({ layer: 'http', client: 'fetch', method: 'HEAD', url: URL_A, name: '127.0.0.1:8080' });
  });

  it('the name option wins over the host', async () => {
    const { events, telemetry } = observe();
    const { clock, call } = api([], { telemetry, name: 'inventory' });
    await settle(clock, call(URL_A));
    expect(events[0]!.call.name).toBe('inventory');
  });

  it('hostOf: host and port; the URL itself when it has no host or does not parse', () => {
    expect(hostOf('https://api.example.com/x')).toBe('api.example.com');
    expect(hostOf('http://h:81/p?q')).toBe('h:81');
    expect(hostOf('mailto:a@b.c')).toBe('mailto:a@b.c');
    expect(hostOf('/relative')).toBe('/relative');
  });

  it('a 503 with a hint, a network failure, a 200: every event with its fields', async () => {
    const { events, telemetry } = observe();
    const reset = connectionReset();
    const { clock, call } = api([{ status: 503, headers: { 'retry-after': '1' } }, { reject: reset }, 200], { maxAttempts: 3, telemetry });
    await settle(clock, call(URL_A));
    const failure = (events[1] as { error?: unknown }).error;
    expect(failure).toBeInstanceOf(HttpStatusError);
    expect(shape(events)).toEqual([
      { type: 'attempt-start', attempt: 1 },
      { type: 'attempt-end', attempt: 1, outcome: 'failure', status: 503, error: failure },
      { type: 'retry', attempt: 1, delayMs: 1000, delaySource: 'server-hint', error: failure },
      { type: 'attempt-start', attempt: 2 },
      { type: 'attempt-end', attempt: 2, outcome: 'failure', error: reset },
      { type: 'retry', attempt: 2, delayMs: 7, delaySource: 'backoff', error: reset },
      { type: 'attempt-start', attempt: 3 },
      { type: 'attempt-end', attempt: 3, outcome: 'success', status: 200 },
    ]);
  });

  it('a give-up to the budget reports the budget’s refusal by name', async () => {
    const { events, telemetry } = observe();
    const budget = retryThrottlingBudget({ maxTokens: 2, tokenRatio: 0.1 });
    const { clock, call } = api([], { maxAttempts: 5, telemetry, budget }, 503);
    // Each failure takes a token: at 1 of 2 (not above half), retries stop.
    await settle(clock, call(URL_A));
    const refusal = events.find((e) => e.type === 'budget-refusal');
    expect(refusal).toMatchObject({ type: 'budget-refusal', budget: 'retry throttling', attempt: 1 });
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'budget', attempts: 1, status: 503 });
  });

  it('a give-up to the throttle reports the throttle’s rejection by name', async () => {
    const { events, telemetry } = observe();
    const throttle = adaptiveThrottling({ k: 1 });
    const { clock, call } = api([], { maxAttempts: 5, telemetry, throttle, random: { random: () => 0 } }, 503);
    await settle(clock, call(URL_A));
    const rejection = events.find((e) => e.type === 'throttle-rejection');
    expect(rejection).toMatchObject({ type: 'throttle-rejection', throttle: 'adaptive throttling' });
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'throttled' });
    expect(events.some((e) => e.type === 'budget-refusal')).toBe(false);
  });

  it('an attempt cut by attemptTimeoutMs ends as a timeout; a late answer to it is let go and reported with its status', async () => {
    const { events, telemetry } = observe();
    let answer!: (r: Response) => void;
    const late = trackedResponse(200);
    const steps: FetchStep[] = [() => new Promise<Response>((resolve) => (answer = resolve)), 200];
    const { clock, double, call } = api(steps, { maxAttempts: 2, attemptTimeoutMs: 100, telemetry });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    expect(double.calls).toHaveLength(2);
    answer(late);
    await new Promise((r) => setTimeout(r, 0));
    expect(late.wasCancelled()).toBe(true);
    const ends = events.filter((e) => e.type === 'attempt-end').map((e) => [e.attempt, (e as { outcome: string }).outcome, (e as { status?: number }).status]);
    expect(ends).toContainEqual([1, 'timeout', 200]);
    expect(ends).toContainEqual([2, 'success', 200]);
  });

  it('the caller’s abort during an attempt ends it as aborted', async () => {
    const { events, telemetry } = observe();
    const controller = new AbortController();
    const steps = [abortedDuringAttempt(controller)];
    const { clock, call } = api(steps, { telemetry });
    const out = await settle(clock, call(URL_A, { signal: controller.signal }));
    expect((out.error as Error).message).toBe('left');
    expect(shape(events.filter((e) => e.type === 'attempt-end'))).toEqual([{ type: 'attempt-end', attempt: 1, outcome: 'aborted', error: out.error }]);
    // The abort ends the call at once; the attempt's own rejection is reported when it comes.
    expect(events.filter((e) => e.type === 'give-up')).toMatchObject([{ type: 'give-up', reason: 'aborted', attempts: 1, error: out.error }]);
  });
});

describe('signals', () => {
  it('a plain call without a caller’s signal sends its first attempt with no signal (nothing can abort it), and the caller’s own init', async () => {
    const { clock, double, call } = api([503, 200], { maxAttempts: 2 });
    const init = { headers: { a: 'b' } };
    await settle(clock, call(URL_A, init));
    expect(double.calls[0]!.init).toBe(init);
    expect(double.calls[1]!.init?.signal).toBeUndefined();
  });

  it('a call with a deadline gives every attempt a signal', async () => {
    const { clock, double, call } = api([503, 200], { maxAttempts: 2, deadlineMs: 10_000 });
    await settle(clock, call(URL_A));
    expect(double.calls.map((c) => c.init?.signal instanceof AbortSignal)).toEqual([true, true]);
  });

  it('with a caller’s signal and no timer, each attempt is sent with the caller’s signal itself', async () => {
    const controller = new AbortController();
    const { clock, double, call } = api([503, 200], { maxAttempts: 2 });
    await settle(clock, call(URL_A, { signal: controller.signal }));
    expect(double.calls.map((c) => c.init?.signal)).toEqual([controller.signal, controller.signal]);
  });

  it('with a caller’s signal and an attempt timeout, each attempt gets a signal of its own, which the caller’s abort reaches', async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const steps: FetchStep[] = [
      (init) => {
        signals.push(init!.signal!);
        return trackedResponse(503);
      },
      (init) => {
        signals.push(init!.signal!);
        return new Promise<Response>((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
      },
    ];
    const { clock, call } = api(steps, { maxAttempts: 2, attemptTimeoutMs: 60_000 });
    const box = track(call(URL_A, { signal: controller.signal }));
    for (let i = 0; i < 100 && signals.length < 2; i++) await clock.advance(1);
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(controller.signal);
    expect(signals[1]).not.toBe(signals[0]);
    expect(signals[0]!.aborted).toBe(false);
    const reason = new Error('stop');
    controller.abort(reason);
    await clock.advance(0);
    expect(box.error).toBe(reason);
    expect(signals[1]!.aborted).toBe(true);
    expect(signals[1]!.reason).toBe(reason);
    // The first attempt's link stopped listening once it settled: the abort did not reach it.
    expect(signals[0]!.aborted).toBe(false);
  });

  it('the returned body follows the caller’s signal: an abort after the call cancels its reading', async () => {
    const controller = new AbortController();
    const steps: FetchStep[] = [
      (init) => {
        const signal = init!.signal!;
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('part'));
            signal.addEventListener('abort', () => c.error(signal.reason));
          },
        });
        return new Response(body, { status: 200 });
      },
    ];
    const { clock, call } = api(steps, { deadlineMs: 10_000 });
    const out = await settle(clock, call(URL_A, { signal: controller.signal }));
    const res = out.value as Response;
    const reason = new Error('caller gone');
    controller.abort(reason);
    await expect(res.text()).rejects.toBe(reason);
  });
});
