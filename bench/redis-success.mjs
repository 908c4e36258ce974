// 6. herdless/redis's success path: a successful call through retry() with the shared A6 bucket
// kept in Redis, against the same call with the local bucket. The success path must make no round
// trip (successes are counted locally and sent in one batch every flushIntervalMs), so the two
// should cost the same; Redis's own command count over the run shows the batches.
// Needs Debian's redis-server (started here on 127.0.0.1 and a free port, no persistence).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { retry, retryThrottlingBudget } from '../packages/herdless/dist/index.js';
import { redisRetryThrottlingBudget } from '../packages/herdless/dist/redis/index.js';
import { compare } from './lib/harness.mjs';
import { op } from './lib/subjects.mjs';

const REDIS_SERVER = '/usr/bin/redis-server';

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'herdless-bench-redis-'));
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  let output = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  return {
    port,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function scriptCalls(client) {
  const info = await client.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g)) n += Number(m[2]);
  return n;
}

export async function benchRedisSuccess({ rounds, minCpuMs }) {
  if (!existsSync(REDIS_SERVER)) return { skipped: `${REDIS_SERVER} is missing (apt-get install redis-server)` };
  const server = await startRedis();
  const client = new Redis({ host: '127.0.0.1', port: server.port, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  try {
    await once(client, 'ready');
    const local = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    const shared = redisRetryThrottlingBudget({ client, server: 'bench', maxTokens: 10, tokenRatio: 0.1 });
    const localOptions = { maxAttempts: 3, budget: local };
    const sharedOptions = { maxAttempts: 3, budget: shared };
    let calls = 0;
    const cases = {
      'retry(op, { budget: retryThrottlingBudget() })': () => retry(op, localOptions),
      'retry(op, { budget: redisRetryThrottlingBudget() })': () => {
        calls++;
        return retry(op, sharedOptions);
      },
    };
    const before = await scriptCalls(client);
    const result = await compare(cases, { rounds, minCpuMs, baseline: 'retry(op, { budget: retryThrottlingBudget() })', batchSamples: 256 });
    await shared.flush();
    const commands = (await scriptCalls(client)) - before;
    await shared.close();
    return { result, calls, commands, flushes: shared.stats.flushes, decisions: shared.stats.sharedDecisions };
  } finally {
    client.disconnect();
    await server.stop();
  }
}
