// Runs one in-process section in a fresh process (run.mjs starts several and pools their rounds:
// one process's JIT decisions — what got inlined where — then weigh on a figure only partly).
import { benchAdapters } from './adapters.mjs';
import { benchDecisions } from './decisions.mjs';
import { benchOverload } from './overload.mjs';
import { benchRedisSuccess } from './redis-success.mjs';
import { benchSuccessPath } from './success-path.mjs';
import { benchZeroRetry } from './zero-retry.mjs';

const sections = { adapters: benchAdapters, success: benchSuccessPath, zero: benchZeroRetry, decisions: benchDecisions, overload: benchOverload, redis: benchRedisSuccess };
const [name, settingsJson] = process.argv.slice(2);
const result = await sections[name](JSON.parse(settingsJson));
process.stdout.write(JSON.stringify(result) + '\n');
