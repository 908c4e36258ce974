import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { circuitBreaker, consecutiveFailures, constantBackoff, failureRatio, isCircuitOpenError, type BreakerEvent, type BreakerState, type CountingStrategy } from 'herdless';
import { circuitBreakerMachine, type BreakerOutcome, type BreakerPermit } from 'herdless/sim';

const ALLOWED = new Set(['closed→open', 'open→half-open', 'half-open→open', 'half-open→closed']);
const stateAfter = (e: BreakerEvent): BreakerState => (e.type === 'close' ? 'closed' : e.type);

const config = fc.record({
  halfOpenMaxCalls: fc.integer({ min: 1, max: 4 }),
  successThreshold: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  openDurationMs: fc.integer({ min: 0, max: 1000 }),
  counting: fc.oneof(
    fc.integer({ min: 1, max: 4 }).map((threshold): CountingStrategy => consecutiveFailures({ threshold })),
    fc
      .record({ ratio: fc.double({ min: 0.1, max: 1, noNaN: true }), minimumCalls: fc.integer({ min: 1, max: 6 }), windowMs: fc.integer({ min: 1, max: 3000 }) })
      .map((o): CountingStrategy => failureRatio(o)),
  ),
});

const step = fc.oneof(
  fc.record({ op: fc.constant('acquire' as const), dt: fc.integer({ min: 0, max: 600 }) }),
  fc.record({
    op: fc.constant('release' as const),
    dt: fc.integer({ min: 0, max: 600 }),
    pick: fc.nat(),
    outcome: fc.constantFrom<BreakerOutcome>('success', 'failure', 'failure', 'ignored'),
  }),
  fc.record({ op: fc.constant('peek' as const), dt: fc.integer({ min: 0, max: 600 }) }),
);

describe('state machine invariants (property)', () => {
  it('never more than halfOpenMaxCalls trials in flight; only the allowed edges; refusals change nothing', () => {
    fc.assert(
      fc.property(config, fc.array(step, { maxLength: 200 }), (options, steps) => {
        const m = circuitBreakerMachine(options);
        const events: BreakerEvent[] = [];
        m.onStateChange((e) => events.push(e));
        let now = 0;
        let state: BreakerState = 'closed';
        let generation = 0;
        const out: BreakerPermit[] = [];
        const released = new Set<BreakerPermit>();

        for (const s of steps) {
          now += s.dt;
          const before = events.length;
          if (s.op === 'acquire') {
            const snap = JSON.stringify(m.snapshot(now, 0));
            const seen = events.length;
            const a = m.acquire(now);
            expect(events.length).toBe(seen); // the snapshot already made any due transition
            if (a.kind === 'permit') {
              out.push(a);
              expect(a.trial).toBe(m.state(now) === 'half-open');
            } else {
              expect(JSON.stringify(m.snapshot(now, 0))).toBe(snap);
              expect(Number.isFinite(a.retryAfterMs) && a.retryAfterMs >= 0).toBe(true);
              const sn = m.snapshot(now, 0);
              expect(a.state).toBe(sn.state);
              if (a.state === 'open') expect(a.retryAfterMs).toBe(sn.remainingOpenMs);
              else expect(sn.halfOpenInFlight).toBe(options.halfOpenMaxCalls);
            }
          } else if (s.op === 'release' && out.length > 0) {
            const p = out.splice(s.pick % out.length, 1)[0]!;
            m.state(now); // any due transition happens here, before the release is judged
            const stale = p.generation !== m.generation;
            const seen = events.length;
            const snap = JSON.stringify(m.snapshot(now, 0));
            const changed = m.release(p, s.outcome, now);
            released.add(p);
            expect(changed).toBe(events.length > seen);
            if (stale) {
              expect(changed).toBe(false);
              expect(JSON.stringify(m.snapshot(now, 0))).toBe(snap);
            }
            if (changed) expect(s.outcome).not.toBe('ignored');
            // A second release never changes anything.
            expect(m.release(p, 'failure', now)).toBe(false);
          }
          m.state(now); // a zero open duration half-opens right away: make it happen before checking

          // Transitions only along the allowed edges, chained, one generation each.
          for (const e of events.slice(before)) {
            expect(ALLOWED.has(`${e.from}→${stateAfter(e)}`)).toBe(true);
            expect(e.from).toBe(state);
            state = stateAfter(e);
            generation++;
            expect(e.at).toBe(now);
          }
          const snap = m.snapshot(now, 0);
          expect(snap.state).toBe(state);
          expect(m.generation).toBe(generation);

          // Trials in flight: the current generation's unreleased trial permits, never above the cap.
          const current = out.filter((p) => p.trial && p.generation === m.generation).length;
          expect(snap.halfOpenInFlight).toBe(snap.state === 'half-open' ? current : 0);
          expect(snap.halfOpenInFlight).toBeLessThanOrEqual(options.halfOpenMaxCalls);
          expect(snap.halfOpenSuccesses).toBeLessThan(m.successThreshold);
          if (snap.state === 'open') expect(snap.remainingOpenMs).toBeLessThanOrEqual(snap.openDurationMs!);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('async shell invariants (property)', () => {
  it('under any interleaving: at most halfOpenMaxCalls trials run, every permit comes back, nothing is stuck', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ outcome: fc.constantFrom('success', 'failure', 'throw'), abort: fc.boolean() }), { minLength: 1, maxLength: 25 }),
        async (s, halfOpenMaxCalls, successThreshold, calls) => {
          const clock = { t: 0, now: () => clock.t };
          // The first opening lasts 1000 ms (half-open at t = 1000, where the clock stays); any
          // reopening lasts "forever", so every trial below belongs to one half-open period.
          const openDurationMs = { ...constantBackoff(), delay: (n: number) => (n === 1 ? 1000 : 1e9) };
          const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs, halfOpenMaxCalls, successThreshold, clock });
          await breaker.execute(() => Promise.reject(Object.assign(new Error('x'), { status: 503 }))).catch(() => {});
          clock.t = 1000;

          let running = 0;
          let trials = 0;
          let trialSuccesses = 0;
          const results = calls.map((c, i) =>
            s.schedule(Promise.resolve(), `start ${i}`).then(() => {
              const controller = new AbortController();
              if (c.abort) s.schedule(Promise.resolve(), `abort ${i}`).then(() => controller.abort(new Error(`abort ${i}`)));
              return breaker.execute(
                ({ signal, trial }) => {
                  // Once enough trials succeeded the breaker is closed and admits everyone.
                  if (!trial) {
                    expect(breaker.state).toBe('closed');
                    return 'closed call';
                  }
                  trials++;
                  running++;
                  expect(running).toBeLessThanOrEqual(halfOpenMaxCalls);
                  expect(breaker.snapshot().halfOpenInFlight).toBeLessThanOrEqual(halfOpenMaxCalls);
                  if (c.outcome === 'throw') {
                    running--;
                    throw Object.assign(new Error(`sync ${i}`), { code: 'ECONNRESET' });
                  }
                  return new Promise<string>((resolve, reject) => {
                    // Honours its signal, so `running` never exceeds the trials whose permits are out.
                    let over = false;
                    signal!.addEventListener('abort', () => {
                      if (over) return;
                      over = true;
                      running--;
                      reject(signal!.reason);
                    });
                    s.schedule(Promise.resolve(), `op ${i}`).then(() => {
                      if (over) return;
                      over = true;
                      running--;
                      if (c.outcome === 'success') {
                        trialSuccesses++;
                        resolve(`ok ${i}`);
                      } else reject(Object.assign(new Error(`fail ${i}`), { status: 503 }));
                    });
                  });
                },
                { signal: controller.signal },
              );
            }),
          );
          const settled = await s.waitFor(Promise.allSettled(results));
          await s.waitAll();

          expect(running).toBe(0);
          for (const r of settled) {
            if (r.status === 'rejected') {
              const e = r.reason as Error;
              expect(isCircuitOpenError(e) || /^(abort|fail|sync) \d+$/.test(e.message)).toBe(true);
            }
          }
          const snap = breaker.snapshot();
          expect(snap.halfOpenInFlight).toBe(0);
          expect(['half-open', 'open', 'closed']).toContain(snap.state);
          if (snap.state === 'closed') expect(trialSuccesses).toBeGreaterThanOrEqual(successThreshold);
          if (snap.state === 'half-open') {
            // Not stuck: the next caller gets a trial.
            let reached = false;
            await breaker.execute(() => (reached = true));
            expect(reached).toBe(true);
          }
          expect(trials).toBeGreaterThanOrEqual(Math.min(1, calls.length));
        },
      ),
      { numRuns: 200 },
    );
  });
});
