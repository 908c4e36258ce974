// The breaker across a service's life: snapshots restored in this process (in another one whose
// clocks differ: breaker-restore-process.test.ts), isolate()/endIsolation()/reset() with their
// events and telemetry, and half-open sampling as a ratio. Time is injected everywhere: the machine takes `now`, the shell a ManualClock
// and a fixed wall clock.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  circuitBreaker,
  consecutiveFailures,
  failureRatio,
  isCircuitOpenError,
  type BreakerEvent,
  type BreakerSnapshot,
  type CircuitBreakerOptions,
  type TelemetryEvent,
} from 'herdless';
import { circuitBreakerMachine, type BreakerPermit, type BreakerRejection, type CircuitBreakerMachine } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

/** A wall-clock instant (ms since the epoch) the tests stamp snapshots with. */
const WALL = 1_764_600_000_000;

function permit(m: CircuitBreakerMachine, now: number): BreakerPermit {
  const a = m.acquire(now);
  if (a.kind !== 'permit') throw new Error(`expected a permit at ${now}, got a rejection`);
  return a;
}
function rejection(m: CircuitBreakerMachine, now: number): BreakerRejection {
  const a = m.acquire(now);
  if (a.kind !== 'rejection') throw new Error(`expected a rejection at ${now}, got a permit`);
  return a;
}
/** A machine opened at t = 0 for 30 s (one failure opens it). */
function openedAt0(options: Parameters<typeof circuitBreakerMachine>[0] = {}): CircuitBreakerMachine {
  const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 30_000, ...options });
  m.release(permit(m, 0), 'failure', 0);
  return m;
}
const down = () => Object.assign(new Error('down'), { status: 503 });

describe('snapshot → restore (one process, the machine)', () => {
  it('an open breaker, restored with its clock 10 minutes off and no time elapsed, refuses for exactly the rest of its period', () => {
    const m = openedAt0();
    const snap = m.snapshot(12_000, WALL); // 18 s left
    expect(snap).toMatchObject({ state: 'open', remainingOpenMs: 18_000, openDurationMs: 30_000, openings: 1, takenAt: WALL });
    const r = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 30_000 });
    const start = 600_000 + 12_000; // this clock reads 10 minutes more than the other
    r.restore(JSON.parse(JSON.stringify(snap)) as BreakerSnapshot, start, WALL);
    expect(rejection(r, start)).toEqual({ kind: 'rejection', state: 'open', retryAfterMs: 18_000, isolated: false });
    expect(rejection(r, start + 17_999).retryAfterMs).toBe(1);
    expect(permit(r, start + 18_000).trial).toBe(true);
    expect(r.state(start + 18_000)).toBe('half-open');
  });

  it('the wall-clock time since takenAt is subtracted; a restorer whose wall clock is behind counts none; one ahead half-opens at once', () => {
    const snap = openedAt0().snapshot(12_000, WALL);
    const make = () => circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 30_000 });
    const later = make();
    later.restore(snap, 0, WALL + 5_000);
    expect(rejection(later, 0).retryAfterMs).toBe(13_000);
    const behind = make();
    behind.restore(snap, 0, WALL - 600_000);
    expect(rejection(behind, 0).retryAfterMs).toBe(18_000);
    const ahead = make();
    ahead.restore(snap, 0, WALL + 600_000);
    expect(permit(ahead, 0).trial).toBe(true);
    expect(rejection(ahead, 0)).toMatchObject({ state: 'half-open' }); // one trial, not a flood
  });

  it('the backoff continues: a failed trial after a restore uses the next step (openings carried over)', () => {
    const backoff = { name: 'steps', maxDelayMs: 4000, toJSON: () => ({ kind: 'steps' }), delay: (n: number) => n * 1000 };
    const rng = { random: () => 0.5 };
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: backoff as never, random: rng });
    m.release(permit(m, 0), 'failure', 0);
    m.release(permit(m, 1000), 'failure', 1000); // opening 2: 2 000 ms
    const r = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: backoff as never, random: rng });
    r.restore(m.snapshot(1500, WALL), 50, WALL);
    expect(rejection(r, 50).retryAfterMs).toBe(1500);
    r.release(permit(r, 1550), 'failure', 1550);
    expect(r.snapshot(1550, WALL)).toMatchObject({ state: 'open', openings: 3, openDurationMs: 3000, remainingOpenMs: 3000 });
  });

  it('half-open restores as half-open with no trial results; closed restores its consecutive count', () => {
    const m = openedAt0({ halfOpenMaxCalls: 2, successThreshold: 2 });
    m.release(permit(m, 30_000), 'success', 30_001);
    permit(m, 30_002);
    const snap = m.snapshot(30_003, WALL);
    expect(snap).toMatchObject({ state: 'half-open', halfOpenInFlight: 1, halfOpenSuccesses: 1 });
    const r = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), halfOpenMaxCalls: 2, successThreshold: 2 });
    r.restore(snap, 5, WALL);
    expect(r.snapshot(5, WALL)).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, halfOpenSuccesses: 0, openings: 1 });

    const c = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 3 }) });
    c.release(permit(c, 0), 'failure', 0);
    c.release(permit(c, 0), 'failure', 0);
    const rc = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 3 }) });
    rc.restore(c.snapshot(0, WALL), 0, WALL);
    expect(rc.release(permit(rc, 0), 'failure', 0)).toBe(true); // the third in a row
  });

  it('a failure-ratio window comes back with its ages: counts still in the window count, older ones age out on time', () => {
    const counting = failureRatio({ ratio: 0.5, windowMs: 10_000, buckets: 10, minimumCalls: 4 });
    const m = circuitBreakerMachine({ counting });
    for (const t of [1000, 1000, 8000]) m.release(permit(m, t), 'failure', t);
    const snap = m.snapshot(9500, WALL);
    expect(snap.counts).toMatchObject({ calls: 3, failures: 3, recent: [{ ageMs: 1500, calls: 1, failures: 1 }, { ageMs: 8500, calls: 2, failures: 2 }] });
    const r = circuitBreakerMachine({ counting });
    r.restore(snap, 100_000, WALL + 500); // 500 ms in storage: the two oldest are 9 000 ms old now
    expect(r.snapshot(100_000, WALL).counts).toMatchObject({ calls: 3, failures: 3 });
    expect(r.snapshot(101_000, WALL).counts).toMatchObject({ calls: 1, failures: 1 }); // 10 s on: gone
    const again = circuitBreakerMachine({ counting });
    again.restore(snap, 100_000, WALL);
    expect(again.release(permit(again, 100_000), 'failure', 100_000)).toBe(true); // 4 of 4 failed
  });

  type Case = [name: string, edit: (s: Record<string, unknown>) => unknown, field: string];
  const cases: Case[] = [
    ['not an object', () => 'open', 'snapshot'],
    ['null', () => null, 'snapshot'],
    ['another JSON document', (s) => ({ ...s, schema: 'opossum' }), 'snapshot.schema'],
    ['a newer version', (s) => ({ ...s, schemaVersion: 2 }), 'snapshot.schemaVersion'],
    ['no takenAt', (s) => ({ ...s, takenAt: undefined }), 'snapshot.takenAt'],
    ['a NaN takenAt (null after JSON)', (s) => ({ ...s, takenAt: null }), 'snapshot.takenAt'],
    ['an unknown state', (s) => ({ ...s, state: 'ajar' }), 'snapshot.state'],
    ['isolated not a boolean', (s) => ({ ...s, isolated: 'no' }), 'snapshot.isolated'],
    ['isolated but closed', (s) => ({ ...s, state: 'closed', isolated: true, openings: 0 }), 'snapshot.isolated'],
    ['open with no opening', (s) => ({ ...s, openings: 0 }), 'snapshot.openings'],
    ['closed with openings', (s) => ({ ...s, state: 'closed' }), 'snapshot.openings'],
    ['fractional openings', (s) => ({ ...s, openings: 1.5 }), 'snapshot.openings'],
    ['no remaining time', (s) => ({ ...s, remainingOpenMs: undefined }), 'snapshot.remainingOpenMs'],
    ['more remaining than the period', (s) => ({ ...s, remainingOpenMs: 30_001 }), 'snapshot.remainingOpenMs'],
    ['an infinite open duration', (s) => ({ ...s, openDurationMs: Infinity }), 'snapshot.openDurationMs'],
    ['no counts', (s) => ({ ...s, counts: undefined }), 'snapshot.counts'],
    ['counts of another strategy', (s) => ({ ...s, counts: { strategy: 'failure ratio', recent: [] } }), 'snapshot.counts.strategy'],
    ['a negative count', (s) => ({ ...s, counts: { strategy: 'consecutive failures', consecutiveFailures: -1 } }), 'snapshot.counts.consecutiveFailures'],
    ['a fractional count', (s) => ({ ...s, counts: { strategy: 'consecutive failures', consecutiveFailures: 1.5 } }), 'snapshot.counts.consecutiveFailures'],
  ];
  it.each(cases)('refuses %s, naming the field, and changes nothing', (_name, edit, field) => {
    const good = openedAt0().snapshot(12_000, WALL) as unknown as Record<string, unknown>;
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 2 }) });
    m.release(permit(m, 0), 'failure', 0);
    const before = JSON.stringify(m.snapshot(0, WALL));
    const generation = m.generation;
    const error = invalidOption(() => m.restore(edit(good) as BreakerSnapshot, 0, WALL));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`circuitBreaker: ${field}`);
    expect(error.requirement).toMatch(/^(must|can|is) \S/);
    expect(JSON.stringify(m.snapshot(0, WALL))).toBe(before);
    expect(m.generation).toBe(generation);
  });

  it('a failure-ratio window that is malformed anywhere is refused whole (its earlier entries are not applied)', () => {
    const counting = failureRatio({ minimumCalls: 1, ratio: 1 });
    const base = { ...circuitBreakerMachine({ counting }).snapshot(0, WALL) };
    const bad: [unknown, string][] = [
      [undefined, 'snapshot.counts.recent'],
      [[{ ageMs: 0, calls: 1, failures: 1 }, 'x'], 'snapshot.counts.recent[1]'],
      [[null], 'snapshot.counts.recent[0]'],
      [[[0, 1, 1]], 'snapshot.counts.recent[0]'],
      [[{ ageMs: 0, calls: 1, failures: 2 }], 'snapshot.counts.recent[0].failures'],
      [[{ ageMs: 0, calls: 2, failures: 0.5 }], 'snapshot.counts.recent[0].failures'],
      [[{ ageMs: 0, calls: 1.5, failures: 0 }], 'snapshot.counts.recent[0].calls'],
      [[{ ageMs: 0, calls: -1, failures: 0 }], 'snapshot.counts.recent[0].calls'],
      [[{ ageMs: 500, calls: 1, failures: 0 }, { ageMs: 100, calls: 1, failures: 0 }], 'snapshot.counts.recent[1].ageMs'],
      [Array.from({ length: 1001 }, (_, i) => ({ ageMs: i, calls: 1, failures: 0 })), 'snapshot.counts.recent'],
    ];
    for (const [recent, field] of bad) {
      const m = circuitBreakerMachine({ counting });
      const error = invalidOption(() => m.restore({ ...base, counts: { ...base.counts, recent } } as never, 0, WALL));
      expect(error.field).toBe(field);
      expect(error.requirement).toMatch(/^must \S/);
      expect(m.snapshot(0, WALL).counts).toMatchObject({ calls: 0 });
    }
    // 1 000 entries, a window's most, are taken.
    const full = circuitBreakerMachine({ counting: failureRatio({ minimumCalls: 1, ratio: 1, windowMs: 1000, buckets: 1000 }) });
    const recent = Array.from({ length: 1000 }, (_, i) => ({ ageMs: i, calls: 1, failures: 0 }));
    full.restore({ ...base, counts: { ...base.counts, recent } } as never, 5000, WALL);
    expect(full.snapshot(5000, WALL).counts).toMatchObject({ calls: 1000, failures: 0 });
  });

  it('a counting strategy whose counter cannot restore starts from zero; the rest of the snapshot applies', () => {
    let failures = 0;
    const counting = {
      name: 'mine',
      toJSON: () => ({ kind: 'mine' }),
      create: () => ({
        timeless: true,
        record: (failed: boolean) => (failed ? ++failures >= 3 : ((failures = 0), false)),
        reset: () => void (failures = 0),
        snapshot: () => ({ strategy: 'mine', failures }),
      }),
    };
    const m = circuitBreakerMachine({ counting, openDurationMs: 1000 });
    m.release(permit(m, 0), 'failure', 0);
    m.release(permit(m, 0), 'failure', 0);
    const open = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    open.release(permit(open, 0), 'failure', 0);
    m.restore({ ...open.snapshot(0, WALL), counts: { strategy: 'mine', failures: 2 } }, 0, WALL);
    expect(m.snapshot(0, WALL)).toMatchObject({ state: 'open', remainingOpenMs: 1000, counts: { strategy: 'mine', failures: 0 } });
  });

  it('a permit from before a restore is stale after the change that follows it', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const before = permit(m, 0);
    m.restore(circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }) }).snapshot(0, WALL), 0, WALL);
    m.release(permit(m, 0), 'failure', 0); // opens
    expect(m.release(before, 'failure', 1)).toBe(false);
    expect(m.snapshot(1, WALL)).toMatchObject({ state: 'open', openings: 1, remainingOpenMs: 999 });
  });

  it('permits and isolation handles from before a restore stay stale, however many changes follow', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const closed = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }) }).snapshot(0, WALL);
    const before = permit(m, 0);
    const held = m.isolate(0);
    m.restore(closed, 0, WALL);
    m.release(permit(m, 0), 'failure', 0); // opens: one more change
    m.reset(1);
    expect(m.release(before, 'failure', 2)).toBe(false);
    expect(held.release(2)).toBe(false);
    expect(m.state(2)).toBe('closed');
  });
});

describe('isolate, endIsolation, reset (the machine)', () => {
  it('isolation refuses every call whatever the timers say; nested isolations; the last release half-opens', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const events: BreakerEvent[] = [];
    m.onStateChange((e) => events.push(e));
    const a = m.isolate(10);
    const b = m.isolate(20);
    expect(m.isolated).toBe(true);
    expect(rejection(m, 1_000_000)).toEqual({ kind: 'rejection', state: 'open', retryAfterMs: Infinity, isolated: true });
    expect(a.release(30)).toBe(false); // b still holds it
    expect(a.release(31)).toBe(false); // twice: nothing
    expect(rejection(m, 40).isolated).toBe(true);
    expect(b.release(50)).toBe(true);
    expect(m.state(50)).toBe('half-open');
    expect(events).toEqual([
      { type: 'isolate', from: 'closed', at: 10 },
      { type: 'half-open', from: 'open', at: 50, released: true },
    ]);
    m.release(permit(m, 60), 'success', 61);
    expect(m.state(61)).toBe('closed');
  });

  it('permits and handles stay stale across any later changes (generations and isolation epochs only ever go up)', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const p1 = permit(m, 0);
    m.isolate(0).release(0); // isolated, then half-open: two changes
    expect(m.release(p1, 'failure', 0)).toBe(false);
    expect(m.state(0)).toBe('half-open');
    m.reset(0);
    const p2 = permit(m, 0);
    m.reset(0);
    m.release(permit(m, 0), 'failure', 0); // opens
    expect(m.release(p2, 'failure', 0)).toBe(false);
    const h1 = m.isolate(1);
    m.endIsolation(1);
    m.reset(1);
    expect(h1.release(2)).toBe(false);
    const h2 = m.isolate(3);
    m.reset(3);
    m.isolate(3);
    m.endIsolation(3);
    expect(h2.release(4)).toBe(false);
    expect(m.state(4)).toBe('half-open');
  });

  it('every event kind reaches its listeners (none throws), and a lazily noticed half-open says released: false', () => {
    const errors: unknown[] = [];
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 10, onListenerError: (e) => void errors.push(e) });
    const seen: string[] = [];
    for (const type of ['open', 'half-open', 'close', 'isolate', 'reset'] as const) m.on(type, (e) => seen.push(`${e.type}${'released' in e ? `:${e.released}` : ''}`));
    m.release(permit(m, 0), 'failure', 0);
    expect(m.state(10)).toBe('half-open');
    m.isolate(11);
    m.endIsolation(12);
    m.reset(13);
    expect(seen).toEqual(['open', 'half-open:false', 'isolate', 'half-open:true', 'reset']);
    expect(errors).toEqual([]);
  });

  it('trials and closed-state calls in flight when isolated are stale; reset closes, forgets counts and disarms handles', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 1000 });
    const events: BreakerEvent[] = [];
    m.onStateChange((e) => events.push(e));
    const slow = permit(m, 0);
    m.release(permit(m, 0), 'failure', 0);
    const held = m.isolate(5);
    expect(m.release(slow, 'failure', 6)).toBe(false);
    m.reset(7);
    expect(m.isolated).toBe(false);
    expect(m.snapshot(7, WALL)).toMatchObject({ state: 'closed', openings: 0, counts: { consecutiveFailures: 0 } });
    expect(held.release(8)).toBe(false);
    expect(m.state(8)).toBe('closed');
    m.reset(9); // a reset of a closed breaker is still reported
    expect(events).toEqual([
      { type: 'isolate', from: 'closed', at: 5 },
      { type: 'reset', from: 'open', wasIsolated: true, at: 7 },
      { type: 'reset', from: 'closed', wasIsolated: false, at: 9 },
    ]);
  });

  it('an isolation survives a snapshot; endIsolation ends the restored one (no handle holds it)', () => {
    const m = openedAt0();
    m.isolate(100);
    const snap = m.snapshot(200, WALL);
    expect(snap).toMatchObject({ state: 'open', isolated: true, openings: 1 });
    expect(snap).not.toHaveProperty('remainingOpenMs');
    const r = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 30_000 });
    r.restore(snap, 0, WALL + 3_600_000);
    expect(rejection(r, 1e9).isolated).toBe(true);
    expect(r.state(1e9)).toBe('open'); // no timer ends a restored isolation
    expect(r.endIsolation(5)).toBe(true);
    expect(r.endIsolation(6)).toBe(false);
    expect(r.state(6)).toBe('half-open');
    r.release(permit(r, 7), 'failure', 7); // a failed trial: opening 2
    expect(r.snapshot(7, WALL)).toMatchObject({ state: 'open', openings: 2, remainingOpenMs: 30_000 });
  });
});

describe('half-open sampling as a ratio', () => {
  it('{ calls: 10, ratio: 0.5 }: 10 trials at once; the 5th failure reopens', () => {
    const m = openedAt0({ halfOpenSampling: { calls: 10, ratio: 0.5 } });
    expect([m.halfOpenMaxCalls, m.trialFailureThreshold, m.successThreshold]).toEqual([10, 5, 6]);
    const trials = Array.from({ length: 10 }, () => permit(m, 30_000));
    expect(rejection(m, 30_000).state).toBe('half-open');
    for (let i = 0; i < 4; i++) expect(m.release(trials[i]!, 'failure', 30_001)).toBe(false);
    expect(m.snapshot(30_001, WALL)).toMatchObject({ state: 'half-open', halfOpenFailures: 4, halfOpenInFlight: 6 });
    expect(m.release(trials[4]!, 'failure', 30_002)).toBe(true);
    expect(m.state(30_002)).toBe('open');
    expect(m.release(trials[5]!, 'success', 30_003)).toBe(false); // stale
  });

  it('the 6th success closes, even with trials still running; failures below the share do not reopen', () => {
    const m = openedAt0({ halfOpenSampling: { calls: 10, ratio: 0.5 } });
    const trials = Array.from({ length: 10 }, () => permit(m, 30_000));
    for (let i = 0; i < 4; i++) m.release(trials[i]!, 'failure', 30_001);
    for (let i = 4; i < 9; i++) expect(m.release(trials[i]!, 'success', 30_002)).toBe(false);
    expect(m.release(trials[9]!, 'success', 30_003)).toBe(true);
    expect(m.state(30_003)).toBe('closed');
  });

  it('the share is compared by division: 3 of 10 meets 0.3; halfOpenMaxCalls may run the sample in turns', () => {
    const m = openedAt0({ halfOpenSampling: { calls: 10, ratio: 0.3 }, halfOpenMaxCalls: 2 });
    expect([m.trialFailureThreshold, m.successThreshold]).toEqual([3, 8]);
    const [a, b] = [permit(m, 30_000), permit(m, 30_000)];
    expect(rejection(m, 30_000).state).toBe('half-open');
    m.release(a, 'failure', 30_001);
    m.release(permit(m, 30_001), 'failure', 30_002);
    expect(m.release(b, 'failure', 30_003)).toBe(true);
  });

  it('a trial that outlives halfOpenTrialTimeoutMs counts as one failed trial of the sample', () => {
    const m = openedAt0({ halfOpenSampling: { calls: 4, ratio: 0.5 }, halfOpenTrialTimeoutMs: 100 });
    const hung = permit(m, 30_000);
    permit(m, 30_050);
    expect(m.state(30_100)).toBe('half-open'); // the first expired: 1 of the 2 failures that reopen
    expect(m.snapshot(30_100, WALL)).toMatchObject({ halfOpenFailures: 1, halfOpenInFlight: 1 });
    expect(m.release(hung, 'success', 30_120)).toBe(false); // its late outcome is ignored
    expect(m.state(30_150)).toBe('open'); // the second expired at 30 150
  });

  it('a trial released after its limit (the expiry noticed by that release) is late: the other trials keep their slots', () => {
    const m = openedAt0({ halfOpenSampling: { calls: 4, ratio: 0.75 }, halfOpenTrialTimeoutMs: 100 });
    const old = permit(m, 30_000);
    const young = permit(m, 30_090);
    expect(m.release(old, 'success', 30_150)).toBe(false); // expired at 30 100: 1 of the 3 failures that reopen
    expect(m.snapshot(30_150, WALL)).toMatchObject({ state: 'half-open', halfOpenInFlight: 1, halfOpenFailures: 1, halfOpenSuccesses: 0 });
    expect(m.release(young, 'success', 30_160)).toBe(false);
    expect(m.snapshot(30_160, WALL)).toMatchObject({ halfOpenInFlight: 0, halfOpenSuccesses: 1 });
  });

  const bad: [string, CircuitBreakerOptions, string][] = [
    ['not an object', { halfOpenSampling: 3 as never }, 'halfOpenSampling'],
    ['no calls', { halfOpenSampling: { ratio: 0.5 } as never }, 'halfOpenSampling.calls'],
    ['no ratio', { halfOpenSampling: { calls: 5 } as never }, 'halfOpenSampling.ratio'],
    ['zero calls', { halfOpenSampling: { calls: 0, ratio: 0.5 } }, 'halfOpenSampling.calls'],
    ['ratio 0', { halfOpenSampling: { calls: 5, ratio: 0 } }, 'halfOpenSampling.ratio'],
    ['ratio above 1', { halfOpenSampling: { calls: 5, ratio: 1.5 } }, 'halfOpenSampling.ratio'],
    ['a misspelt key', { halfOpenSampling: { calls: 5, ratio: 0.5, treshold: 1 } as never }, 'treshold'],
    ['with successThreshold', { halfOpenSampling: { calls: 5, ratio: 0.5 }, successThreshold: 2 }, 'successThreshold'],
    ['fractional calls', { halfOpenSampling: { calls: 2.5, ratio: 0.5 } }, 'halfOpenSampling.calls'],
    ['more concurrent trials than the sample', { halfOpenSampling: { calls: 5, ratio: 0.5 }, halfOpenMaxCalls: 6 }, 'halfOpenMaxCalls'],
  ];
  it.each(bad)('refuses %s, naming the field', (_name, options, field) => {
    const error = invalidOption(() => circuitBreaker(options));
    expect(error.field).toBe(field);
    expect(error.requirement).toMatch(/^(must|can|is|cannot) \S/);
  });
});

describe('the shell: initialState, isolate(), reset(), telemetry', () => {
  it('initialState starts a breaker from a snapshot; a foreign one makes the constructor throw naming initialState.*', async () => {
    const clock = new ManualClock(5_000);
    const options = { counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 10_000, now: () => WALL };
    const first = circuitBreaker({ ...options, clock });
    await first.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(4_000);
    const saved = JSON.stringify(first);
    const second = circuitBreaker({ ...options, clock: new ManualClock(0), initialState: JSON.parse(saved) as BreakerSnapshot });
    const refused = await second.execute(() => 'sent').catch((e: unknown) => e);
    expect(isCircuitOpenError(refused) && refused.retryAfterMs).toBe(6_000);
    const error = invalidOption(() => circuitBreaker({ ...options, initialState: { ...JSON.parse(saved), schemaVersion: 9 } }));
    expect(error.message).toBe('circuitBreaker: initialState.schemaVersion must be 1 (the version this herdless reads), got 9');
    expect(invalidOption(() => circuitBreaker({ now: 5 as never })).field).toBe('now');
    expect(invalidOption(() => circuitBreaker({ now: () => NaN }).snapshot()).field).toBe('now()');
  });

  it('isolate() → refusals that say so → release() half-opens → a trial closes; reset() from isolation; events and telemetry for each', async () => {
    const clock = new ManualClock(0);
    const telemetry: TelemetryEvent[] = [];
    const breaker = circuitBreaker({ clock, name: 'payments', telemetry: { onEvent: (e) => void telemetry.push(e) } });
    const events: string[] = [];
    breaker.onStateChange((e) => events.push(`${e.type}@${e.at}`));
    const isolation = breaker.isolate();
    expect(breaker.isolated).toBe(true);
    expect(breaker.state).toBe('open');
    let ran = 0;
    const refused = await breaker.execute(() => ran++).catch((e: unknown) => e);
    expect(isCircuitOpenError(refused)).toBe(true);
    expect(refused).toMatchObject({ isolated: true, retryAfterMs: Infinity, state: 'open', message: expect.stringContaining('isolated') });
    expect(ran).toBe(0);
    await clock.advance(1000);
    expect(isolation.release()).toBe(true);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(() => 'trial')).resolves.toBe('trial');
    expect(breaker.state).toBe('closed');
    await clock.advance(1000);
    breaker.isolate();
    await clock.advance(1000);
    breaker.reset();
    expect(breaker.isolated).toBe(false);
    await expect(breaker.execute(() => 'closed')).resolves.toBe('closed');
    expect(events).toEqual(['isolate@0', 'half-open@1000', 'close@1000', 'isolate@2000', 'reset@3000']);
    expect(telemetry.filter((e) => e.type === 'breaker-state' || e.type === 'breaker-rejection')).toEqual([
      { type: 'breaker-state', breaker: 'payments', from: 'closed', to: 'open', at: 0, cause: 'isolate' },
      { type: 'breaker-rejection', breaker: 'payments', state: 'open', isolated: true },
      { type: 'breaker-state', breaker: 'payments', from: 'open', to: 'half-open', at: 1000, cause: 'release' },
      { type: 'breaker-state', breaker: 'payments', from: 'half-open', to: 'closed', at: 1000 },
      { type: 'breaker-state', breaker: 'payments', from: 'closed', to: 'open', at: 2000, cause: 'isolate' },
      { type: 'breaker-state', breaker: 'payments', from: 'open', to: 'closed', at: 3000, cause: 'reset' },
    ]);
  });

  it('tryAcquire()/settle() count as execute() does, for callback-shaped clients', () => {
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 2 }) });
    const a = breaker.tryAcquire();
    const b = breaker.tryAcquire();
    if (isCircuitOpenError(a) || isCircuitOpenError(b)) throw new Error('expected permits');
    breaker.settle(a, { error: down() });
    breaker.settle(a, { value: 'again' }); // only the first settlement counts
    breaker.settle(b, { error: down() });
    expect(breaker.state).toBe('open');
    expect(isCircuitOpenError(breaker.tryAcquire())).toBe(true);
  });

  it('isolate() with a clock that returns NaN is refused clearly, naming clock.now()', () => {
    const breaker = circuitBreaker({ clock: { now: () => NaN } });
    expect(invalidOption(() => breaker.isolate()).field).toBe('clock.now()');
    expect(invalidOption(() => breaker.reset()).field).toBe('clock.now()');
    expect(breaker.isolated).toBe(false);
  });
});

describe('properties: restore round trip, sampling and isolation invariants', () => {
  const config = fc.record({
    sampling: fc.option(fc.record({ calls: fc.integer({ min: 1, max: 6 }), ratio: fc.double({ min: 0.05, max: 1, noNaN: true }) }), { nil: undefined }),
    openDurationMs: fc.integer({ min: 0, max: 1000 }),
    halfOpenTrialTimeoutMs: fc.integer({ min: 1, max: 2000 }),
    // Whole-ms buckets, so that a bucket's start survives the trip exactly.
    counting: fc.oneof(
      fc.integer({ min: 1, max: 4 }).map((threshold) => consecutiveFailures({ threshold })),
      fc.record({ minimumCalls: fc.integer({ min: 1, max: 5 }), windowMs: fc.integer({ min: 1, max: 300 }).map((n) => n * 10) }).map((o) => failureRatio(o)),
    ),
  });
  const op = fc.oneof(
    fc.record({ op: fc.constant('acquire' as const), dt: fc.integer({ min: 0, max: 400 }) }),
    fc.record({ op: fc.constant('release' as const), dt: fc.integer({ min: 0, max: 400 }), pick: fc.nat(), outcome: fc.constantFrom('success' as const, 'failure' as const, 'ignored' as const) }),
    fc.record({ op: fc.constant('isolate' as const), dt: fc.integer({ min: 0, max: 400 }) }),
    fc.record({ op: fc.constant('unisolate' as const), dt: fc.integer({ min: 0, max: 400 }) }),
    fc.record({ op: fc.constant('reset' as const), dt: fc.integer({ min: 0, max: 400 }) }),
  );

  it('after any history: invariants hold at every step, and a restored copy snapshots the same (trials aside)', () => {
    fc.assert(
      fc.property(config, fc.array(op, { maxLength: 120 }), ({ sampling, ...rest }, ops) => {
        const options = { ...rest, ...(sampling === undefined ? {} : { halfOpenSampling: sampling }) };
        const m = circuitBreakerMachine(options);
        const permits: BreakerPermit[] = [];
        const isolations: { release(now: number): boolean }[] = [];
        let now = 0;
        for (const s of ops) {
          now += s.dt;
          if (s.op === 'acquire') {
            const a = m.acquire(now);
            if (a.kind === 'permit') permits.push(a);
            else expect(a.isolated).toBe(m.isolated);
            if (m.isolated) expect(a.kind).toBe('rejection');
          } else if (s.op === 'release' && permits.length > 0) {
            m.release(permits.splice(s.pick % permits.length, 1)[0]!, s.outcome, now);
          } else if (s.op === 'isolate') {
            isolations.push(m.isolate(now));
          } else if (s.op === 'unisolate' && isolations.length > 0) {
            isolations.shift()!.release(now);
          } else if (s.op === 'reset') {
            m.reset(now);
          }
          const snap = m.snapshot(now, WALL);
          expect(snap.halfOpenInFlight).toBeLessThanOrEqual(m.halfOpenMaxCalls);
          expect(snap.halfOpenInFlight).toBeGreaterThanOrEqual(0);
          if (snap.state === 'half-open') {
            expect(snap.halfOpenFailures).toBeLessThan(m.trialFailureThreshold);
            expect(snap.halfOpenSuccesses).toBeLessThan(m.successThreshold);
          }
          expect(snap.isolated).toBe(m.isolated);
          if (snap.state === 'open' && !snap.isolated) expect(snap.remainingOpenMs).toBeGreaterThan(0);
        }
        const snap = JSON.parse(JSON.stringify(m.snapshot(now, WALL))) as BreakerSnapshot;
        const copy = circuitBreakerMachine(options);
        copy.restore(snap, now, WALL);
        expect(copy.snapshot(now, WALL)).toEqual({ ...snap, halfOpenInFlight: 0, halfOpenSuccesses: 0, halfOpenFailures: 0 });
        expect(copy.isolated).toBe(m.isolated);
      }),
    );
  });
});
