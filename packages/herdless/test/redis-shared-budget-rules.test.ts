/**
 * The shared budgets' machinery — what goes to Redis and when, the script cache, the fall back and
 * the recovery — against a scripted client in virtual time (vitest's fake timers): every command
 * the budget sends is recorded with its arguments, and the client answers what the test says. The
 * Lua scripts themselves run against a real redis-server in redis-budget.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { invalidOption } from './support/invalid-option.js';
import {
  RedisBudgetTimeoutError,
  redisRetryRatioBudget,
  redisRetryThrottlingBudget,
  type RedisBudgetFallbackEvent,
  type RedisBudgetRecoverEvent,
  type RedisScriptClient,
} from 'herdless/redis';

interface Command {
  kind: 'evalsha' | 'eval' | 'script';
  /** EVALSHA's SHA. */
  sha?: string;
  /** The key (EVAL, EVALSHA). */
  key?: string | number;
  /** The script's arguments (EVAL, EVALSHA). */
  args?: (string | number)[];
}

/** A Redis client that records every command and answers with `reply` (a value, or a rejection). */
class ScriptedClient implements RedisScriptClient {
  readonly commands: Command[] = [];
  /** What EVAL and EVALSHA answer; a function sees the command. */
  reply: (command: Command) => Promise<unknown> = () => Promise.resolve(1);
  /** What SCRIPT LOAD answers. */
  load: (script: string) => Promise<unknown> = () => Promise.resolve('sha-1');
  /** The scripts loaded and evaluated: one per kind of budget. */
  readonly scripts = new Set<string>();

  evalsha(sha: string, numKeys: number, key: string | number, ...args: (string | number)[]): Promise<unknown> {
    expect(numKeys).toBe(1);
    const command: Command = { kind: 'evalsha', sha, key, args };
    this.commands.push(command);
    return this.reply(command);
  }
  eval(script: string, numKeys: number, key: string | number, ...args: (string | number)[]): Promise<unknown> {
    expect(numKeys).toBe(1);
    this.scripts.add(script);
    const command: Command = { kind: 'eval', key, args };
    this.commands.push(command);
    return this.reply(command);
  }
  script(subcommand: 'LOAD', script: string): Promise<unknown> {
    expect(subcommand).toBe('LOAD');
    this.scripts.add(script);
    this.commands.push({ kind: 'script' });
    return this.load(script);
  }
  /** The script arguments of the EVALs and EVALSHAs so far (then all commands are forgotten). */
  take(): (string | number)[][] {
    const taken = this.commands.filter((c) => c.kind !== 'script').map((c) => c.args!);
    this.commands.length = 0;
    return taken;
  }
  /** The commands' kinds so far (then forgotten). */
  kinds(): string[] {
    const kinds = this.commands.map((c) => (c.kind === 'evalsha' ? `evalsha ${c.sha}` : c.kind));
    this.commands.length = 0;
    return kinds;
  }
}

const KEY = 'herdless:{api}:retry-throttling';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('what goes to Redis', () => {
  it('the token bucket: successes wait flushIntervalMs and go as one batch, in thousandths of a token', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api', maxTokens: 12.3456, tokenRatio: 0.25, flushIntervalMs: 50, keyTtlMs: 90_000 });
    budget.onAttempt(0, false);
    budget.onSuccess(0);
    budget.onSuccess(1);
    await vi.advanceTimersByTimeAsync(49);
    expect(client.take()).toEqual([]);
    budget.onSuccess(2); // the timer runs from the first success, not the last
    await vi.advanceTimersByTimeAsync(1);
    // [maxMilli, ratioMilli, successes, failures, decide, ttlMs]; 12.3456 is kept as 12.345.
    expect(client.take()).toEqual([['12345', '250', 3, 0, 0, 90_000]]);
    expect(budget.stats.flushes).toBe(1);
    // Nothing pending: the next interval sends nothing.
    await vi.advanceTimersByTimeAsync(200);
    expect(client.take()).toEqual([]);
    await budget.close();
  });

  it('a failure goes at once, alone, when no decision takes it along', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onFailure(0);
    budget.onFailure(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(client.take()).toEqual([['10000', '100', 0, 2, 0, 600_000]]);
    await budget.close();
  });

  it('a failure followed by its retry decision goes with the decision, in one call', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.resolve(0);
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onSuccess(0);
    budget.onFailure(0);
    expect(budget.allowRetry(0)).toBe(true);
    await expect(budget.confirmRetry(0)).resolves.toBe(false); // Redis said 0
    await vi.advanceTimersByTimeAsync(500);
    expect(client.take()).toEqual([['10000', '100', 1, 1, 1, 600_000]]);
    expect(budget.stats).toMatchObject({ sharedDecisions: 1, localDecisions: 0, flushes: 0 });
    await budget.close();
  });

  it('the ratio: first tries batched (retries are counted by the script), with its window in buckets', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryRatioBudget({ client, server: 'api', ratio: 0.2, minRetriesPerWindow: 3, windowMs: 2000, buckets: 4, flushIntervalMs: 10 });
    budget.onAttempt(0, false);
    budget.onAttempt(0, true);
    budget.onAttempt(0, false);
    budget.onSuccess(0);
    budget.onFailure(0);
    await vi.advanceTimersByTimeAsync(10);
    // [ratio, minRetriesPerWindow, bucketMs, buckets, requests, decide, ttlMs]
    expect(client.take()).toEqual([['0.2', '3', 500, 4, 2, 0, 600_000]]);
    budget.onAttempt(20, false);
    expect(budget.allowRetry(20)).toBe(true);
    await expect(budget.confirmRetry(20)).resolves.toBe(true);
    expect(client.take()).toEqual([['0.2', '3', 500, 4, 1, 1, 600_000]]);
    await budget.close();
    expect(client.take()).toEqual([]);
  });

  it('the ratio\'s key lives at least a window: keyTtlMs defaults to the larger of 10 min and windowMs', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryRatioBudget({ client, server: 'api', windowMs: 900_000, buckets: 10 });
    budget.onAttempt(0, false);
    await budget.flush();
    expect(client.take()).toEqual([['0.1', '1', 90_000, 10, 1, 0, 900_000]]);
    await budget.close();
  });

  it('flush() sends the batch now and stops the timer; with nothing pending it sends nothing', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    await budget.flush();
    expect(client.take()).toEqual([]);
    budget.onSuccess(0);
    await budget.flush();
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000]]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(client.take()).toEqual([]);
    expect(budget.stats.flushes).toBe(1);
    await budget.close();
  });

  it('close() sends the last batch, then the budget decides locally and talks to Redis no more', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onSuccess(0);
    await budget.close();
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000]]);
    expect(budget.mode).toBe('local');
    budget.onSuccess(1);
    budget.onFailure(1);
    expect(budget.allowRetry(1)).toBe(true);
    expect(budget.confirmRetry(1)).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(client.take()).toEqual([]);
    expect(budget.stats.localDecisions).toBe(1);
  });
});

describe('the script cache', () => {
  it('one SCRIPT LOAD per client and script, however many calls start before it answers; EVALSHA after', async () => {
    const client = new ScriptedClient();
    let loaded!: (sha: string) => void;
    client.load = () => new Promise((resolve) => (loaded = resolve));
    const a = redisRetryThrottlingBudget({ client, server: 'a' });
    const b = redisRetryThrottlingBudget({ client, server: 'b' });
    a.onSuccess(0);
    b.onSuccess(0);
    await Promise.all([a.flush(), b.flush()]);
    expect(client.commands.map((c) => [c.kind, c.key])).toEqual([['script', undefined], ['eval', 'herdless:{a}:retry-throttling'], ['eval', 'herdless:{b}:retry-throttling']]);
    client.commands.length = 0;
    loaded('sha-a6');
    await vi.advanceTimersByTimeAsync(0);
    a.onSuccess(1);
    await a.flush();
    expect(client.commands).toEqual([{ kind: 'evalsha', sha: 'sha-a6', key: 'herdless:{a}:retry-throttling', args: ['10000', '100', 1, 0, 0, 600_000] }]);
    client.commands.length = 0;
    // The ratio's script is another script: its own SCRIPT LOAD.
    const ratio = redisRetryRatioBudget({ client, server: 'a' });
    ratio.onAttempt(0, false);
    await ratio.flush();
    expect(client.kinds()).toEqual(['script', 'eval']);
    expect(client.scripts.size).toBe(2);
    await Promise.all([a.close(), b.close(), ratio.close()]);
  });

  it('a SCRIPT LOAD that fails is tried again by the next call', async () => {
    const client = new ScriptedClient();
    client.load = () => Promise.reject(new Error('READONLY'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    client.load = () => Promise.resolve('sha-2');
    budget.onSuccess(1);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    budget.onSuccess(2);
    await budget.flush();
    expect(client.kinds()).toEqual(['script', 'eval', 'script', 'eval', 'evalsha sha-2']);
    expect(budget.mode).toBe('shared');
    await budget.close();
  });

  it('NOSCRIPT (a flushed cache, a failover) costs an EVAL and a new SCRIPT LOAD, not a decision', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    client.commands.length = 0;
    client.reply = (c) => (c.kind === 'evalsha' ? Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.')) : Promise.resolve(1));
    budget.onFailure(1);
    await expect(budget.confirmRetry(1)).resolves.toBe(true);
    expect(client.kinds()).toEqual(['evalsha sha-1', 'eval']);
    await vi.advanceTimersByTimeAsync(0);
    budget.onSuccess(2);
    await budget.flush();
    // The SHA was forgotten: the next call loads the script again.
    expect(client.kinds()).toEqual(['script', 'eval']);
    expect(budget.stats).toMatchObject({ sharedDecisions: 1, fallbacks: 0 });
    await budget.close();
  });

  it('an EVALSHA that fails for another reason is a failed call: the budget falls back', async () => {
    const client = new ScriptedClient();
    const events: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', onFallback: (e) => events.push(e) });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    client.commands.length = 0;
    const oom = new Error('OOM command not allowed');
    client.reply = () => Promise.reject(oom);
    budget.onFailure(1);
    await expect(budget.confirmRetry(1)).resolves.toBe(true);
    expect(client.kinds()).toEqual(['evalsha sha-1']);
    expect(events).toEqual([{ server: 'api', key: KEY, reason: 'error', error: oom }]);
    await budget.close();
  });

  it('a client that rejects with a non-Error is a failed call with an Error', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject('connection lost');
    const errors: unknown[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', onFallback: (e) => errors.push(e.error) });
    budget.onFailure(0);
    await expect(budget.confirmRetry(0)).resolves.toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
    expect((errors[0] as Error).message).toBe('connection lost');
    await budget.close();
  });
});

describe('the bounded wait', () => {
  it('a late answer is a timeout: RedisBudgetTimeoutError names the key and timeoutMs', async () => {
    const client = new ScriptedClient();
    client.reply = () => new Promise((resolve) => setTimeout(() => resolve(1), 30));
    const events: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20, onFallback: (e) => events.push(e) });
    budget.onFailure(0);
    let answer: boolean | undefined;
    void Promise.resolve(budget.confirmRetry(0)).then((a) => (answer = a));
    await vi.advanceTimersByTimeAsync(21);
    expect(answer).toBe(true);
    expect(events).toHaveLength(1);
    const error = events[0]!.error as RedisBudgetTimeoutError;
    expect(error).toBeInstanceOf(RedisBudgetTimeoutError);
    expect([error.name, error.code, error.message]).toEqual(['RedisBudgetTimeoutError', 'ERR_HERDLESS_REDIS_TIMEOUT', `Redis did not answer for budget ${KEY} within 20 ms`]);
    expect(events[0]!.reason).toBe('timeout');
    // The answer that comes after the timeout changes nothing.
    await vi.advanceTimersByTimeAsync(20);
    expect(budget.stats).toMatchObject({ sharedDecisions: 0, localDecisions: 1, fallbacks: 1 });
    await budget.close();
  });

  it('an answer just inside timeoutMs is Redis\'s: no fallback, and no timer left behind', async () => {
    const client = new ScriptedClient();
    client.reply = () => new Promise((resolve) => setTimeout(() => resolve(0), 19));
    const events: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20, onFallback: (e) => events.push(e) });
    budget.onFailure(0);
    const answer = budget.confirmRetry(0);
    await vi.advanceTimersByTimeAsync(19);
    await expect(answer).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toEqual([]);
    expect(budget.mode).toBe('shared');
    await budget.close();
  });

  it('an answer read in the I/O turn after the timer is on time (the reply waited in the socket)', async () => {
    const client = new ScriptedClient();
    // The reply is read in the same turn as the timer fires, after it (its timer was set later).
    client.reply = () => new Promise((resolve) => setTimeout(() => resolve(1), 20));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20 });
    budget.onFailure(0);
    const answer = budget.confirmRetry(0);
    await vi.advanceTimersByTimeAsync(25);
    await expect(answer).resolves.toBe(true);
    expect(budget.stats).toMatchObject({ sharedDecisions: 1, fallbacks: 0 });
    expect(vi.getTimerCount()).toBe(0);
    await budget.close();
  });

  it('where there is no setImmediate, the late check is a timer: still late at timeoutMs', async () => {
    vi.stubGlobal('setImmediate', undefined);
    const client = new ScriptedClient();
    client.reply = () => new Promise(() => {});
    const events: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20, onFallback: (e) => events.push(e) });
    budget.onFailure(0);
    const answer = budget.confirmRetry(0);
    await vi.advanceTimersByTimeAsync(19);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(events.map((e) => e.reason)).toEqual(['timeout']);
    await expect(answer).resolves.toBe(true);
    await budget.close();
  });
});

describe('falling back and recovering', () => {
  it('fallen back: the batch is dropped, decisions are local, Redis is tried every recoverIntervalMs until it answers', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('ECONNREFUSED'));
    const recovered: RedisBudgetRecoverEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 500, onRecover: (e) => recovered.push(e) });
    budget.onSuccess(0);
    budget.onFailure(0);
    await expect(budget.confirmRetry(0)).resolves.toBe(true);
    expect(budget.mode).toBe('local');
    client.take();
    // Local: nothing batched, nothing sent.
    budget.onSuccess(1);
    budget.onFailure(1);
    expect(budget.allowRetry(1)).toBe(true);
    expect(budget.confirmRetry(1)).toBe(true);
    await vi.advanceTimersByTimeAsync(499);
    expect(client.take()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // The probe: an empty batch, no decision.
    expect(client.take()).toEqual([['10000', '100', 0, 0, 0, 600_000]]);
    await vi.advanceTimersByTimeAsync(499);
    expect(client.take()).toEqual([]);
    client.reply = () => Promise.resolve(10_000);
    await vi.advanceTimersByTimeAsync(1);
    expect(client.take()).toHaveLength(1);
    expect(budget.mode).toBe('shared');
    expect(recovered).toEqual([{ server: 'api', key: KEY, localMs: 1000 }]);
    expect(budget.stats).toMatchObject({ fallbacks: 1, recoveries: 1, localDecisions: 2, sharedDecisions: 0 });
    // Sharing again: what happened while local is not sent; new successes are.
    budget.onSuccess(2);
    await budget.flush();
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000]]);
    expect(vi.getTimerCount()).toBe(0);
    await budget.close();
  });

  it('the ratio falls back likewise: its first tries are not batched while local', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryRatioBudget({ client, server: 'api', recoverIntervalMs: 100 });
    budget.onAttempt(0, false);
    expect(budget.allowRetry(0)).toBe(true);
    await expect(budget.confirmRetry(0)).resolves.toBe(true);
    expect(budget.mode).toBe('local');
    client.take();
    budget.onAttempt(1, false);
    budget.onAttempt(1, false);
    client.reply = () => Promise.resolve(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(client.take()).toEqual([['0.1', '1', 100, 10, 0, 0, 600_000]]);
    expect(budget.mode).toBe('shared');
    await budget.close();
  });

  it('closed while fallen back: the probe stops', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100 });
    budget.onFailure(0);
    await budget.confirmRetry(0);
    client.take();
    await budget.close();
    await vi.advanceTimersByTimeAsync(1000);
    expect(client.take()).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('closed while a probe is in flight: its answer does not resume sharing', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const recovered: RedisBudgetRecoverEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100, timeoutMs: 50, onRecover: (e) => recovered.push(e) });
    budget.onFailure(0);
    await budget.confirmRetry(0);
    let answer!: (value: number) => void;
    client.reply = () => new Promise((resolve) => (answer = resolve));
    await vi.advanceTimersByTimeAsync(100);
    await budget.close();
    answer(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect([budget.mode, recovered, budget.stats.recoveries]).toEqual(['local', [], 0]);
  });

  it('closed while a probe is in flight that then fails: no new probe', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100, timeoutMs: 50 });
    budget.onFailure(0);
    await budget.confirmRetry(0);
    let fail!: (error: Error) => void;
    client.reply = () => new Promise((_, reject) => (fail = reject));
    await vi.advanceTimersByTimeAsync(100);
    client.take();
    await budget.close();
    fail(new Error('down'));
    await vi.advanceTimersByTimeAsync(1000);
    expect(client.take()).toEqual([]);
  });

  it('a hook that throws becomes a process warning; the decision stands', async () => {
    const warnings: [string, object][] = [];
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(((message: string, options: object) => void warnings.push([message, options])) as never);
    try {
      const client = new ScriptedClient();
      client.reply = () => Promise.reject(new Error('down'));
      const budget = redisRetryThrottlingBudget({
        client,
        server: 'api',
        recoverIntervalMs: 100,
        onFallback: () => {
          throw new Error('logger gone');
        },
        onRecover: () => {
          throw new Error('metrics gone');
        },
      });
      budget.onFailure(0);
      await expect(budget.confirmRetry(0)).resolves.toBe(true);
      client.reply = () => Promise.resolve(1);
      await vi.advanceTimersByTimeAsync(100);
      expect(budget.mode).toBe('shared');
      expect(warnings).toEqual([
        ['herdless/redis: the onFallback hook threw: Error: logger gone', { type: 'HerdlessWarning', code: 'HERDLESS_HOOK_FAILED' }],
        ['herdless/redis: the onRecover hook threw: Error: metrics gone', { type: 'HerdlessWarning', code: 'HERDLESS_HOOK_FAILED' }],
      ]);
      await budget.close();
    } finally {
      emitWarning.mockRestore();
    }
  });
});

describe('timers do not hold a process open', () => {
  it('the flush and probe timers are unref\'d (a short-lived process exits; close() sends the last batch)', async () => {
    vi.useRealTimers();
    const created: NodeJS.Timeout[] = [];
    const realSetTimeout = globalThis.setTimeout;
    vi.stubGlobal('setTimeout', ((callback: () => void, ms: number) => {
      const timer = realSetTimeout(callback, ms);
      created.push(timer);
      return timer;
    }) as typeof setTimeout);
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', flushIntervalMs: 60_000, recoverIntervalMs: 60_000 });
    budget.onSuccess(0); // the flush timer
    expect(created).toHaveLength(1);
    expect(created[0]!.hasRef()).toBe(false);
    budget.onFailure(0);
    await budget.confirmRetry(0); // fails: falls back, the probe timer
    const probe = created.at(-1)!;
    expect(probe).not.toBe(created[0]);
    expect(probe.hasRef()).toBe(false);
    await budget.close();
  });
});

describe('more of the machinery', () => {
  it('one flush timer for many successes (the success path\'s only cost besides two increments)', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api', flushIntervalMs: 100 });
    budget.onSuccess(0);
    await vi.advanceTimersByTimeAsync(50);
    budget.onSuccess(50);
    budget.onSuccess(50);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(client.take()).toEqual([['10000', '100', 3, 0, 0, 600_000]]);
    await budget.close();
  });

  it('a failure that its decision took along sends nothing more: the successes after it wait for their timer', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api', flushIntervalMs: 100 });
    budget.onFailure(0);
    expect(budget.allowRetry(0)).toBe(true);
    const answer = budget.confirmRetry(0); // takes the failure along
    budget.onSuccess(0);
    await answer;
    await vi.advanceTimersByTimeAsync(0);
    expect(client.take()).toEqual([['10000', '100', 0, 1, 1, 600_000]]);
    await vi.advanceTimersByTimeAsync(100);
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000]]);
    await budget.close();
  });

  it('after a flush() the next success starts a new timer', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api', flushIntervalMs: 100 });
    budget.onSuccess(0);
    await vi.advanceTimersByTimeAsync(10);
    await budget.flush();
    expect(vi.getTimerCount()).toBe(0);
    budget.onSuccess(10);
    await vi.advanceTimersByTimeAsync(100);
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000], ['10000', '100', 1, 0, 0, 600_000]]);
    await budget.close();
  });

  it('a batch that fails to go out falls back, as a failed decision does', async () => {
    const client = new ScriptedClient();
    const reasons: string[] = [];
    client.reply = () => Promise.reject(new Error('READONLY You can\'t write against a read only replica.'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', onFallback: (e) => reasons.push(e.reason) });
    budget.onSuccess(0);
    await budget.flush();
    expect([budget.mode, reasons, budget.stats.fallbacks]).toEqual(['local', ['error'], 1]);
    await budget.close();
  });

  it('two decisions failing together fall back once: one event, one probe', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const events: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100, onFallback: (e) => events.push(e) });
    budget.onFailure(0);
    budget.onFailure(0);
    const both = [budget.confirmRetry(0), budget.confirmRetry(0)];
    await expect(Promise.all(both)).resolves.toEqual([true, true]);
    expect([events.length, budget.stats.fallbacks, vi.getTimerCount()]).toEqual([1, 1, 1]);
    await budget.close();
  });

  it('what came in while a decision timed out is dropped with it: the probe sends an empty batch', async () => {
    const client = new ScriptedClient();
    client.reply = () => new Promise(() => {});
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20, recoverIntervalMs: 100 });
    budget.onFailure(0);
    const answer = budget.confirmRetry(0);
    budget.onSuccess(1);
    budget.onSuccess(1);
    await vi.advanceTimersByTimeAsync(21);
    await expect(answer).resolves.toBe(true);
    client.take();
    client.reply = () => Promise.resolve(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(client.take()).toEqual([['10000', '100', 0, 0, 0, 600_000]]);
    await budget.close();
  });

  it('the ratio likewise drops the first tries that came in while its decision timed out', async () => {
    const client = new ScriptedClient();
    client.reply = () => new Promise(() => {});
    const budget = redisRetryRatioBudget({ client, server: 'api', timeoutMs: 20, recoverIntervalMs: 100 });
    budget.onAttempt(0, false);
    const answer = budget.confirmRetry(0);
    budget.onAttempt(1, false);
    await vi.advanceTimersByTimeAsync(21);
    await expect(answer).resolves.toBe(true);
    client.take();
    client.reply = () => Promise.resolve(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(client.take()).toEqual([['0.1', '1', 100, 10, 0, 0, 600_000]]);
    await budget.close();
  });

  it('a failed call leaves only the probe\'s timer (its timeout is cleared)', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onFailure(0);
    await budget.confirmRetry(0);
    expect(vi.getTimerCount()).toBe(1);
    await budget.close();
    expect(vi.getTimerCount()).toBe(0); // close() clears the probe at once
  });

  it('a probe that fails after close() schedules no other', async () => {
    const client = new ScriptedClient();
    client.reply = () => Promise.reject(new Error('down'));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100, timeoutMs: 50 });
    budget.onFailure(0);
    await budget.confirmRetry(0);
    let fail!: (error: Error) => void;
    client.reply = () => new Promise((_, reject) => (fail = reject));
    await vi.advanceTimersByTimeAsync(100);
    await budget.close();
    fail(new Error('down'));
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('NOSCRIPT is recognised in a rejection that is a plain string too', async () => {
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api' });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    client.commands.length = 0;
    client.reply = (c) => (c.kind === 'evalsha' ? Promise.reject('NOSCRIPT No matching script.') : Promise.resolve(1));
    budget.onFailure(1);
    await expect(budget.confirmRetry(1)).resolves.toBe(true);
    expect(client.kinds()).toEqual(['evalsha sha-1', 'eval']);
    expect(budget.mode).toBe('shared');
    await budget.close();
  });

  it('an EVALSHA rejected with undefined is a failed call (an Error saying so), not a crash', async () => {
    const client = new ScriptedClient();
    const errors: unknown[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', onFallback: (e) => errors.push(e.error) });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    client.reply = () => Promise.reject(undefined);
    budget.onFailure(1);
    await expect(budget.confirmRetry(1)).resolves.toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
    expect((errors[0] as Error).message).toBe('undefined');
    await budget.close();
  });

  it('a client that throws instead of rejecting: the fallback event carries what it threw', async () => {
    const closed = new Error('Connection is closed.');
    const client: RedisScriptClient = {
      evalsha: () => {
        throw closed;
      },
      eval: () => {
        throw closed;
      },
      script: () => Promise.resolve('sha'),
    };
    const errors: unknown[] = [];
    const budget = redisRetryThrottlingBudget({ client, server: 'api', onFallback: (e) => errors.push(e.error) });
    budget.onFailure(0);
    await expect(budget.confirmRetry(0)).resolves.toBe(true);
    expect(errors).toEqual([closed]);
    await budget.close();
  });

  it('no hooks: falling back and recovering warn nobody', async () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const client = new ScriptedClient();
      client.reply = () => Promise.reject(new Error('down'));
      const budget = redisRetryThrottlingBudget({ client, server: 'api', recoverIntervalMs: 100 });
      budget.onFailure(0);
      await budget.confirmRetry(0);
      client.reply = () => Promise.resolve(1);
      await vi.advanceTimersByTimeAsync(100);
      expect(budget.mode).toBe('shared');
      expect(emitWarning).not.toHaveBeenCalled();
      await budget.close();
    } finally {
      emitWarning.mockRestore();
    }
  });

  it('a hook that throws where process.emitWarning is missing (another runtime) changes nothing', async () => {
    const emitWarning = process.emitWarning;
    (process as { emitWarning?: unknown }).emitWarning = undefined;
    try {
      const client = new ScriptedClient();
      client.reply = () => Promise.reject(new Error('down'));
      const budget = redisRetryThrottlingBudget({
        client,
        server: 'api',
        onFallback: () => {
          throw new Error('logger gone');
        },
      });
      budget.onFailure(0);
      await expect(budget.confirmRetry(0)).resolves.toBe(true);
      expect(budget.mode).toBe('local');
      await budget.close();
    } finally {
      process.emitWarning = emitWarning;
    }
  });

  it('timers that are numbers (browsers, Deno) work: nothing assumes unref', async () => {
    const fakeSet = globalThis.setTimeout;
    const fakeClear = globalThis.clearTimeout;
    const handles = new Map<number, ReturnType<typeof setTimeout>>();
    let next = 0;
    vi.stubGlobal('setTimeout', (callback: () => void, ms: number) => {
      handles.set(++next, fakeSet(callback, ms));
      return next;
    });
    vi.stubGlobal('clearTimeout', (id: number) => fakeClear(handles.get(id)));
    const client = new ScriptedClient();
    const budget = redisRetryThrottlingBudget({ client, server: 'api', flushIntervalMs: 10 });
    budget.onSuccess(0);
    await vi.advanceTimersByTimeAsync(10);
    expect(client.take()).toEqual([['10000', '100', 1, 0, 0, 600_000]]);
    await budget.close();
  });

  it('setImmediate without clearImmediate: the late check is a timer, and an answer in time still counts', async () => {
    vi.stubGlobal('clearImmediate', undefined);
    const client = new ScriptedClient();
    client.reply = () => new Promise((resolve) => setTimeout(() => resolve(1), 20));
    const budget = redisRetryThrottlingBudget({ client, server: 'api', timeoutMs: 20 });
    budget.onFailure(0);
    const answer = budget.confirmRetry(0);
    await vi.advanceTimersByTimeAsync(25);
    await expect(answer).resolves.toBe(true);
    expect(budget.stats).toMatchObject({ sharedDecisions: 1, fallbacks: 0 });
    await budget.close();
  });
});

describe('options, by the letter', () => {
  const client = new ScriptedClient();
  it('server: 1 to 256 characters', () => {
    expect(redisRetryThrottlingBudget({ client, server: 'a'.repeat(256) }).server).toHaveLength(256);
    const error = invalidOption(() => redisRetryThrottlingBudget({ client, server: 'a'.repeat(257) }));
    expect([error.field, error.requirement]).toEqual(['server', 'must be a string of 1 to 256 characters']);
  });

  it('keyPrefix: at most 256 characters', () => {
    expect(redisRetryThrottlingBudget({ client, server: 'a', keyPrefix: 'p'.repeat(256) }).key).toBe(`${'p'.repeat(256)}{a}:retry-throttling`);
    const error = invalidOption(() => redisRetryThrottlingBudget({ client, server: 'a', keyPrefix: 'p'.repeat(257) }));
    expect([error.field, error.requirement]).toEqual(['keyPrefix', 'must be a string of at most 256 characters']);
  });

  it('hooks must be functions; keyTtlMs a whole number of ms, at least the ratio\'s window', () => {
    const hook = invalidOption(() => redisRetryThrottlingBudget({ client, server: 'a', onRecover: 1 as never }));
    expect([hook.field, hook.requirement]).toEqual(['onRecover', 'must be a function']);
    expect(invalidOption(() => redisRetryThrottlingBudget({ client, server: 'a', keyTtlMs: 1000.5 })).field).toBe('keyTtlMs');
    const short = invalidOption(() => redisRetryRatioBudget({ client, server: 'a', windowMs: 60_000, keyTtlMs: 59_999 }));
    expect([short.field, short.value, short.requirement]).toEqual(['keyTtlMs', 59_999, 'must be ≥ windowMs (60000)']);
  });

  it('options that are not an object are refused, naming options and the factory', () => {
    for (const [make, owner] of [
      [() => redisRetryThrottlingBudget(7 as never), 'redisRetryThrottlingBudget'],
      [() => redisRetryRatioBudget(7 as never), 'redisRetryRatioBudget'],
    ] as const) {
      const error = invalidOption(make);
      expect(error.field).toBe('options');
      expect(error.message.startsWith(`${owner}:`)).toBe(true);
    }
    expect(invalidOption(() => redisRetryRatioBudget({ client, server: 'a', ratio: 3 })).message.startsWith('redisRetryRatioBudget:')).toBe(true);
  });

  it('client: null and primitives are refused, naming client; a function carrying the three methods is a client', () => {
    for (const bad of [null, 'redis://127.0.0.1', 6379]) {
      expect(invalidOption(() => redisRetryThrottlingBudget({ client: bad as never, server: 'a' })).field).toBe('client');
    }
    const callable = Object.assign(() => {}, { evalsha: client.evalsha, eval: client.eval, script: client.script });
    expect(redisRetryThrottlingBudget({ client: callable as never, server: 'a' }).key).toBe('herdless:{a}:retry-throttling');
  });
});

describe('a node-redis client', () => {
  it('speaks { keys, arguments }: the budget\'s key is the one key, the rest are arguments, as text', async () => {
    const calls: [string, string, { keys: string[]; arguments: string[] }][] = [];
    const nodeRedis = {
      evalSha: (sha: string, options: { keys: string[]; arguments: string[] }) => (calls.push(['evalSha', sha, options]), Promise.resolve(1)),
      eval: (_script: string, options: { keys: string[]; arguments: string[] }) => (calls.push(['eval', '', options]), Promise.resolve(1)),
      scriptLoad: () => Promise.resolve('sha-n'),
    };
    const budget = redisRetryThrottlingBudget({ client: nodeRedis, server: 'api' });
    budget.onSuccess(0);
    await budget.flush();
    await vi.advanceTimersByTimeAsync(0);
    budget.onFailure(1);
    await budget.confirmRetry(1);
    expect(calls).toEqual([
      ['eval', '', { keys: [KEY], arguments: ['10000', '100', '1', '0', '0', '600000'] }],
      ['evalSha', 'sha-n', { keys: [KEY], arguments: ['10000', '100', '0', '1', '1', '600000'] }],
    ]);
    await budget.close();
  });
});
