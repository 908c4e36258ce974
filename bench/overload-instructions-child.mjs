// One subject of the overload section's instruction count (run under valgrind by
// instructions.mjs): `warmup` operations, then `calls` more; prints the bytes they allocated.
import { overloadSubjects } from './lib/overload-subjects.mjs';

const [name, warmupArg, callsArg] = process.argv.slice(2);
const call = overloadSubjects()[name];
if (call === undefined) throw new Error(`no overload subject named ${JSON.stringify(name)}`);
const warmup = Number(warmupArg);
const calls = Number(callsArg);
let sink = 0;
for (let i = 0; i < warmup; i++) if (call()) sink++;
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < calls; i++) if (call()) sink++;
const after = process.memoryUsage().heapUsed;
process.stdout.write(JSON.stringify({ allocated: after - before, sink }) + '\n');
