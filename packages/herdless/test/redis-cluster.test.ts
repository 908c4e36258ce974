/**
 * herdless/redis on a real Redis Cluster (three redis-server masters on 127.0.0.1): each budget's
 * single key carries a hash tag of its server name, so its script runs on the node that owns the
 * slot, and the atomic guarantee holds as on one server.
 */
import { Cluster } from 'ioredis';
import { redisRetryThrottlingBudget } from 'herdless/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster } from './support/redis-server.js';

let cluster: Awaited<ReturnType<typeof startCluster>>;
const clients: Cluster[] = [];

function connect(): Cluster {
  const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }], { enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: 1 } });
  client.on('error', () => {});
  clients.push(client);
  return client;
}

beforeAll(async () => {
  cluster = await startCluster(3);
});

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await cluster.stop();
});

describe('on Redis Cluster', () => {
  it('5 clients × 3 servers × 100 failures: each server\'s bucket admits 4 retries, as one A6 bucket does', async () => {
    const servers = ['api.example.com', 'db.internal', 'search:9200'];
    const keys = servers.map((server) => `herdless:{${server}}:retry-throttling`);
    const admitted = new Map(servers.map((s) => [s, 0]));
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        const client = connect();
        const budgets = servers.map((server) => redisRetryThrottlingBudget({ client, server, timeoutMs: 5000 }));
        for (let i = 0; i < 100; i++) {
          for (const budget of budgets) {
            budget.onFailure(i);
            if (budget.allowRetry(i) && (await budget.confirmRetry(i)) === true) admitted.set(budget.server, admitted.get(budget.server)! + 1);
          }
        }
        for (const budget of budgets) {
          expect(budget.stats).toMatchObject({ sharedDecisions: 4, fallbacks: 0 });
          await budget.close();
        }
      }),
    );
    expect([...admitted.values()]).toEqual([4, 4, 4]);
    const reader = connect();
    expect(await Promise.all(keys.map((k) => reader.get(k)))).toEqual(['0', '0', '0']);
    // Three servers, three hash slots: the budgets are spread over the cluster, one key (one slot) each.
    const slots = await Promise.all(keys.map((k) => reader.cluster('KEYSLOT', k)));
    expect(new Set(slots).size).toBe(3);
  });
});
