/**
 * herdless/redis with node-redis (`redis` / `@redis/client`) as the client, against a real
 * redis-server: the same sharing, script caching and fallback as with ioredis. An ioredis client
 * only reads back what the budgets wrote.
 */
import { Redis } from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import { constantBackoff, retry, retryRatioBudget, retryThrottlingBudget, type RetryBudget } from 'herdless';
import { redisRetryRatioBudget, redisRetryThrottlingBudget, type RedisBudgetFallbackEvent } from 'herdless/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { invalidOption } from './support/invalid-option.js';
import { RedisServer } from './support/redis-server.js';

let server: RedisServer;
let admin: Redis;
const clients: RedisClientType[] = [];

/** A node-redis client as the docs advise: no offline queue, so commands fail at once while Redis is down. */
async function connect(): Promise<RedisClientType> {
  const client: RedisClientType = createClient({
    socket: { host: '127.0.0.1', port: server.port, reconnectStrategy: () => 20 },
    disableOfflineQueue: true,
  });
  client.on('error', () => {}); // connection errors while Redis is stopped are expected
  clients.push(client);
  await client.connect();
  return client;
}

beforeAll(async () => {
  server = await RedisServer.start();
  admin = new Redis({ host: '127.0.0.1', port: server.port });
});

afterEach(async () => {
  await admin.flushall();
});

afterAll(async () => {
  for (const client of clients) if (client.isOpen) client.destroy();
  admin.disconnect();
  await server.stop();
});

/** One failed call's decision, as retry() drives it: the failure, then allowRetry and confirmRetry. */
async function decideAfterFailure(budget: RetryBudget, now: number): Promise<boolean> {
  budget.onAttempt(now, false);
  budget.onFailure(now);
  if (!budget.allowRetry(now)) return false;
  return (await budget.confirmRetry!(now)) === true;
}

async function commandCalls(name: string): Promise<number> {
  return Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(await admin.info('commandstats'))?.[1] ?? 0);
}

describe('herdless/redis with a node-redis client', () => {
  it('a client with neither ioredis’s nor node-redis’s methods is refused, naming client', () => {
    const error = invalidOption(() => redisRetryThrottlingBudget({ client: { evalSha: () => Promise.resolve(1) } as never, server: 's' }));
    expect(error.field).toBe('client');
    expect(error.message).toContain('node-redis');
  });

  it('10 node-redis clients × 200 failures racing on one bucket {10, 0.1} admit what one A6 bucket admits: 4', async () => {
    const budgets = await Promise.all(Array.from({ length: 10 }, async () => redisRetryThrottlingBudget({ client: await connect(), server: 'race', timeoutMs: 2000 })));
    const admitted = await Promise.all(
      budgets.map(async (budget) => {
        let n = 0;
        for (let i = 0; i < 200; i++) if (await decideAfterFailure(budget, i)) n++;
        return n;
      }),
    );
    const single = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    let expected = 0;
    for (let i = 0; i < 10 * 200; i++) {
      single.onFailure(0);
      if (single.allowRetry(0)) expected++;
    }
    expect(expected).toBe(4);
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(expected);
    expect(budgets.reduce((a, b) => a + b.stats.fallbacks, 0)).toBe(0);
    expect(await admin.get('herdless:{race}:retry-throttling')).toBe('0');
    expect(await admin.pttl('herdless:{race}:retry-throttling')).toBeGreaterThan(590_000);
    await Promise.all(budgets.map((b) => b.close()));
  });

  it('EVALSHA once the script is loaded (one SCRIPT LOAD for two budgets on one client); a flushed cache costs an EVAL, not a decision', async () => {
    const client = await connect();
    const budget = redisRetryThrottlingBudget({ client, server: 'sha', timeoutMs: 2000 });
    const loadsBefore = await commandCalls('script\\|load');
    expect(await decideAfterFailure(budget, 0)).toBe(true); // EVAL, and SCRIPT LOAD alongside
    await vi.waitFor(async () => expect(await commandCalls('script\\|load')).toBe(loadsBefore + 1), { timeout: 5000 });
    const evalshaBefore = await commandCalls('evalsha');
    expect(await decideAfterFailure(budget, 1)).toBe(true); // EVALSHA
    const second = redisRetryThrottlingBudget({ client, server: 'sha', timeoutMs: 2000 });
    expect(await decideAfterFailure(second, 2)).toBe(true); // EVALSHA too: the SHA is known for this client
    expect(await commandCalls('evalsha')).toBe(evalshaBefore + 2);
    expect(await commandCalls('script\\|load')).toBe(loadsBefore + 1);
    await admin.script('FLUSH');
    expect(await decideAfterFailure(budget, 3)).toBe(true); // NOSCRIPT, then EVAL: tokens 6
    expect(await admin.get('herdless:{sha}:retry-throttling')).toBe('6000');
    expect(budget.stats).toMatchObject({ sharedDecisions: 3, fallbacks: 0 });
    await Promise.all([budget.close(), second.close()]);
  });

  it('retry() with the shared ratio grants what one local ratio budget grants for the same calls', async () => {
    const options = { ratio: 0.1, minRetriesPerWindow: 0, windowMs: 60_000 };
    // 200 calls, every other one failing once: the same sequence through a shared and a local budget.
    const drive = async (budget: RetryBudget): Promise<number> => {
      let retries = 0;
      for (let i = 0; i < 200; i++) {
        let attempt = 0;
        await retry(
          async () => {
            if (++attempt === 1 && i % 2 === 0) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
            return 'ok';
          },
          { budget, maxAttempts: 2, backoff: constantBackoff({ delayMs: 0 }), onRetry: () => void retries++ },
        ).catch(() => 'refused');
      }
      return retries;
    };
    const shared = redisRetryRatioBudget({ client: await connect(), server: 'ratio', timeoutMs: 2000, ...options });
    const sharedRetries = await drive(shared);
    const localRetries = await drive(retryRatioBudget({ ...options, buckets: 10 }));
    // The local ratio (the JS implementation, not the Lua script) is the reference: 22 retries for 200 calls.
    expect(localRetries).toBe(22);
    expect(sharedRetries).toBe(localRetries);
    expect(shared.stats.fallbacks).toBe(0);
    await shared.close();
  });

  it('Redis stopped: decisions fall back at once (disableOfflineQueue), no call fails, sharing resumes', async () => {
    const fallbacks: RedisBudgetFallbackEvent[] = [];
    const budget = redisRetryThrottlingBudget({ client: await connect(), server: 'outage', timeoutMs: 100, recoverIntervalMs: 50, onFallback: (e) => fallbacks.push(e) });
    expect(await decideAfterFailure(budget, 0)).toBe(true);
    await server.pause();
    expect(await decideAfterFailure(budget, 1)).toBe(true); // the local bucket decides
    expect(fallbacks).toHaveLength(1);
    expect(budget.mode).toBe('local');
    await server.resume();
    await vi.waitFor(() => expect(budget.mode).toBe('shared'), { timeout: 10_000, interval: 20 });
    expect(await decideAfterFailure(budget, 2)).toBe(true);
    expect(budget.stats.sharedDecisions).toBe(2);
    await budget.close();
  });
});
