// 2. One 0 ms retry: the first attempt fails (a transient error), the second succeeds, with a 0 ms
// wait in between — one call at a time, and 1,000 calls at once. Also counts the timers each
// library schedules per call.
import { createHook } from 'node:async_hooks';
import { compare } from './lib/harness.mjs';
import { failsOnce, zeroRetrySubjects } from './lib/subjects.mjs';

const CONCURRENT = 1000;

/**
 * Timers per retried call, counted over `calls` sequential calls: every Timeout resource Node.js
 * creates (setTimeout by any name, timers/promises), seen through async_hooks.
 */
async function timersPerCall(call, calls) {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'Timeout') count++;
    },
  }).enable();
  try {
    for (let i = 0; i < calls; i++) {
      const value = await call(failsOnce());
      if (value !== 1) throw new Error(`resolved with ${String(value)}`);
    }
  } finally {
    hook.disable();
  }
  return count / calls;
}

export async function benchZeroRetry({ rounds, minCpuMs }) {
  const subjects = zeroRetrySubjects();
  const timers = {};
  for (const [name, call] of Object.entries(subjects)) timers[name] = await timersPerCall(call, 50);
  const sequential = await compare(
    Object.fromEntries(Object.entries(subjects).map(([name, call]) => [name, () => call(failsOnce())])),
    { rounds, minCpuMs, batchSamples: 32, minSamples: 4 },
  );
  const concurrent = await compare(
    Object.fromEntries(
      Object.entries(subjects).map(([name, call]) => [name, () => Promise.all(Array.from({ length: CONCURRENT }, () => call(failsOnce())))]),
    ),
    { rounds, minCpuMs, perCall: CONCURRENT, minSamples: 4 },
  );
  return { timers, sequential, concurrent, concurrency: CONCURRENT };
}
