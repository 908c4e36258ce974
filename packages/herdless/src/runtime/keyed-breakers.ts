import { InvalidOptionError } from '../core/errors.js';
import { checkedNow, type Clock } from '../core/time.js';
import { numberOption, objectOption } from '../core/validate.js';
import type { CircuitBreaker } from './breaker.js';
import { systemClock } from './system-clock.js';

/** Options of {@link keyedBreakers}. */
export interface KeyedBreakersOptions {
  /**
   * The most breakers kept. A new key past it drops the least recently used breaker, whatever its
   * state (its key starts afresh, closed, if it comes back), so memory stays bounded however many
   * distinct keys pass through. Default 1000. An integer ≥ 1.
   */
  maxKeys?: number | undefined;
  /**
   * A breaker not used (no `get()`) for this long is dropped — unless it is not closed (open,
   * half-open or isolated: it still has something to say about its key). Checked lazily at each
   * `get()`, nothing is scheduled. Default 600 000 (10 minutes). (0, 2^31 − 1] ms, or `Infinity`
   * to keep breakers until `maxKeys` pushes them out.
   */
  idleMs?: number | undefined;
  /** The monotonic ms clock that measures idleness. Default `systemClock`. */
  clock?: Clock | undefined;
}

/**
 * One circuit breaker per key (a host, a server name), made on first use by a factory, with a
 * bound on how many are kept; see {@link keyedBreakers}. The HTTP adapters (`withRetry`,
 * `retryInterceptor`, `retryAdapter`) take one as their `breaker` option and key it by the
 * request's host; the gRPC interceptors key it by server name.
 */
export interface KeyedBreakers {
  /** The breaker of `key`, made by the factory on first use; counts as a use. */
  get(key: string): CircuitBreaker;
  /** Whether `key` has a breaker now (not a use). */
  has(key: string): boolean;
  /** The breaker of `key` if there is one, without making one or counting a use. */
  peek(key: string): CircuitBreaker | undefined;
  /** Drops `key`'s breaker; true if there was one. */
  delete(key: string): boolean;
  /** Drops every breaker. */
  clear(): void;
  /** How many breakers are kept (≤ `maxKeys`). */
  readonly size: number;
  /** The most breakers kept. */
  readonly maxKeys: number;
  /** How long an unused closed breaker is kept, in ms. */
  readonly idleMs: number;
  /** The keys, least recently used first. */
  keys(): IterableIterator<string>;
}

interface Entry {
  readonly breaker: CircuitBreaker;
  lastUsed: number;
}

const OWNER = 'keyedBreakers';

class Keyed implements KeyedBreakers {
  // A Map iterates in insertion order; re-inserting a key on use keeps the least recently used first,
  // and so also the longest idle: the idle sweep only ever looks at the front.
  readonly #map = new Map<string, Entry>();

  constructor(
    private readonly factory: (key: string) => CircuitBreaker,
    readonly maxKeys: number,
    readonly idleMs: number,
    private readonly clock: Clock,
  ) {}

  get(key: string): CircuitBreaker {
    if (typeof key !== 'string') throw new InvalidOptionError(OWNER, 'key', key, 'must be a string (a host or a server name)');
    const now = checkedNow(this.clock, OWNER);
    const map = this.#map;
    const found = map.get(key);
    if (found !== undefined) {
      found.lastUsed = now;
      map.delete(key);
      map.set(key, found);
      this.#sweep(now);
      return found.breaker;
    }
    this.#sweep(now);
    const breaker = this.factory(key);
    if (typeof breaker !== 'object' || breaker === null || typeof breaker.execute !== 'function' || typeof breaker.tryAcquire !== 'function') {
      throw new InvalidOptionError(OWNER, 'factory', breaker, 'must return a CircuitBreaker (from circuitBreaker())');
    }
    map.set(key, { breaker, lastUsed: now });
    if (map.size > this.maxKeys) map.delete(map.keys().next().value as string);
    return breaker;
  }

  /**
   * Drops the idle breakers at the front. It stops at the first one still in use or not closed:
   * at most one look beyond what it drops, so a `get()` costs O(1) amortised. A breaker that is
   * not closed holds the sweep up until it closes or leaves; `maxKeys` bounds the memory meanwhile.
   */
  #sweep(now: number): void {
    const idleMs = this.idleMs;
    // Stryker disable next-line ConditionalExpression: with idleMs Infinity the loop below returns at its first entry (no age is ≥ Infinity); this only skips it.
    if (idleMs === Infinity) return;
    for (const [key, entry] of this.#map) {
      if (now - entry.lastUsed < idleMs || entry.breaker.state !== 'closed') return;
      this.#map.delete(key);
    }
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }
  peek(key: string): CircuitBreaker | undefined {
    return this.#map.get(key)?.breaker;
  }
  delete(key: string): boolean {
    return this.#map.delete(key);
  }
  clear(): void {
    this.#map.clear();
  }
  get size(): number {
    return this.#map.size;
  }
  keys(): IterableIterator<string> {
    return this.#map.keys();
  }
}

/**
 * Circuit breakers per key: an HTTP client talking to many hosts, or a gRPC client to many servers,
 * must not let one failing host open the breaker of all the others — yet must not keep a breaker
 * for every host it ever saw either. Each key gets its own breaker, made by `factory` on first
 * use (give it the key as its `name`, for telemetry); at most `maxKeys` are kept (the least
 * recently used goes first) and a closed breaker unused for `idleMs` is dropped. A dropped key
 * that comes back starts closed: keep `maxKeys` above the number of hosts in use at once.
 *
 * The same idea as Polly's and resilience4j's breaker registries, with the bound that a client
 * facing arbitrary hosts needs. Retry budgets have the same shape in `keyedBudgets()`.
 *
 * @throws InvalidOptionError when `factory` is not a function, `maxKeys` is not an integer ≥ 1,
 *   `idleMs` is out of range, or `clock` has no `now()`; `get()` throws one when the factory
 *   returns something other than a CircuitBreaker or the clock a non-finite reading.
 * @example
 * ```ts
 * const breakers = keyedBreakers((host) => circuitBreaker({ name: host, openDurationMs: 10_000 }), { maxKeys: 500 });
 * const api = withRetry(fetch, { breaker: breakers }); // one breaker per request host
 * await breakers.get('api.example.com').execute(() => fetch('https://api.example.com/health'));
 * ```
 */
export function keyedBreakers(factory: (key: string) => CircuitBreaker, options?: KeyedBreakersOptions): KeyedBreakers {
  if (typeof factory !== 'function') throw new InvalidOptionError(OWNER, 'factory', factory, 'must be a function returning a CircuitBreaker for a key');
  const o = objectOption(OWNER, 'options', options, ['maxKeys', 'idleMs', 'clock']);
  const maxKeys = numberOption(OWNER, 'maxKeys', o.maxKeys, 1000, { min: 1, integer: true });
  const idleMs = numberOption(OWNER, 'idleMs', o.idleMs, 600_000, { min: 0, minExclusive: true, allowInfinity: true });
  if (idleMs !== Infinity && idleMs > 2 ** 31 - 1) throw new InvalidOptionError(OWNER, 'idleMs', idleMs, 'must be ≤ 2147483647 or Infinity');
  const clock = o.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new InvalidOptionError(OWNER, 'clock', clock, 'must be an object with a now() method');
  }
  return new Keyed(factory, maxKeys, idleMs, clock);
}

/** @internal An adapter's breakers: one shared, or one per key. */
export interface BreakerLookup {
  /** True for keyed breakers (the adapter must know the key). */
  readonly keyed: boolean;
  /** The breaker for `key` (a host or a server name). */
  get(key: string): CircuitBreaker;
}

/**
 * @internal An adapter's `breaker` option: a CircuitBreaker (every request shares it), a
 * KeyedBreakers (one per key), or undefined (none).
 * @throws InvalidOptionError naming `owner` and `breaker` for anything else.
 */
export function breakerOption(owner: string, value: unknown): BreakerLookup | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null) {
    const v = value as Partial<CircuitBreaker & KeyedBreakers>;
    if (typeof v.execute === 'function' && typeof v.tryAcquire === 'function') {
      const single = value as CircuitBreaker;
      return { keyed: false, get: () => single };
    }
    if (typeof v.get === 'function' && typeof v.maxKeys === 'number') {
      const keyed = value as KeyedBreakers;
      return { keyed: true, get: (key) => keyed.get(key) };
    }
  }
  throw new InvalidOptionError(owner, 'breaker', value, 'must be a CircuitBreaker (circuitBreaker()) or KeyedBreakers (keyedBreakers())');
}

/**
 * @internal The key of a request URL for keyed breakers: its host (`host:port`, lower-cased). A
 * relative URL (in a browser) is keyed by the page's host.
 */
export function hostKey(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url);
  if (m !== null) return m[1]!.toLowerCase();
  const location = (globalThis as { location?: { host?: unknown } }).location;
  return typeof location?.host === 'string' ? location.host.toLowerCase() : '';
}
