// A second process that restores a circuit breaker from a snapshot another process took. It runs
// the built library (dist/), as a user's next instance would, with its own clocks: a monotonic one
// that starts where the parent says (its readings have nothing to do with the parent's) and a wall
// clock fixed where the parent says (it may disagree with the parent's). It then asks the breaker
// for a call at each probe offset (ms after the restore) and prints what happened as one JSON line.
// argv: snapshot (JSON) monotonicStartMs wallNowMs probes (JSON array of offsets, ascending)
import { ManualClock, circuitBreaker, consecutiveFailures, isCircuitOpenError } from '../../dist/index.js';

const [snapshot, monotonicStart, wallNow, probes] = process.argv.slice(2);
const clock = new ManualClock(Number(monotonicStart));
const breaker = circuitBreaker({
  counting: consecutiveFailures({ threshold: 1 }),
  openDurationMs: 30_000,
  clock,
  now: () => Number(wallNow),
  initialState: JSON.parse(snapshot),
});
const events = [];
breaker.onStateChange((e) => events.push({ type: e.type, afterRestoreMs: e.at - Number(monotonicStart) }));
const seen = [];
let elapsed = 0;
for (const at of JSON.parse(probes)) {
  await clock.advance(at - elapsed);
  elapsed = at;
  const outcome = await breaker.execute(() => 'sent').then(
    () => ({ at, outcome: 'sent' }),
    (e) => (isCircuitOpenError(e) ? { at, outcome: 'refused', retryAfterMs: e.retryAfterMs } : { at, outcome: 'error', message: String(e) }),
  );
  seen.push({ ...outcome, state: breaker.state });
}
process.stdout.write(`${JSON.stringify({ probes: seen, events })}\n`);
