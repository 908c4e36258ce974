/**
 * herdless/http's small parts, one rule at a time and without a socket: which request bodies can be
 * sent again, the status error's words, retryInfo on anything, idempotency keys with and without
 * randomUUID, and the link between an attempt's signal and the caller's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpStatusError, newIdempotencyKey, retryInfo, throwIfNotOk } from 'herdless/http';
import { AttemptLink } from '../src/http/attempt-link.js';
import { bodyKind } from '../src/http/body.js';
import { invalidOption } from './support/invalid-option.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('bodyKind: what a retry can send again', () => {
  it.each([
    [null, 'none'],
    [undefined, 'none'],
    ['text', 'replayable'],
    [42, 'replayable'],
    [new Uint8Array(2), 'replayable'],
    [new DataView(new ArrayBuffer(2)), 'replayable'],
    [new ArrayBuffer(2), 'replayable'],
    [new URLSearchParams('a=1'), 'replayable'],
    [new Blob(['x']), 'replayable'],
    [new FormData(), 'replayable'],
    [new ReadableStream(), 'stream'],
    [{ [Symbol.asyncIterator]: async function* () {} }, 'stream'],
    [{ getReader: () => ({}) }, 'stream'], // a stream that is not async iterable (older browsers)
    [{ toString: () => 'x' }, 'replayable'],
    [{ getReader: 'not a function' }, 'replayable'],
  ])('%o → %s', (body, kind) => {
    expect(bodyKind(body)).toBe(kind);
  });
});

describe('HttpStatusError and throwIfNotOk', () => {
  it('says the status and its text, and keeps a hint only when there is one', () => {
    const withText = new HttpStatusError({ status: 503, statusText: 'Service Unavailable' }, 2000);
    expect([withText.message, withText.name, withText.status, withText.retryAfterMs]).toEqual(['HTTP 503 Service Unavailable', 'HttpStatusError', 503, 2000]);
    const bare = new HttpStatusError({ status: 500, statusText: '' });
    expect(bare.message).toBe('HTTP 500');
    expect(bare.retryAfterMs).toBeUndefined();
  });

  it('throwIfNotOk refuses what is not a Response, naming it', () => {
    for (const bad of [null, 5, { status: '503', headers: new Headers() }, { status: 503 }, { status: 503, headers: {} }]) {
      const error = invalidOption(() => throwIfNotOk(bad as never));
      expect([error.field, error.requirement]).toEqual(['response', 'must be a fetch Response']);
      expect(error.message.startsWith('throwIfNotOk:')).toBe(true);
    }
    const ok = new Response('fine');
    expect(throwIfNotOk(ok)).toBe(ok);
  });
});

describe('retryInfo', () => {
  it('is undefined for anything it did not record, primitives and null included', () => {
    expect(retryInfo(new Response('x'))).toBeUndefined();
    expect(retryInfo(null as never)).toBeUndefined();
    expect(retryInfo('text' as never)).toBeUndefined();
    expect(retryInfo(7 as never)).toBeUndefined();
  });
});

describe('newIdempotencyKey', () => {
  const UUID = /^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/;
  it('a quoted version 4 UUID from randomUUID', () => {
    vi.stubGlobal('crypto', { randomUUID: () => '8e03978e-40d5-43e8-bc93-6894a57f9324', getRandomValues: () => { throw new Error('not this one'); } });
    expect(newIdempotencyKey()).toBe('"8e03978e-40d5-43e8-bc93-6894a57f9324"');
  });

  it('without randomUUID: built from getRandomValues, version and variant bits set', () => {
    vi.stubGlobal('crypto', { getRandomValues: (bytes: Uint8Array) => bytes.fill(0xff) });
    expect(newIdempotencyKey()).toBe('"ffffffff-ffff-4fff-bfff-ffffffffffff"');
    vi.stubGlobal('crypto', { randomUUID: 'no', getRandomValues: (bytes: Uint8Array) => bytes.fill(0) });
    const key = newIdempotencyKey();
    expect(key).toBe('"00000000-0000-4000-8000-000000000000"');
    expect(key).toMatch(UUID);
  });

  it('without Web Crypto at all: an error that says what to pass instead', () => {
    vi.stubGlobal('crypto', undefined);
    expect(() => newIdempotencyKey()).toThrow('herdless: no Web Crypto (crypto.getRandomValues) to generate an idempotency key; pass idempotencyKey: () => yourKey');
    vi.stubGlobal('crypto', { getRandomValues: 'no' });
    expect(() => newIdempotencyKey()).toThrow(/no Web Crypto/);
  });
});

describe('AttemptLink', () => {
  it('an attempt signal already aborted: the link is aborted with its reason', () => {
    const attempt = new AbortController();
    attempt.abort('too late');
    expect(new AttemptLink(attempt.signal).signal.reason).toBe('too late');
  });

  it('follows the attempt while it runs, and stops listening once it settled', () => {
    const attempt = new AbortController();
    const link = new AttemptLink(attempt.signal);
    link.settled();
    attempt.abort('after');
    expect(link.signal.aborted).toBe(false);
    const running = new AbortController();
    const live = new AttemptLink(running.signal);
    running.abort('during');
    expect(live.signal.reason).toBe('during');
  });

  it('a returned response\'s body follows the caller: aborted at once if the caller is, else when it aborts', () => {
    const caller = new AbortController();
    caller.abort('caller gone');
    const link = new AttemptLink(new AbortController().signal);
    link.followCaller(caller.signal, {});
    expect(link.signal.reason).toBe('caller gone');
    const later = new AbortController();
    const following = new AttemptLink(new AbortController().signal);
    following.followCaller(later.signal, {});
    expect(following.signal.aborted).toBe(false);
    later.abort('now');
    expect(following.signal.reason).toBe('now');
  });

  it('released (the response collected): the caller\'s abort no longer reaches it', () => {
    const caller = new AbortController();
    const link = new AttemptLink(new AbortController().signal);
    link.followCaller(caller.signal, {});
    link.release(caller.signal);
    caller.abort('late');
    expect(link.signal.aborted).toBe(false);
  });
});
