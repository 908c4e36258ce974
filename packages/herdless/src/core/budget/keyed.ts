import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';
import type { RetryBudget } from './budget.js';

/** Options of {@link keyedBudgets}. */
export interface KeyedBudgetsOptions {
  /**
   * The most budgets kept; past it the least recently used one is dropped (its target starts
   * afresh, with a new budget, if it comes back). Default 1000. Integer ≥ 1.
   */
  maxKeys?: number | undefined;
}

/** One budget per target, made on first use, least recently used dropped past `maxKeys`. */
export interface KeyedBudgets<B extends RetryBudget = RetryBudget> {
  /** The budget of `key` (a host, `host:port` or service name), made by the factory on first use. */
  get(key: string): B;
  /** Whether `key` has a budget now (does not count as a use). */
  has(key: string): boolean;
  /** Drops `key`'s budget; true if there was one. */
  delete(key: string): boolean;
  /** Drops every budget. */
  clear(): void;
  /** How many budgets are kept (≤ `maxKeys`). */
  readonly size: number;
  /** The most budgets kept. */
  readonly maxKeys: number;
  /** The keys, least recently used first. */
  keys(): IterableIterator<string>;
}

class Keyed<B extends RetryBudget> implements KeyedBudgets<B> {
  // A Map iterates in insertion order; re-inserting a key on use keeps it LRU-first.
  private readonly map = new Map<string, B>();
  private lastKey: string | undefined;
  constructor(
    private readonly factory: (key: string) => B,
    readonly maxKeys: number,
  ) {}
  get(key: string): B {
    const found = this.map.get(key);
    if (found !== undefined) {
      // The common case — the same target again — skips the re-insertion.
      // Stryker disable next-line ConditionalExpression: lastKey, when set, is the last key of the map (every get() that finds or makes a key sets it), so re-inserting it leaves the order as it is.
      if (key !== this.lastKey) {
        this.map.delete(key);
        this.map.set(key, found);
        this.lastKey = key;
      }
      return found;
    }
    const made = this.factory(key);
    this.map.set(key, made);
    this.lastKey = key;
    if (this.map.size > this.maxKeys) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
    }
    return made;
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
  delete(key: string): boolean {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a stale lastKey is harmless: get() takes its shortcut only for a key it finds, and a deleted key is found again only after get() re-adds it and sets lastKey.
    if (key === this.lastKey) this.lastKey = undefined;
    return this.map.delete(key);
  }
  clear(): void {
    this.map.clear();
    this.lastKey = undefined;
  }
  get size(): number {
    return this.map.size;
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
}

/**
 * Budgets per target. gRFC A6 keeps one retry throttle per server name, and a client talking to
 * several services should not let one failing service use up the budget of the others: this gives
 * each key (host or service name) its own budget, made by `factory` on first use. Budgets are
 * shared by every call to the same key; attempt counts stay per call. At most `maxKeys` budgets
 * are kept — the least recently used is dropped first, so memory stays bounded however many
 * distinct targets pass through. A dropped target that returns gets a fresh (full) budget, so keep
 * `maxKeys` above the number of targets in use.
 *
 * @throws InvalidOptionError when `factory` is not a function or `maxKeys` is not an integer ≥ 1.
 * @example
 * ```ts
 * const perHost = keyedBudgets(() => retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 }));
 * await retry(call, { budget: perHost.get(new URL(url).host) });
 * ```
 */
export function keyedBudgets<B extends RetryBudget>(factory: (key: string) => B, options?: KeyedBudgetsOptions): KeyedBudgets<B> {
  const owner = 'keyedBudgets';
  if (typeof factory !== 'function') throw new InvalidOptionError(owner, 'factory', factory, 'must be a function');
  const o = objectOption(owner, 'options', options, ['maxKeys']);
  const maxKeys = numberOption(owner, 'maxKeys', o.maxKeys, 1000, { min: 1, integer: true });
  return new Keyed(factory, maxKeys);
}
