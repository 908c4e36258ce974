// A three-service chain that retries at one layer: user → frontend → backend → db, on 127.0.0.1.
// The db is overloaded and sheds every request. The backend retries it; a shed retry comes back
// with "overloaded; don't retry" (and once retries are over 10 % of the db's recent requests, so do
// first attempts), so the backend gives up and tells the frontend "don't retry" in turn. The
// frontend, the edge, answers the user a plain 503; the user's client is the only layer whose
// retries reach the end of the chain. Run it after `npm run build`:
//   node examples/three-services.mjs
import { once } from 'node:events';
import http from 'node:http';
import { retryInfo, throwIfNotOk, withRetry } from 'herdless/http';
import { loadShedder } from 'herdless/server';

const counts = { frontend: 0, backend: 0, db: 0 };

async function start(name, handler) {
  const server = http.createServer((req, res) => {
    counts[name]++;
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

// db: at most 1 request in flight, no queue. Its one slot is taken for the whole run, so every
// request is shed: 503 with Retry-After, and X-Herdless-Retry: no for a retry.
const dbShedding = loadShedder({ maxInFlight: 1, retryAfterMs: 10 });
const db = await start('db', dbShedding.node((_req, res) => res.end('rows')));
const busy = dbShedding.shedder.admit(1); // a slow query holds the only slot

// backend: retries the db (3 attempts); when it gives up, loadShedder answers 503 with
// X-Herdless-Retry: no (propagate, the default), so the frontend does not retry.
const toDb = withRetry(fetch, { maxAttempts: 3 });
const backend = await start('backend', loadShedder({ maxInFlight: 100 }).node(async (_req, res) => {
  res.end(await throwIfNotOk(await toDb(db.url)).text());
}));

// frontend: the edge. Its callers (users) are the layer that should retry: propagate: false.
const toBackend = withRetry(fetch, { maxAttempts: 3 });
const frontend = await start('frontend', loadShedder({ maxInFlight: 100, propagate: false }).node(async (_req, res) => {
  res.end(await throwIfNotOk(await toBackend(backend.url)).text());
}));

// The user's client: 3 attempts, waiting as the frontend's Retry-After says (or the backoff).
const user = withRetry(fetch, { maxAttempts: 3 });
const res = await user(frontend.url);
await res.text();
console.log(`user got ${res.status} after ${retryInfo(res)?.attempts} attempts (${retryInfo(res)?.reason})`);
console.log(`requests received: frontend ${counts.frontend}, backend ${counts.backend}, db ${counts.db}`);
console.log('db load shedder:', JSON.stringify(dbShedding.stats()));

busy.release();
for (const { server } of [frontend, backend, db]) {
  server.closeAllConnections();
  server.close();
}
