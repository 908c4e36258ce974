// One heap measurement in a fresh process (run by heap.mjs with --expose-gc): `calls` sequential
// successful calls through one subject; prints the heap before and after (each after full GCs).
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers';
import { heapSubjects, op } from './lib/subjects.mjs';

const [key, callsArg] = process.argv.slice(2);
const calls = Number(callsArg);
const make = heapSubjects[key];
if (!make || !globalThis.gc) throw new Error('usage: node --expose-gc heap-child.mjs <subject> <calls>');

async function settle() {
  // Let pending timers' and finalizers' work run, then collect everything twice.
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
}

const call = make();
for (let i = 0; i < 20_000; i++) await call(op); // warm-up: JIT, lazily made structures
await settle();
const before = process.memoryUsage().heapUsed;
const t0 = performance.now();
for (let i = 0; i < calls; i++) await call(op);
const ms = performance.now() - t0;
await settle();
const after = process.memoryUsage().heapUsed;
call.close?.();
process.stdout.write(JSON.stringify({ key, calls, before, after, growth: after - before, ms }) + '\n');
