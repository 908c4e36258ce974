// One subject of the instruction count (run under valgrind by instructions.mjs): warm up until the
// JIT has settled, then make `calls` sequential successful calls, print the bytes they allocated,
// and exit. Started with a young generation large enough that no GC runs at all, so the heap's
// growth over the calls is what they allocated. Nothing is timed here.
import { breakerSubjects, op, successSubjects } from './lib/subjects.mjs';

const [name, warmupArg, callsArg] = process.argv.slice(2);
const call = { ...successSubjects(), ...breakerSubjects() }[name];
if (call === undefined) throw new Error(`no success subject named ${JSON.stringify(name)}`);
const warmup = Number(warmupArg);
const calls = Number(callsArg);
for (let i = 0; i < warmup; i++) await call(op);
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < calls; i++) await call(op);
const after = process.memoryUsage().heapUsed;
process.stdout.write(JSON.stringify({ allocated: after - before }) + '\n');
