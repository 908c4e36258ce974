// One client process of the discarded-body check: it calls `origin`/big through herdless's retrying
// `client` (axios, fetch or undici), whose first attempt gets a 503 with a 100 MB body and whose
// second gets a 200, and prints how long the call took and how much its resident memory grew, as one
// JSON line. In a process of its own, so that the memory measured is the client's alone. It runs the
// built library (dist/), as a user's process would.
// argv: client origin
import axios from 'axios';
import { Agent, request } from 'undici';
import { constantBackoff } from '../../dist/index.js';
import { retryAdapter } from '../../dist/axios/index.js';
import { withRetry } from '../../dist/http/index.js';
import { retryInterceptor } from '../../dist/undici/index.js';

const [client, origin] = process.argv.slice(2);
const options = { maxAttempts: 2, backoff: constantBackoff({ delayMs: 0 }) };
let call;
if (client === 'axios') {
  const api = axios.create({ adapter: retryAdapter(options) });
  call = async (path) => {
    const response = await api.get(`${origin}${path}`);
    return { status: response.status, body: response.data };
  };
} else if (client === 'fetch') {
  const api = withRetry(fetch, options);
  call = async (path) => {
    const response = await api(`${origin}${path}`);
    return { status: response.status, body: await response.text() };
  };
} else {
  const dispatcher = new Agent().compose(retryInterceptor(options));
  call = async (path) => {
    const response = await request(`${origin}${path}`, { dispatcher });
    return { status: response.statusCode, body: await response.body.text() };
  };
}

// Warm up: the modules a first call loads, and a collected heap, before the baseline.
await call('/small');
globalThis.gc?.();
const before = process.memoryUsage().rss;
const started = performance.now();
const result = await call('/big');
const ms = performance.now() - started;
const growth = process.memoryUsage().rss - before;
process.stdout.write(`${JSON.stringify({ status: result.status, body: result.body, ms, growthMb: growth / 2 ** 20 })}\n`);
process.exit(0);
