// Keyed breakers' rules one by one, in virtual time and without a socket: the defaults, the idle
// sweep at its exact boundary, least-recently-used eviction, what counts as a use, the adapters'
// `breaker` option and the host a request URL is keyed by. (breaker-keyed.test.ts drives the same
// registry through the HTTP and gRPC adapters against loopback servers.)
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, consecutiveFailures, keyedBreakers, type CircuitBreaker } from 'herdless';
import { breakerOption, hostKey } from '../src/runtime/keyed-breakers.js';
import { invalidOption } from './support/invalid-option.js';

const down = (): Error => Object.assign(new Error('down'), { status: 503 });

/** Breakers that one failure opens for 10 minutes, and a log of the keys the factory was asked for. */
function registry(clock: ManualClock, options: { maxKeys?: number; idleMs?: number } = {}) {
  const made: string[] = [];
  const breakers = keyedBreakers(
    (key) => {
      made.push(key);
      return circuitBreaker({ name: key, clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 600_000 });
    },
    { clock, ...options },
  );
  return { breakers, made };
}

describe('keyedBreakers: defaults and bounds', () => {
  it('keeps 1000 breakers and drops idle ones after 600 000 ms by default', () => {
    const breakers = keyedBreakers(() => circuitBreaker());
    expect(breakers.maxKeys).toBe(1000);
    expect(breakers.idleMs).toBe(600_000);
    expect(breakers.size).toBe(0);
  });

  it('accepts maxKeys 1, idleMs 2^31 − 1 and idleMs Infinity', () => {
    expect(keyedBreakers(() => circuitBreaker(), { maxKeys: 1 }).maxKeys).toBe(1);
    expect(keyedBreakers(() => circuitBreaker(), { idleMs: 2 ** 31 - 1 }).idleMs).toBe(2 ** 31 - 1);
    expect(keyedBreakers(() => circuitBreaker(), { idleMs: Infinity }).idleMs).toBe(Infinity);
  });

  it.each([
    ['a fractional maxKeys', { maxKeys: 1.5 }, 'maxKeys', 'keyedBreakers: maxKeys must be an integer, got 1.5'],
    ['idleMs 2^31', { idleMs: 2 ** 31 }, 'idleMs', 'keyedBreakers: idleMs must be ≤ 2147483647 or Infinity, got 2147483648'],
    ['a clock whose now is not a function', { clock: { now: 5 } }, 'clock', 'keyedBreakers: clock must be an object with a now() method, got an object (Object)'],
    ['a clock that is a number', { clock: 5 }, 'clock', 'keyedBreakers: clock must be an object with a now() method, got 5'],
  ])('refuses %s with a message naming it', (_name, options, field, message) => {
    const error = invalidOption(() => keyedBreakers(() => circuitBreaker(), options as never));
    expect(error.field).toBe(field);
    expect(error.message).toBe(message);
  });

  it.each([
    ['null', null],
    ['an object without tryAcquire', { execute: () => undefined }],
    ['an object without execute', { tryAcquire: () => undefined }],
  ])('get() refuses a factory that returns %s, naming the factory', (_name, returned) => {
    const error = invalidOption(() => keyedBreakers(() => returned as never).get('a'));
    expect(error.field).toBe('factory');
    expect(error.message).toMatch(/^keyedBreakers: factory must return a CircuitBreaker \(from circuitBreaker\(\)\), got /);
  });

  it('get() with a clock that reads NaN is refused, naming clock.now()', () => {
    const breakers = keyedBreakers(() => circuitBreaker(), { clock: { now: () => NaN } });
    expect(invalidOption(() => breakers.get('a')).field).toBe('clock.now()');
    expect(breakers.size).toBe(0);
  });
});

describe('keyedBreakers: what is kept', () => {
  it('makes one breaker per key, on first use only, and hands the same one back', () => {
    const { breakers, made } = registry(new ManualClock(0));
    const a = breakers.get('a');
    expect(breakers.get('a')).toBe(a);
    expect(breakers.get('b')).not.toBe(a);
    expect(made).toEqual(['a', 'b']);
    expect(a.name).toBe('a');
  });

  it('past maxKeys, the least recently used key goes: a get() is a use, has() and peek() are not', () => {
    const { breakers } = registry(new ManualClock(0), { maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) breakers.get(key);
    breakers.get('a'); // a use: 'b' is now the least recently used
    expect(breakers.has('b')).toBe(true);
    expect(breakers.peek('b')?.name).toBe('b');
    breakers.get('d');
    expect([...breakers.keys()]).toEqual(['c', 'a', 'd']);
    expect(breakers.size).toBe(3);
    expect(breakers.peek('b')).toBeUndefined();
    expect(breakers.has('b')).toBe(false);
  });

  it('with maxKeys breakers and no more, nothing is dropped', () => {
    const { breakers } = registry(new ManualClock(0), { maxKeys: 2 });
    breakers.get('a');
    breakers.get('b');
    expect([...breakers.keys()]).toEqual(['a', 'b']);
  });

  it('a closed breaker is dropped once unused for idleMs exactly, not 1 ms before', async () => {
    const clock = new ManualClock(0);
    const { breakers, made } = registry(clock, { idleMs: 1000 });
    breakers.get('a');
    await clock.advance(999);
    breakers.get('b');
    expect([...breakers.keys()]).toEqual(['a', 'b']);
    await clock.advance(1);
    breakers.get('b'); // 'a' has been idle 1000 ms: dropped; 'b' was used 1 ms ago
    expect([...breakers.keys()]).toEqual(['b']);
    breakers.get('a');
    expect(made).toEqual(['a', 'b', 'a']); // it comes back new
  });

  it('using a key resets its idle time', async () => {
    const clock = new ManualClock(0);
    const { breakers } = registry(clock, { idleMs: 1000 });
    breakers.get('a');
    await clock.advance(600);
    breakers.get('a');
    await clock.advance(600);
    breakers.get('b');
    expect([...breakers.keys()]).toEqual(['a', 'b']);
  });

  it('an open breaker is kept however long it is idle, and holds the sweep up behind it', async () => {
    const clock = new ManualClock(0);
    const { breakers } = registry(clock, { idleMs: 1000 });
    await breakers.get('sick').execute(() => Promise.reject(down())).catch(() => undefined);
    breakers.get('idle');
    await clock.advance(5000);
    breakers.get('new');
    expect([...breakers.keys()]).toEqual(['sick', 'idle', 'new']);
    expect(breakers.peek('sick')!.state).toBe('open');
  });

  it('with idleMs Infinity nothing is ever dropped for idleness', async () => {
    const clock = new ManualClock(0);
    const { breakers } = registry(clock, { idleMs: Infinity });
    breakers.get('a');
    await clock.advance(1e12);
    breakers.get('b');
    expect([...breakers.keys()]).toEqual(['a', 'b']);
  });

  it('delete() and clear() drop breakers and say whether there was one', () => {
    const { breakers } = registry(new ManualClock(0));
    breakers.get('a');
    breakers.get('b');
    expect(breakers.delete('a')).toBe(true);
    expect(breakers.delete('a')).toBe(false);
    expect([...breakers.keys()]).toEqual(['b']);
    breakers.clear();
    expect(breakers.size).toBe(0);
  });
});

describe("the adapters' breaker option", () => {
  it('is undefined without a breaker', () => {
    expect(breakerOption('withRetry', undefined)).toBeUndefined();
  });

  it('a CircuitBreaker is shared by every key', () => {
    const shared = circuitBreaker();
    const lookup = breakerOption('withRetry', shared)!;
    expect(lookup.keyed).toBe(false);
    expect(lookup.get('a.example')).toBe(shared);
    expect(lookup.get('b.example')).toBe(shared);
  });

  it('keyed breakers give one per key', () => {
    const breakers = keyedBreakers((key) => circuitBreaker({ name: key }));
    const lookup = breakerOption('withRetry', breakers)!;
    expect(lookup.keyed).toBe(true);
    expect(lookup.get('a.example').name).toBe('a.example');
    expect(lookup.get('a.example')).toBe(breakers.peek('a.example'));
    expect(breakers.size).toBe(1);
  });

  it.each([
    ['null', null],
    ['a function', () => undefined],
    ['an object with execute only', { execute: () => undefined }],
    ['an object with get and no maxKeys', { get: () => undefined }],
    ['an object with a maxKeys and no get', { maxKeys: 5 }],
  ])('refuses %s, naming the owner and the field', (_name, value) => {
    const error = invalidOption(() => breakerOption('withRetry', value));
    expect(error.field).toBe('breaker');
    expect(error.message).toMatch(/^withRetry: breaker must be a CircuitBreaker \(circuitBreaker\(\)\) or KeyedBreakers \(keyedBreakers\(\)\), got /);
  });
});

describe('the key of a request URL', () => {
  const g = globalThis as { location?: unknown };
  afterEach(() => {
    delete g.location;
  });

  it.each([
    ['https://API.Example.com/users?id=1', 'api.example.com'],
    ['http://127.0.0.1:8080/x', '127.0.0.1:8080'],
    ['https://user:secret@api.example.com:8443/x#frag', 'api.example.com:8443'],
    ['https://api.example.com?x=1', 'api.example.com'],
    ['https://api.example.com#top', 'api.example.com'],
    ['grpc+tls://Svc.Internal:443', 'svc.internal:443'],
    ['http://[::1]:80/', '[::1]:80'],
  ])('%s is keyed by %s', (url, key) => {
    expect(hostKey(url)).toBe(key);
  });

  it("a relative URL is keyed by the page's host, lower-cased", () => {
    g.location = { host: 'App.Example.org:3000' };
    expect(hostKey('/api/users')).toBe('app.example.org:3000');
    expect(hostKey('//cdn.example/x')).toBe('app.example.org:3000');
  });

  it('a relative URL with no page (or a page without a string host) has the empty key', () => {
    expect(hostKey('/api/users')).toBe('');
    g.location = { host: 5 };
    expect(hostKey('/api/users')).toBe('');
  });

  it('a scheme must start with a letter and hold only letters, digits, +, . and -', () => {
    g.location = { host: 'page' };
    expect(hostKey('1http://a.example/')).toBe('page');
    expect(hostKey('ht_tp://a.example/')).toBe('page');
    expect(hostKey('x-y.z+w://A.example/')).toBe('a.example');
  });
});

// The factory may return a breaker it keeps elsewhere (one per tenant, say): the registry holds it as given.
it('keyedBreakers keeps the breaker its factory returned, not a copy', () => {
  const mine: CircuitBreaker = circuitBreaker({ name: 'mine' });
  expect(keyedBreakers(() => mine).get('x')).toBe(mine);
});

describe('keyedBreakers: what it refuses, word for word', () => {
  it.each([
    ['a factory that is not a function', () => keyedBreakers('x' as never), 'keyedBreakers: factory must be a function returning a CircuitBreaker for a key, got "x"'],
    ['options that are a number', () => keyedBreakers(() => circuitBreaker(), 5 as never), 'keyedBreakers: options must be an object, got 5'],
    ['idleMs 0', () => keyedBreakers(() => circuitBreaker(), { idleMs: 0 }), 'keyedBreakers: idleMs must be > 0, got 0'],
    ['a negative idleMs', () => keyedBreakers(() => circuitBreaker(), { idleMs: -1 }), 'keyedBreakers: idleMs must be > 0, got -1'],
    ['a clock that is a function with a now()', () => keyedBreakers(() => circuitBreaker(), { clock: Object.assign(() => 0, { now: () => 0 }) as never }), 'keyedBreakers: clock must be an object with a now() method, got a function'],
    ['a key that is not a string', () => keyedBreakers(() => circuitBreaker()).get(5 as never), 'keyedBreakers: key must be a string (a host or a server name), got 5'],
  ])('%s', (_name, make, message) => {
    expect(invalidOption(make).message).toBe(message);
  });
});
