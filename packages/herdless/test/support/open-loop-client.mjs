// An open-loop load generator in its own process (so that the server's blocked event loop cannot
// delay the sends or the clock that times them): argv origin, ratePerSecond, durationMs. Sends
// GETs on a fixed schedule whatever the answers, each on its own connection, and prints one JSON
// line: [{ status, ms }] per request, ms from its send to its answer's end (status 0: a failure).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';

const [origin, rate, duration] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const total = Math.round((rate * duration) / 1000);
const results = new Array(total);
let done = 0;
const start = performance.now();
function send(i) {
  const sentAt = performance.now();
  const request = http.get(`${origin}/work/${i}`, { agent: false }, (response) => {
    response.resume();
    response.on('end', () => finish(i, response.statusCode, sentAt));
  });
  request.on('error', () => finish(i, 0, sentAt));
  request.setTimeout(60_000, () => request.destroy());
}
function finish(i, status, sentAt) {
  results[i] = { status, ms: performance.now() - sentAt };
  if (++done === total) process.stdout.write(JSON.stringify(results) + '\n');
}
let next = 0;
function tick() {
  // Catch up on the schedule (a late timer sends what was due), then wait for the next send.
  const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
  while (next < due) send(next++);
  if (next < total) setTimeout(tick, Math.max(0, ((next * 1000) / rate) - (performance.now() - start)));
}
tick();
