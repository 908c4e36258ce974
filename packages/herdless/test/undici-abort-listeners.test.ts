/**
 * The undici interceptor listens to an attempt's signal only while it has not decided on the
 * attempt's response: a response delivered to the caller (its body still streaming) or discarded
 * leaves no abort listener behind, however long its body takes.
 */
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { constantBackoff } from 'herdless';
import { retryInterceptor } from 'herdless/undici';

/** Abort listeners registered and not yet removed, on any signal. */
function abortListeners(): { live: () => number } {
  const live = new Map<EventTarget, Set<unknown>>();
  const add = vi.spyOn(EventTarget.prototype, 'addEventListener');
  const remove = vi.spyOn(EventTarget.prototype, 'removeEventListener');
  add.mockImplementation(function (this: EventTarget, type, listener, options) {
    if (type === 'abort') {
      if (!live.has(this)) live.set(this, new Set());
      live.get(this)!.add(listener);
    }
    return Reflect.apply(original.add, this, [type, listener, options]) as void;
  });
  remove.mockImplementation(function (this: EventTarget, type, listener, options) {
    if (type === 'abort') live.get(this)?.delete(listener);
    return Reflect.apply(original.remove, this, [type, listener, options]) as void;
  });
  return { live: () => [...live.values()].reduce((a, s) => a + s.size, 0) };
}
const original = { add: EventTarget.prototype.addEventListener, remove: EventTarget.prototype.removeEventListener };

afterEach(() => {
  vi.restoreAllMocks();
});

/** A dispatcher that answers each request with the next status, sends one chunk and never ends the body. */
function endlessBodies(statuses: number[]): Dispatcher.Dispatch {
  let n = 0;
  return (_opts, handler) => {
    const status = statuses[n++] ?? 200;
    const controller = { pause: () => undefined, resume: () => undefined, abort: () => undefined, paused: false, aborted: false, reason: null } as unknown as Dispatcher.DispatchController;
    queueMicrotask(() => {
      handler.onRequestStart?.(controller, {});
      handler.onResponseStart?.(controller, status, { 'content-type': 'text/plain' }, 'x');
      handler.onResponseData?.(controller, Buffer.from('part of a body that never ends'));
    });
    return true;
  };
}

async function call(statuses: number[]): Promise<number> {
  const dispatch = retryInterceptor({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) })(endlessBodies(statuses));
  return new Promise<number>((resolve, reject) => {
    dispatch({ origin: 'http://api.invalid', path: '/', method: 'GET' }, {
      onResponseStart: (_c, status) => resolve(status),
      onResponseError: (_c, error) => reject(error),
    });
  });
}

describe('undici interceptor: abort listeners', () => {
  it('a 200 delivered with its body still streaming: no listener left on the attempt signal', async () => {
    const listeners = abortListeners();
    expect(await call([200])).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(listeners.live()).toBe(0);
  });

  it('two discarded 503s (bodies never ending), then a 200: no listener left for any attempt', async () => {
    const listeners = abortListeners();
    expect(await call([503, 503, 200])).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(listeners.live()).toBe(0);
  });
});
