// 3. Heap growth after N sequential successful calls, each library in its own fresh process
// (`node --expose-gc`), so that one library's garbage or JIT state never lands in another's figure.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { spread } from './lib/harness.mjs';
import { heapSubjects } from './lib/subjects.mjs';

const run = promisify(execFile);
const child = new URL('./heap-child.mjs', import.meta.url).pathname;

export async function benchHeap({ rounds, calls }) {
  const keys = Object.keys(heapSubjects);
  const growth = Object.fromEntries(keys.map((k) => [k, []]));
  const nsPerCall = Object.fromEntries(keys.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(i + r) % keys.length];
      const { stdout } = await run(process.execPath, ['--expose-gc', child, key, String(calls)], { maxBuffer: 1 << 20 });
      const result = JSON.parse(stdout.trim().split('\n').pop());
      growth[key].push(result.growth);
      nsPerCall[key].push((result.ms * 1e6) / calls);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, { growth: spread(growth[k]), nsPerCall: spread(nsPerCall[k]), rounds: growth[k] }]));
}
