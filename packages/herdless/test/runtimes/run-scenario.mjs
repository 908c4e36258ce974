// Runs scenario.mjs in the runtime that runs this file (Node, Bun, Deno) against the built library,
// and prints the record as one line of JSON. Arguments: <refusedUrl> <droppedUrl>.
import * as main from '../../dist/index.js';
import * as http from '../../dist/http/index.js';

// The main entry and herdless/http, as a user's bundle would import them.
const herdless = { ...main, ...http };
import { failedConnections } from './scenario.mjs';

const args = globalThis.Deno?.args ?? globalThis.process.argv.slice(2);
const [refusedUrl, droppedUrl] = args;
const record = await failedConnections({ herdless, fetch: globalThis.fetch, refusedUrl, droppedUrl });
console.log(JSON.stringify(record));
