import { HerdlessError } from '../core/errors.js';
import type { RetryBudget } from '../core/budget/budget.js';
import type { CommonSettings, RedisScriptClient } from './options.js';

/** A shared budget's decision did not get Redis's answer within `timeoutMs` (code `ERR_HERDLESS_REDIS_TIMEOUT`). */
export class RedisBudgetTimeoutError extends HerdlessError {
  constructor(key: string, timeoutMs: number) {
    super('ERR_HERDLESS_REDIS_TIMEOUT', `Redis did not answer for budget ${key} within ${timeoutMs} ms`);
    this.name = 'RedisBudgetTimeoutError';
  }
}

/** Counters of a shared budget's traffic with Redis, for monitoring (and the tests). */
export interface RedisBudgetStats {
  /** Decisions Redis answered. */
  sharedDecisions: number;
  /** Decisions the local budget answered (fallen back, or Redis failed during the decision). */
  localDecisions: number;
  /** Batches sent (successes, first tries, failures that led to no decision). */
  flushes: number;
  /** Times the budget fell back to its local budget. */
  fallbacks: number;
  /** Times it resumed sharing. */
  recoveries: number;
}

// The SHA1 of each script per client, learned with SCRIPT LOAD (no hashing code needed here).
const shas = /* @__PURE__ */ new WeakMap<RedisScriptClient, Map<string, string>>();
const LOADING = '';

type Timer = ReturnType<typeof setTimeout>;

interface Immediates {
  setImmediate?: (callback: () => void) => unknown;
  clearImmediate?: (handle: unknown) => void;
}

/**
 * Runs `callback` after the pending I/O of this event-loop turn has been read: `setImmediate`
 * (looked up at each call, as timers are), or a 0 ms timer where there is none. Returns how to cancel it.
 */
function afterIo(callback: () => void): () => void {
  const g = globalThis as Immediates;
  // Stryker disable next-line ConditionalExpression,StringLiteral,BlockStatement: a 0 ms timer set in the timers phase also runs after the next poll phase (the reply is read either way); setImmediate only saves the timer's 1 ms floor
  if (typeof g.setImmediate === 'function' && typeof g.clearImmediate === 'function') {
    const clear = g.clearImmediate;
    const handle = g.setImmediate(callback);
    // Stryker disable next-line ArrowFunction: a late check left to run finds the call settled (done() is false) and does nothing; cancelling it saves one callback
    return () => clear(handle);
  }
  const handle = setTimeout(callback, 0);
  // Stryker disable next-line ArrowFunction: as above
  return () => clearTimeout(handle);
}

function unref(timer: Timer): Timer {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/** Runs a hook as an observer: a throw becomes a process warning, never a failed call. */
function notify<E>(hook: ((event: E) => void) | undefined, event: E, name: string): void {
  if (hook === undefined) return;
  try {
    hook(event);
  } catch (error) {
    const proc = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } }).process;
    proc?.emitWarning?.(`herdless/redis: the ${name} hook threw: ${String(error)}`, { type: 'HerdlessWarning', code: 'HERDLESS_HOOK_FAILED' });
  }
}

/**
 * The machinery both shared budgets use: local batching of the success path, one script call per
 * decision with a timeout, the fall back to a per-process budget and the recovery.
 *
 * Every event also goes to `local`, a per-process budget of the same kind, so that when Redis
 * fails it already knows this process's recent traffic and can decide at once.
 *
 * Internal: subclasses say what a batch holds (`batchArgs`).
 */
export abstract class SharedBudget<L extends RetryBudget> implements RetryBudget {
  abstract readonly name: string;
  /** The Redis key of this budget. */
  readonly key: string;
  /** The server name it is kept for. */
  readonly server: string;
  /** The per-process budget that decides while Redis cannot. */
  readonly local: L;
  /** Traffic counters (see {@link RedisBudgetStats}). */
  readonly stats: RedisBudgetStats = { sharedDecisions: 0, localDecisions: 0, flushes: 0, fallbacks: 0, recoveries: 0 };
  private shared = true;
  private closed = false;
  private flushTimer: Timer | undefined;
  private probeTimer: Timer | undefined;
  private localSince = 0;

  protected constructor(
    /** @internal The checked options. */
    protected readonly settings: CommonSettings,
    private readonly script: string,
    local: L,
  ) {
    this.key = settings.key;
    this.server = settings.server;
    this.local = local;
  }

  /** `'shared'` while decisions go to Redis; `'local'` while fallen back. */
  get mode(): 'shared' | 'local' {
    return this.shared ? 'shared' : 'local';
  }

  /** Whether a batch waits to be sent. */
  protected abstract hasBatch(): boolean;
  /** The script's arguments for the batch (then emptied), deciding a retry or not. */
  protected abstract batchArgs(decide: boolean): (string | number)[];
  /** Forgets the batch (when falling back: the local budget has counted it). */
  protected abstract dropBatch(): void;

  abstract onAttempt(now: number, isRetry: boolean): void;
  abstract onSuccess(now: number, isRetry?: boolean): void;
  abstract onFailure(now: number, isTimeout?: boolean): void;

  /**
   * The process's own budget decides first, always: the shared budget is never laxer than a
   * per-process one, and a driver that never calls {@link confirmRetry} still gets that limit.
   * Shared: a yes is only provisional, Redis decides in `confirmRetry`. Fallen back: final.
   */
  allowRetry(now: number): boolean {
    if (!this.shared) this.stats.localDecisions++;
    return this.local.allowRetry(now);
  }

  /**
   * The decision, after `allowRetry` said yes, in one script call with the pending batch: Redis's
   * answer, or — if it has not answered within `timeoutMs` or failed — the local budget's yes
   * (the budget falls back then). Never rejects. While fallen back, `allowRetry` already decided:
   * true at once.
   */
  confirmRetry(_now: number): boolean | Promise<boolean> {
    if (!this.shared) return true;
    return this.call(this.batchArgs(true)).then(
      (answer) => {
        this.stats.sharedDecisions++;
        return answer === 1;
      },
      (error: unknown) => {
        this.fallBack(error);
        this.stats.localDecisions++;
        return true; // the local budget allowed it in allowRetry
      },
    );
  }

  /**
   * Sends the pending batch now (resolves when Redis has it, or when it failed: never rejects).
   * Call it before a short-lived process exits, or use {@link close}.
   */
  flush(): Promise<void> {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (!this.shared || !this.hasBatch()) return Promise.resolve();
    this.stats.flushes++;
    return this.call(this.batchArgs(false)).then(
      () => undefined,
      (error: unknown) => this.fallBack(error),
    );
  }

  /** Flushes, then stops the timers; afterwards the budget decides locally and talks to Redis no more. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.shared = false;
    if (this.probeTimer !== undefined) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  /** Starts the flush timer if none runs: the success path's only cost besides two increments. */
  protected scheduleFlush(): void {
    if (this.flushTimer !== undefined) return;
    this.flushTimer = unref(setTimeout(() => void this.flush(), this.settings.flushIntervalMs));
  }

  /**
   * One script call, bounded by `timeoutMs`; rejects with a timeout error or the client's error.
   *
   * The bound is on Redis, not on this process. Timers run before I/O in an event-loop turn: after
   * a synchronous stall (a busy handler, a long GC) the timer would fire while Redis's reply,
   * received during the stall, still waits unread in the socket, and a healthy Redis would look
   * late exactly when the process is loaded — when a fleet budget matters most. So when the time
   * is up, the reply gets one turn of I/O (`setImmediate` runs after the poll phase, which reads
   * every socket that is ready) before the decision is called late.
   */
  private call(args: (string | number)[]): Promise<number> {
    const { timeoutMs, key } = this.settings;
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      let cancelLate: (() => void) | undefined;
      const done = (): boolean => {
        // Stryker disable next-line ConditionalExpression,BooleanLiteral: a promise settles once; a second settle, and clearing a cleared timer again, change nothing
        if (settled) return false;
        // Stryker disable next-line BooleanLiteral: as above
        settled = true;
        clearTimeout(timer);
        cancelLate?.();
        return true;
      };
      const timer = setTimeout(() => {
        cancelLate = afterIo(() => {
          cancelLate = undefined;
          // Stryker disable next-line ConditionalExpression: the timer has fired and the late check is this callback: done() has nothing left to clear, and a promise settles once
          if (done()) reject(new RedisBudgetTimeoutError(key, timeoutMs));
        });
      }, timeoutMs);
      this.send(args).then(
        (value) => {
          if (done()) resolve(Number(value));
        },
        (error: unknown) => {
          if (done()) reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** EVALSHA once the script's SHA is known, else EVAL (and learn it); NOSCRIPT (a flushed cache, a failover) → EVAL. */
  private send(args: (string | number)[]): Promise<unknown> {
    const { client, key } = this.settings;
    const script = this.script;
    let known = shas.get(client);
    if (known === undefined) shas.set(client, (known = new Map()));
    const sha = known.get(script);
    try {
      if (sha === undefined || sha === LOADING) {
        if (sha === undefined) {
          // One SCRIPT LOAD per client and script, however many calls start before it answers.
          const cache = known;
          cache.set(script, LOADING);
          client.script('LOAD', script).then(
            (loaded) => void cache.set(script, String(loaded)),
            () => void cache.delete(script),
          );
        }
        return client.eval(script, 1, key, ...args);
      }
      return client.evalsha(sha, 1, key, ...args).catch((error: unknown) => {
        if (!String((error as Error)?.message ?? error).includes('NOSCRIPT')) throw error;
        known.delete(script);
        return client.eval(script, 1, key, ...args);
      });
    } catch (error) {
      // A client that throws instead of rejecting (closed, misconfigured) counts as a failed call.
      return Promise.reject(error);
    }
  }

  private fallBack(error: unknown): void {
    if (!this.shared || this.closed) return;
    this.shared = false;
    this.localSince = performance.now();
    this.stats.fallbacks++;
    this.dropBatch();
    const reason = error instanceof RedisBudgetTimeoutError ? 'timeout' : 'error';
    notify(this.settings.onFallback, { server: this.server, key: this.key, reason, error }, 'onFallback');
    this.scheduleProbe();
  }

  /** While fallen back: try Redis every `recoverIntervalMs` with an empty batch, resume on an answer. */
  private scheduleProbe(): void {
    this.probeTimer = unref(
      setTimeout(() => {
        this.probeTimer = undefined;
        // Stryker disable next-line ConditionalExpression: close() clears this timer, so it never fires after close()
        if (this.closed) return;
        this.call(this.batchArgs(false)).then(
          () => {
            if (this.closed) return;
            this.dropBatch();
            this.shared = true;
            this.stats.recoveries++;
            notify(this.settings.onRecover, { server: this.server, key: this.key, localMs: performance.now() - this.localSince }, 'onRecover');
          },
          () => {
            if (!this.closed) this.scheduleProbe();
          },
        );
      }, this.settings.recoverIntervalMs),
    );
  }
}
