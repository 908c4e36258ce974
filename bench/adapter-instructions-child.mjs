// One subject of the adapter benchmark under valgrind: `warmup` requests, then `calls` requests,
// against a loopback server in a process of its own (valgrind does not follow it: only the
// client's instructions are counted). Usage: node adapter-instructions-child.mjs <subject> <warmup> <calls>
import { adapterSubjects, startAdapterServer } from './lib/adapter-subjects.mjs';

const [name, warmup, calls] = process.argv.slice(2);
const server = await startAdapterServer();
const run = adapterSubjects(server.url)[name];
if (run === undefined) throw new Error(`no subject ${name}`);
for (let i = 0; i < Number(warmup); i++) await run();
for (let i = 0; i < Number(calls); i++) await run();
await server.stop();
process.exit(0);
