// withRetry(fetch): retries only what can succeed later, honours Retry-After, and never resends a
// POST without an idempotency key.
import { createServer } from 'node:http';
import { withRetry, retryInfo } from 'herdless/http';

let hits = 0;
const keys = [];
const server = createServer((req, res) => {
  hits += 1;
  if (req.method === 'POST') keys.push(req.headers['idempotency-key']);
  // The first two requests are refused: "busy, come back in 1 s" (Retry-After in seconds).
  if (hits <= 2) return res.writeHead(503, { 'Retry-After': '1' }).end();
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

try {
  const api = withRetry(fetch, { maxAttempts: 4, maxRetryAfterMs: 5_000, idempotencyKey: true });
  const started = performance.now();
  const res = await api(`${base}/orders`, { method: 'POST', body: JSON.stringify({ sku: 'A-1' }) });
  const info = retryInfo(res);
  console.log(`status ${res.status} after ${info.attempts} attempts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`the same idempotency key on every attempt: ${new Set(keys).size === 1 && keys.length === 3}`);
} finally {
  server.close();
}
