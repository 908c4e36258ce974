// One process of the live fleet check: it calls a loopback server through herdless's retrying
// fetch with a retry budget — one shared through Redis (`shared`) or its own (`local`) — and prints
// what it saw as one JSON line. It runs the built library (dist/), as a user's process would.
// argv: redisPort httpPort calls mode [timeoutMs] — mode `race` calls no server: it reports `calls`
// failures straight to the shared budget (onFailure, allowRetry, confirmRetry) and counts the retries
// admitted. Mode `stall` shares the budget with the default timeoutMs (or the one given) and calls
// the server for `calls` ms, while a synchronous 20 ms stall blocks the process every 100 ms: a
// loaded process, as in production when a fleet budget matters.
import { createInterface } from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';
import { Redis } from 'ioredis';
import { constantBackoff, retryThrottlingBudget } from '../../dist/index.js';
import { withRetry } from '../../dist/http/index.js';
import { redisRetryThrottlingBudget } from '../../dist/redis/index.js';

const [redisPort, httpPort, calls, mode] = process.argv.slice(2);
const server = `127.0.0.1:${httpPort}`;
let client;
let fallbacks = 0;
let budget;
const timeoutArg = process.argv[6];
if (mode === 'shared' || mode === 'race' || mode === 'stall') {
  client = new Redis({ host: '127.0.0.1', port: Number(redisPort), enableOfflineQueue: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  // A generous timeout for `shared` and `race`: they measure the sharing; the fallback has its own tests.
  const timeoutMs = mode === 'stall' ? (timeoutArg === undefined ? undefined : Number(timeoutArg)) : 2000;
  // `stall` keeps a bucket of its own (its prefix): the other modes drain the server's bucket first.
  const keyPrefix = mode === 'stall' ? 'herdless-stall:' : undefined;
  budget = redisRetryThrottlingBudget({ client, server: mode === 'race' ? 'race' : server, keyPrefix, timeoutMs, onFallback: () => fallbacks++ });
  if (mode === 'stall') await client.ping(); // connected before the calls start, as a long-lived process is
} else {
  budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
}
const api = withRetry(fetch, { maxAttempts: 4, backoff: constantBackoff({ delayMs: 1 }), budget });

// Every process starts its calls on the parent's word, so that they race.
process.stdout.write('ready\n');
const go = createInterface({ input: process.stdin });
await new Promise((resolve) => go.once('line', resolve));
go.close();
process.stdin.destroy();
if (mode === 'race') {
  let admitted = 0;
  for (let i = 0; i < Number(calls); i++) {
    budget.onAttempt(i, false);
    budget.onFailure(i);
    if (budget.allowRetry(i) && (await budget.confirmRetry(i)) === true) admitted++;
  }
  await budget.close();
  await client.quit();
  process.stdout.write(`${JSON.stringify({ admitted, fallbacks, stats: budget.stats })}\n`);
  process.exit(0);
}
const statuses = {};
if (mode === 'stall') {
  const stall = setInterval(() => {
    const until = performance.now() + 20;
    while (performance.now() < until);
  }, 100);
  const end = performance.now() + Number(calls);
  let i = 0;
  while (performance.now() < end) {
    const response = await api(`http://${server}/item/${i++}`);
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
  clearInterval(stall);
  await budget.close();
  await client.quit();
  process.stdout.write(`${JSON.stringify({ statuses, fallbacks, stats: budget.stats })}\n`);
  process.exit(0);
}
for (let i = 0; i < Number(calls); i++) {
  const response = await api(`http://${server}/item/${i}`);
  await response.arrayBuffer();
  statuses[response.status] = (statuses[response.status] ?? 0) + 1;
}
if (mode === 'shared') {
  await budget.close();
  await client.quit();
}
process.stdout.write(`${JSON.stringify({ statuses, fallbacks, stats: budget.stats ?? null })}\n`);
