/**
 * loadShedder's node:http and fetch-style wrappers without a socket: a request and a response that
 * record what the wrapper does to them (node:http's shape: headers, resume, writeHead, end, destroy,
 * a 'close' event), and a ManualClock for the hold after a client left. The same paths on loopback,
 * with node:http and express, are in server.test.ts and server-overload.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { ManualClock, RetryError } from 'herdless';
import { loadShedder, requestSignal, type NodeRequest, type NodeResponse } from 'herdless/server';
import { invalidOption } from './support/invalid-option.js';

class FakeRequest implements NodeRequest {
  resumed = 0;
  constructor(readonly headers: Record<string, string | undefined> = {}) {}
  resume(): void {
    this.resumed++;
  }
}

class FakeResponse implements NodeResponse {
  headersSent = false;
  writableEnded = false;
  statusCode = 200;
  status: number | undefined;
  headers: Record<string, string> | undefined;
  body: string | undefined;
  destroyed = 0;
  #close: (() => void)[] = [];
  setHeader(): void {}
  write(): void {
    this.headersSent = true;
  }
  writeHead(status: number, headers?: Record<string, string>): void {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
  }
  end(body?: string): void {
    this.body = body;
    this.headersSent = true;
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed++;
  }
  once(_event: 'close', listener: () => void): void {
    this.#close.push(listener);
  }
  /** node:http emits 'close' when the response is done or the client left. */
  close(): void {
    for (const listener of this.#close.splice(0)) listener();
  }
}

/** A promise and its resolve/reject. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('node(): shed, fail, give up', () => {
  it('a shed request: its body is drained and it gets 503 "overloaded"', () => {
    const shedding = loadShedder({ maxInFlight: 1, retryAfterJitter: false });
    const handler = shedding.node(() => new Promise(() => {}));
    handler(new FakeRequest(), new FakeResponse());
    const req = new FakeRequest({ 'x-herdless-attempt': '2' });
    const res = new FakeResponse();
    handler(req, res);
    expect([req.resumed, res.status, res.body, res.headers?.['x-herdless-retry']]).toEqual([1, 503, 'overloaded\n', 'no']);
  });

  it('a queued request runs its handler once a slot frees', async () => {
    const shedding = loadShedder({ maxInFlight: 1, maxQueue: 1, clock: new ManualClock() });
    const ran: string[] = [];
    const handler = shedding.node((req, res) => {
      ran.push(String(req.headers.id));
      if (req.headers.id === 'b') res.end('b done');
    });
    const first = new FakeResponse();
    handler(new FakeRequest({ id: 'a' }), first);
    const second = new FakeResponse();
    handler(new FakeRequest({ id: 'b' }), second);
    expect(ran).toEqual(['a']);
    first.end('a done');
    first.close(); // the answer is done: the slot frees
    await flush();
    expect([ran, second.body]).toEqual([['a', 'b'], 'b done']);
  });

  it('a handler that throws: reported, 500 "internal error"; after the head, the connection is destroyed', async () => {
    const reported: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 2, onHandlerError: (error) => reported.push(error) });
    const bug = new TypeError('x is not a function');
    const res = new FakeResponse();
    shedding.node(() => {
      throw bug;
    })(new FakeRequest(), res);
    expect([res.status, res.headers, res.body, reported]).toEqual([500, { 'content-type': 'text/plain; charset=utf-8' }, 'internal error\n', [bug]]);
    const late = new FakeResponse();
    shedding.node(async (_req, r) => {
      r.write('partial');
      throw bug;
    })(new FakeRequest(), late);
    await flush();
    expect([late.destroyed, late.body]).toEqual([1, undefined]);
  });

  it('a downstream give-up: its status and "downstream unavailable"; after the head, destroyed; counted', async () => {
    const shedding = loadShedder({ maxInFlight: 2 });
    const res = new FakeResponse();
    shedding.node(async () => {
      throw new RetryError('exhausted', 3, { status: 429 });
    })(new FakeRequest(), res);
    await flush();
    expect([res.status, res.body, res.headers?.['x-herdless-retry']]).toEqual([429, 'downstream unavailable\n', 'no']);
    const late = new FakeResponse();
    shedding.node(async (_req, r) => {
      r.write('partial');
      throw new RetryError('exhausted', 3, { status: 503 });
    })(new FakeRequest(), late);
    await flush();
    expect([late.destroyed, late.status]).toEqual([1, undefined]);
    expect(shedding.stats().givenUp).toBe(2);
  });

  it('a handler that returns nothing (it answered synchronously) holds its slot until the response closes', () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    const res = new FakeResponse();
    shedding.node((_req, r) => void r.end('ok'))(new FakeRequest(), res);
    expect(shedding.stats().inFlight).toBe(1);
    res.close();
    expect(shedding.stats().inFlight).toBe(0);
  });

  it('a handler that settles before its response ends keeps the slot until the response closes', async () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    const res = new FakeResponse();
    shedding.node(async () => {})(new FakeRequest(), res);
    await flush();
    expect(shedding.stats().inFlight).toBe(1);
    res.end('later');
    res.close();
    expect(shedding.stats().inFlight).toBe(0);
  });

  it('handlers that are not functions are refused, naming the wrapper', () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    const node = invalidOption(() => shedding.node(1 as never));
    expect([node.message.startsWith('loadShedder.node:'), node.requirement]).toEqual([true, 'must be a function (req, res)']);
    const fetch = invalidOption(() => shedding.fetch('x' as never));
    expect([fetch.message.startsWith('loadShedder.fetch:'), fetch.requirement]).toEqual([true, 'must be a function (request) => Response']);
  });
});

describe('node(): the client leaves', () => {
  it('the signal aborts with an AbortError that says why; the slot is held until the handler settles', async () => {
    const clock = new ManualClock();
    const reported: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 1, clock, maxHoldAfterCloseMs: 5000, onHandlerError: (e) => reported.push(e) });
    const work = deferred();
    let signal: AbortSignal | undefined;
    const req = new FakeRequest();
    const res = new FakeResponse();
    shedding.node((_req, _res, context) => {
      signal = context.signal;
      return work.promise;
    })(req, res);
    expect(requestSignal(req)).toBe(signal);
    res.close(); // the client left, the response not ended
    expect(signal!.aborted).toBe(true);
    expect([(signal!.reason as DOMException).name, (signal!.reason as DOMException).message]).toEqual(['AbortError', 'herdless/server: the client closed the connection']);
    expect([shedding.stats().inFlight, clock.pending]).toEqual([1, 1]);
    work.reject(signal!.reason); // the handler stopped on the signal
    await flush();
    // Nothing to answer, nothing to report; the slot and its hold timer are gone.
    expect([shedding.stats().inFlight, clock.pending, reported, res.body, res.status]).toEqual([0, 0, [], undefined, undefined]);
  });

  it('a handler that settles after its client left frees the slot at once', async () => {
    const clock = new ManualClock();
    const shedding = loadShedder({ maxInFlight: 1, clock });
    const work = deferred();
    const res = new FakeResponse();
    shedding.node(() => work.promise)(new FakeRequest(), res);
    res.close();
    work.resolve();
    await flush();
    expect([shedding.stats().inFlight, clock.pending]).toEqual([0, 0]);
  });

  it('a handler that stops without ending its response frees the slot maxHoldAfterCloseMs after the client left', async () => {
    const clock = new ManualClock();
    const shedding = loadShedder({ maxInFlight: 1, clock, maxHoldAfterCloseMs: 5000 });
    const res = new FakeResponse();
    shedding.middleware(new FakeRequest(), res, () => {});
    res.close();
    await clock.advance(4999);
    expect(shedding.stats().inFlight).toBe(1);
    await clock.advance(1);
    expect(shedding.stats().inFlight).toBe(0);
  });

  it('a route that ends its response after its client left frees the slot then, and the hold timer goes', () => {
    const clock = new ManualClock();
    const shedding = loadShedder({ maxInFlight: 1, clock });
    const res = new FakeResponse();
    shedding.middleware(new FakeRequest(), res, () => {});
    res.close();
    expect(clock.pending).toBe(1);
    res.end();
    expect([shedding.stats().inFlight, clock.pending]).toEqual([0, 0]);
  });

  it('a handler failing for another reason after its client left is still reported', async () => {
    const reported: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 1, clock: new ManualClock(), onHandlerError: (e) => reported.push(e) });
    const work = deferred();
    const res = new FakeResponse();
    shedding.node(() => work.promise)(new FakeRequest(), res);
    res.close();
    const bug = new RangeError('bad index');
    work.reject(bug);
    await flush();
    expect(reported).toEqual([bug]);
  });

  it('a failure named AbortError before any client left is an ordinary failure', async () => {
    const reported: unknown[] = [];
    const shedding = loadShedder({ maxInFlight: 1, onHandlerError: (e) => reported.push(e) });
    const res = new FakeResponse();
    const abort = new DOMException('timed out', 'AbortError');
    shedding.node(async () => {
      throw abort;
    })(new FakeRequest(), res);
    await flush();
    expect([reported, res.status]).toEqual([[abort], 500]);
  });
});

describe('errorHandler (express)', () => {
  it('a route stopped by its signal after its client left ends quietly; other failures go to next() or become the give-up answer', () => {
    const clock = new ManualClock();
    const shedding = loadShedder({ maxInFlight: 2, clock });
    const req = new FakeRequest();
    const res = new FakeResponse();
    shedding.middleware(req, res, () => {});
    res.close();
    const signal = requestSignal(req)!;
    const next = vi.fn();
    shedding.errorHandler(signal.reason, req, res, next);
    expect([res.writableEnded, next.mock.calls.length]).toEqual([true, 0]);
    // Not admitted by a shedder: no signal, so even an AbortError goes on.
    const other = new FakeResponse();
    const abort = new DOMException('x', 'AbortError');
    shedding.errorHandler(abort, new FakeRequest(), other, next);
    expect(next).toHaveBeenCalledWith(abort);
    // A give-up: answered here.
    const gaveUp = new FakeResponse();
    shedding.errorHandler(new RetryError('exhausted', 2, { status: 503 }), new FakeRequest(), gaveUp, next);
    expect([gaveUp.status, gaveUp.body]).toEqual([503, 'downstream unavailable\n']);
    expect(shedding.stats().givenUp).toBe(1);
  });

  it('an abort error from a request whose client is still there goes to next()', () => {
    const shedding = loadShedder({ maxInFlight: 2 });
    const req = new FakeRequest();
    shedding.middleware(req, new FakeResponse(), () => {});
    const next = vi.fn();
    const abort = new DOMException('x', 'AbortError');
    shedding.errorHandler(abort, req, new FakeResponse(), next);
    expect(next).toHaveBeenCalledWith(abort);
  });
});

describe('fetch()', () => {
  it('a shed request gets 503 "overloaded"; a thrown give-up "downstream unavailable"', async () => {
    const shedding = loadShedder({ maxInFlight: 1 });
    const hold = deferred<Response>();
    const handler = shedding.fetch((request) => (request.url.endsWith('/hold') ? hold.promise : Promise.reject(new RetryError('exhausted', 2, { status: 502 }))));
    const held = handler(new Request('http://a/hold'));
    const shed = await handler(new Request('http://a/x'));
    expect([shed.status, await shed.text()]).toEqual([503, 'overloaded\n']);
    hold.resolve(new Response('ok'));
    await held;
    const failed = await handler(new Request('http://a/x'));
    expect([failed.status, await failed.text()]).toEqual([502, 'downstream unavailable\n']);
  });

  it('a queued request whose client aborts leaves the queue (abandoned)', async () => {
    const shedding = loadShedder({ maxInFlight: 1, maxQueue: 1, clock: new ManualClock() });
    const hold = deferred<Response>();
    const handler = shedding.fetch(() => hold.promise);
    void handler(new Request('http://a/1'));
    const controller = new AbortController();
    void handler(new Request('http://a/2', { signal: controller.signal }));
    await flush();
    expect(shedding.stats().queued).toBe(1);
    controller.abort();
    expect(shedding.stats()).toMatchObject({ queued: 0, abandoned: 1 });
    controller.signal.dispatchEvent(new Event('abort')); // once: a second event counts nothing
    expect(shedding.stats().abandoned).toBe(1);
    hold.resolve(new Response('ok'));
  });
});
