// How late does Redis answer a loaded process? The measurement behind herdless/redis's default
// `timeoutMs`. PROCESSES child processes, each blocking its event loop STALL_MS in every 100 ms (a
// busy handler, a GC pause), make script calls against one redis-server for DURATION_MS. For each
// candidate timeoutMs it counts the decisions that would be called late by the library's rule — the
// timer fired, then one turn of I/O, and still no reply — and by the timer alone (the rule before).
// Not part of `npm run bench`: it loads the machine on purpose.
//   node bench/redis-lateness.mjs [processes=20] [stallMs=20] [durationMs=3000]
// Needs Debian's redis-server (started here on 127.0.0.1 and a free port, no persistence).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { clearInterval, clearTimeout, setImmediate, setInterval, setTimeout } from 'node:timers';
import { startRedis } from './redis-success.mjs';

const TIMEOUTS = [5, 10, 20, 50, 100, 200];
const SCRIPT = "return redis.call('INCR', KEYS[1])";

async function child(port, durationMs, stallMs) {
  const client = new Redis({ host: '127.0.0.1', port });
  await client.ping();
  const stall = setInterval(() => {
    const until = performance.now() + stallMs;
    while (performance.now() < until);
  }, 100);
  const late = Object.fromEntries(TIMEOUTS.map((t) => [t, 0]));
  const lateByTimer = Object.fromEntries(TIMEOUTS.map((t) => [t, 0]));
  let decisions = 0;
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    let replied = false;
    const timers = TIMEOUTS.map((t) =>
      setTimeout(() => {
        if (!replied) lateByTimer[t]++;
        setImmediate(() => {
          if (!replied) late[t]++;
        });
      }, t),
    );
    await client.eval(SCRIPT, 1, 'lateness');
    replied = true;
    decisions++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const timer of timers) clearTimeout(timer);
  }
  clearInterval(stall);
  await client.quit();
  process.stdout.write(`${JSON.stringify({ decisions, late, lateByTimer })}\n`);
}

async function main(processes, stallMs, durationMs) {
  if (!existsSync('/usr/bin/redis-server')) throw new Error('/usr/bin/redis-server is missing (apt-get install redis-server)');
  const server = await startRedis();
  try {
    const self = fileURLToPath(import.meta.url);
    const kids = Array.from({ length: processes }, () =>
      spawn(process.execPath, [self, 'child', String(server.port), String(durationMs), String(stallMs)], { stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    const total = { decisions: 0, late: {}, lateByTimer: {} };
    await Promise.all(
      kids.map(async (kid) => {
        let out = '';
        kid.stdout.on('data', (chunk) => (out += chunk));
        await once(kid, 'exit');
        const r = JSON.parse(out);
        total.decisions += r.decisions;
        for (const field of ['late', 'lateByTimer']) for (const [t, n] of Object.entries(r[field])) total[field][t] = (total[field][t] ?? 0) + n;
      }),
    );
    console.log(`${processes} processes, a ${stallMs} ms stall every 100 ms, ${total.decisions} decisions`);
    console.log(`| timeoutMs | ${TIMEOUTS.join(' | ')} |`);
    console.log(`|---|${TIMEOUTS.map(() => '---').join('|')}|`);
    console.log(`| late (timer, then a turn of I/O) | ${TIMEOUTS.map((t) => total.late[t]).join(' | ')} |`);
    console.log(`| late by the timer alone | ${TIMEOUTS.map((t) => total.lateByTimer[t]).join(' | ')} |`);
  } finally {
    await server.stop();
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'child') await child(Number(args[0]), Number(args[1]), Number(args[2]));
else await main(Number(mode ?? 20), Number(args[0] ?? 20), Number(args[1] ?? 3000));
