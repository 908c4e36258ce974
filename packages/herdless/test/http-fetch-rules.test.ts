/**
 * The retrying fetch's mechanics, one rule at a time against a scripted fetch (no socket; waits on
 * a ManualClock): how a request is read (a Request from another realm, a URL, init over the
 * Request, a null signal), what each attempt sends (the caller's own init untouched when nothing
 * changes, headers, the attempt number, a trace context, a cloned Request, a factory's body and its
 * duplex), how a discarded response is let go whatever its body, and fetchWithRetry's options.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, constantBackoff, isInvalidOptionError, isRetryError, type RetryError, type TelemetryEvent } from 'herdless';
import { fetchWithRetry, retryInfo, withRetry, type HttpRetryEvent, type HttpRetryOptions } from 'herdless/http';
import { fetchDouble, trackedResponse, type FetchStep } from './support/fetch-double.js';
import { settle } from './support/settle.js';

const URL_A = 'http://127.0.0.1:8080/a';

function api(steps: readonly FetchStep[], options: HttpRetryOptions = {}, fallback?: FetchStep) {
  const clock = new ManualClock();
  const double = fetchDouble(steps, fallback);
  const urls: string[] = [];
  const call = withRetry(double.fetch as never, { clock, backoff: constantBackoff({ delayMs: 7 }), onRetry: (e: HttpRetryEvent) => void urls.push(`${e.method} ${e.url}`), ...options });
  return { clock, double, call, urls };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('reading the request', () => {
  it('init that is not an object rejects naming init', async () => {
    const { call, double } = api([]);
    for (const [init, got] of [
      ['x', 'got "x"'],
      [null, 'got null'],
      [3, 'got 3'],
    ] as const) {
      const error = await call(URL_A, init as never).catch((e: unknown) => e);
      expect(isInvalidOptionError(error)).toBe(true);
      expect((error as Error).message).toBe(`withRetry: init must be an object, ${got}`);
    }
    expect(double.calls).toHaveLength(0);
  });

  it('a URL object: its href is the request URL', async () => {
    const { clock, call, urls, double } = api([503, 200]);
    await settle(clock, call(new URL('http://127.0.0.1:8080/u?q=1')));
    expect(urls).toEqual(['GET http://127.0.0.1:8080/u?q=1']);
    expect(double.calls[0]!.input).toBeInstanceOf(URL);
  });

  it('a Request from another realm (url, method and clone, not this realm’s class) is read as a Request', async () => {
    const foreign = { url: 'http://127.0.0.1:8080/foreign', method: 'PUT', clone: () => foreign, headers: new Headers({ 'x-a': '1' }), body: null, bodyUsed: false, signal: undefined };
    const { clock, call, urls, double } = api([503, 200]);
    await settle(clock, call(foreign as never));
    expect(urls).toEqual(['PUT http://127.0.0.1:8080/foreign']);
    // Its headers go with the retry, beside the attempt number.
    expect(double.header('x-a')).toEqual(['1', '1']);
    expect(double.header('x-herdless-attempt')).toEqual([null, '2']);
  });

  it.each([
    ['no clone', { url: 'http://127.0.0.1:8080/r', method: 'PUT' }],
    ['a clone that is no function', { url: 'http://127.0.0.1:8080/r', method: 'PUT', clone: 'x' }],
    ['no method', { url: 'http://127.0.0.1:8080/r', method: 5, clone: () => undefined }],
    ['no url', { url: 7, method: 'PUT', clone: () => undefined }],
  ])('an object with %s is no Request: its string form is the URL, GET the method', async (_what, shape) => {
    const input = { ...shape, toString: () => 'http://127.0.0.1:8080/as-string' };
    const { clock, call, urls } = api([503, 200]);
    await settle(clock, call(input as never));
    expect(urls).toEqual(['GET http://127.0.0.1:8080/as-string']);
  });

  it('init’s method wins over the Request’s, and is upper-cased; the Request’s method otherwise', async () => {
    const request = new Request(URL_A, { method: 'PUT', body: 'x' });
    const a = api([503, 200]);
    await settle(a.clock, a.call(request, { method: 'delete' }));
    expect(a.urls).toEqual([`DELETE ${URL_A}`]);
    const b = api([503, 200]);
    await settle(b.clock, b.call(new Request(URL_A, { method: 'PUT', body: 'x' })));
    expect(b.urls).toEqual([`PUT ${URL_A}`]);
  });

  it('init’s signal wins over the Request’s, even null', async () => {
    const aborted = AbortSignal.abort(new Error('request signal'));
    const request = new Request(URL_A, { signal: aborted });
    const a = api([200]);
    const ok = await settle(a.clock, a.call(request, { signal: null }));
    expect((ok.value as Response).status).toBe(200);
    const b = api([200]);
    const refused = await settle(b.clock, b.call(request));
    expect((refused.error as Error).message).toBe('request signal');
    expect(b.double.calls).toHaveLength(0);
    // An init without a signal leaves the Request's.
    const c = api([200]);
    const refusedToo = await settle(c.clock, c.call(request, { headers: { a: 'b' } }));
    expect((refusedToo.error as Error).message).toBe('request signal');
  });

  it('a Request whose body was read is sent once, and says why', async () => {
    // A Request of another fetch implementation, whose clone() does not refuse a read body.
    const used = { url: URL_A, method: 'PUT', clone: () => used, headers: new Headers(), body: 'x', bodyUsed: true, signal: undefined };
    const { clock, call, double } = api([], { maxAttempts: 3 }, 503);
    const out = await settle(clock, call(used as never));
    const info = retryInfo(out.value as Response)!;
    expect(info.reason).toBe('fatal');
    expect(info.error!.message).toContain("the Request's body has already been read");
    expect(double.calls).toHaveLength(1);
  });

  it('…and this realm’s Request with a read body fails as fetch fails it, unsent', async () => {
    const request = new Request(URL_A, { method: 'PUT', body: 'x' });
    await request.text();
    const { clock, call, double } = api([], { maxAttempts: 3 }, 503);
    const out = await settle(clock, call(request));
    expect((out.error as RetryError).reason).toBe('fatal');
    expect(double.calls).toHaveLength(0);
  });

  it('a Request’s body is sent whole on every attempt (a copy each time)', async () => {
    const bodies: string[] = [];
    const steps: FetchStep[] = [
      async (_init, c) => {
        bodies.push(await (c.input as Request).text());
        return trackedResponse(503);
      },
      async (_init, c) => {
        bodies.push(await (c.input as Request).text());
        return trackedResponse(200);
      },
    ];
    const request = new Request(URL_A, { method: 'PUT', body: 'payload' });
    const { clock, call, double } = api(steps);
    await settle(clock, call(request));
    expect(bodies).toEqual(['payload', 'payload']);
    expect(double.calls[0]!.input).not.toBe(request);
    expect(request.bodyUsed).toBe(false);
  });

  it('a Request with a null body and init with a null body send no body: a GET is not blocked', async () => {
    const { clock, call, double } = api([503, 200]);
    await settle(clock, call(new Request(URL_A), { body: null }));
    expect(double.calls).toHaveLength(2);
  });

  it('without a body: a plain call’s first attempt is the caller’s own init; a Request without a body is sent itself, not a copy', async () => {
    const init = { body: null };
    const { clock, call, double } = api([200]);
    await settle(clock, call(URL_A, init));
    expect(double.calls[0]!.init).toBe(init);
    const request = new Request(URL_A);
    const bare = api([503, 200]);
    await settle(bare.clock, bare.call(request));
    expect(bare.double.calls.map((c) => c.input === request)).toEqual([true, true]);
  });

  it('a POST with a stream body stays unretried even with idempotencyKey: the stream is the reason', async () => {
    const { clock, call, double } = api([], { maxAttempts: 3, idempotencyKey: true }, 503);
    const out = await settle(clock, call(URL_A, { method: 'POST', body: new ReadableStream(), duplex: 'half' } as RequestInit));
    const info = retryInfo(out.value as Response)!;
    expect(info.reason).toBe('fatal');
    expect(info.error!.message).toContain('the request body is a stream, which can be sent only once; pass bodyFactory to retry it');
    expect(double.calls).toHaveLength(1);
  });

  it('per-request options that are not an object reject naming options', async () => {
    const { call } = api([]);
    expect(((await call(URL_A, undefined, 'x' as never).catch((e: unknown) => e)) as Error).message).toBe('withRetry: options must be an object, got "x"');
  });
});

describe('what each attempt sends', () => {
  it('a POST with a generated key and a deadline: the key is on the first attempt too', async () => {
    const { clock, call, double } = api([503, 200], { idempotencyKey: () => '"k"', deadlineMs: 60_000 });
    await settle(clock, call(URL_A, { method: 'POST', body: 'x', headers: { 'x-a': '1' } }));
    expect(double.header('idempotency-key')).toEqual(['"k"', '"k"']);
    expect(double.header('x-a')).toEqual(['1', '1']);
    expect(double.header('x-herdless-attempt')).toEqual([null, '2']);
  });

  it('a Request’s own headers (not init’s) are the base of a retry’s', async () => {
    const { clock, call, double } = api([503, 200]);
    await settle(clock, call(new Request(URL_A, { headers: { 'x-from': 'request' } })));
    expect(double.header('x-from')).toEqual(['request', 'request']);
  });

  it('a trace context: every attempt is sent inside it and carries its headers, over the caller’s', async () => {
    const runs: number[] = [];
    const telemetry = {
      onEvent: (_e: TelemetryEvent) => undefined,
      attemptContext: (e: { attempt: number }) => ({
        inject: (set: (name: string, value: string) => void) => set('traceparent', `00-trace-${e.attempt}`),
        run: <T>(send: () => T): T => {
          runs.push(e.attempt);
          return send();
        },
      }),
    };
    const { clock, call, double } = api([503, 200], { telemetry, attemptHeader: false });
    await settle(clock, call(URL_A, { headers: { traceparent: 'caller', 'x-a': '1' } }));
    expect(runs).toEqual([1, 2]);
    expect(double.header('traceparent')).toEqual(['00-trace-1', '00-trace-2']);
    expect(double.header('x-a')).toEqual(['1', '1']);
  });

  it('bodyFactory: a body per attempt, given its number; a stream gets duplex half, a string none, a given duplex is kept', async () => {
    const seen: number[] = [];
    const streaming = api([503, 200], {});
    await settle(
      streaming.clock,
      streaming.call(URL_A, { method: 'PUT' }, {
        bodyFactory: (n) => {
          seen.push(n);
          return new ReadableStream({ start: (c) => c.close() });
        },
      }),
    );
    expect(seen).toEqual([1, 2]);
    expect(streaming.double.calls.map((c) => (c.init as { duplex?: string }).duplex)).toEqual(['half', 'half']);
    const text = api([200]);
    await settle(text.clock, text.call(URL_A, { method: 'PUT' }, { bodyFactory: async () => 'abc' }));
    expect(text.double.calls[0]!.init!.body).toBe('abc');
    expect((text.double.calls[0]!.init as { duplex?: string }).duplex).toBeUndefined();
    const kept = api([200]);
    await settle(kept.clock, kept.call(URL_A, { method: 'PUT', duplex: 'given' } as RequestInit, { bodyFactory: () => new ReadableStream() }));
    expect((kept.double.calls[0]!.init as { duplex?: string }).duplex).toBe('given');
  });

  it('the caller’s init is copied, never changed', async () => {
    const init: RequestInit = { method: 'PUT', body: 'x', headers: { a: 'b' } };
    const { clock, call, double } = api([503, 200], { deadlineMs: 60_000 });
    await settle(clock, call(URL_A, init));
    expect(Object.keys(init)).toEqual(['method', 'body', 'headers']);
    expect(double.calls.map((c) => c.init === init)).toEqual([false, false]);
    expect(double.calls.map((c) => [c.init!.method, c.init!.body])).toEqual([
      ['PUT', 'x'],
      ['PUT', 'x'],
    ]);
  });
});

describe('a discarded response is let go, whatever its body', () => {
  it('a body that is locked (being read) is left alone; a body whose getter throws, or whose cancel rejects, does not fail the call', async () => {
    const locked = trackedResponse(503);
    locked.body!.getReader();
    const throwing = { status: 503, headers: new Headers(), get body(): never {
      throw new Error('no body');
    } };
    const rejecting = new Response(new ReadableStream({ cancel: () => Promise.reject(new Error('cancel failed')) }), { status: 503 });
    const bodiless = new Response(null, { status: 503 });
    const hookErrors: unknown[] = [];
    const { clock, call, double } = api([() => locked, () => throwing as never, () => rejecting, () => bodiless, 200], { maxAttempts: 5, onHookError: (e) => void hookErrors.push(e) });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const out = await settle(clock, call(URL_A));
      expect((out.value as Response).status).toBe(200);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(hookErrors).toEqual([]);
    expect(double.calls).toHaveLength(5);
    expect(locked.wasCancelled()).toBe(false);
  });
});

describe('fetchWithRetry', () => {
  it('uses the global fetch, with the adapter’s and the request’s options in one object', async () => {
    const double = fetchDouble([503, 200]);
    vi.stubGlobal('fetch', double.fetch);
    const clock = new ManualClock();
    const out = await settle(clock, fetchWithRetry(URL_A, { method: 'POST', body: 'x' }, { clock, backoff: constantBackoff(), idempotencyKey: () => '"fk"' }));
    expect((out.value as Response).status).toBe(200);
    expect(double.header('idempotency-key')).toEqual(['"fk"', '"fk"']);
  });

  it('its bodyFactory makes each attempt’s body', async () => {
    const double = fetchDouble([503, 200]);
    vi.stubGlobal('fetch', double.fetch);
    const clock = new ManualClock();
    await settle(clock, fetchWithRetry(URL_A, { method: 'PUT' }, { clock, backoff: constantBackoff(), bodyFactory: (n) => `body ${n}` }));
    expect(double.calls.map((c) => c.init!.body)).toEqual(['body 1', 'body 2']);
  });

  it('without options: the defaults (a POST is not retried)', async () => {
    const double = fetchDouble([503]);
    vi.stubGlobal('fetch', double.fetch);
    const res = await fetchWithRetry(URL_A, { method: 'POST', body: 'x' });
    expect(res.status).toBe(503);
    expect(retryInfo(res)?.reason).toBe('fatal');
    expect(double.calls).toHaveLength(1);
  });

  it('its errors are its own: a bad init, and a global fetch that resolves to no response', async () => {
    vi.stubGlobal('fetch', async () => 'nothing');
    expect(((await fetchWithRetry(URL_A, 'x' as never).catch((e: unknown) => e)) as Error).message).toBe('fetchWithRetry: init must be an object, got "x"');
    const error = (await fetchWithRetry(URL_A).catch((e: unknown) => e)) as RetryError;
    expect((error.cause as Error).message).toBe('fetchWithRetry: fetch must resolve to a Response (an object with a numeric status), got "nothing"');
  });

  it('the RetryError of a rejection names the last failure', async () => {
    const double = fetchDouble([], { reject: new Error('tls') });
    vi.stubGlobal('fetch', double.fetch);
    const error = await fetchWithRetry(URL_A).catch((e: unknown) => e);
    expect(isRetryError(error) && (error as RetryError).reason).toBe('fatal');
  });
});
