import { describe, expect, it } from 'vitest';
import { constantBackoff, consecutiveFailures, exponentialBackoff, fullJitterBackoff, isInvalidOptionError, type BreakerEvent, type Rng } from 'herdless';
import { circuitBreakerMachine, type BreakerPermit, type BreakerRejection, type CircuitBreakerMachine } from 'herdless/sim';

const fixed = (x: number): Rng => ({ random: () => x });

function permit(m: CircuitBreakerMachine, now: number): BreakerPermit {
  const a = m.acquire(now);
  if (a.kind !== 'permit') throw new Error(`expected a permit at ${now}, got a rejection (${a.state}, ${a.retryAfterMs} ms)`);
  return a;
}

function rejection(m: CircuitBreakerMachine, now: number): BreakerRejection {
  const a = m.acquire(now);
  if (a.kind !== 'rejection') throw new Error(`expected a rejection at ${now}, got a permit`);
  return a;
}

/** Opens a fresh machine (threshold 1) at time `at`. */
function opened(options: Parameters<typeof circuitBreakerMachine>[0] = {}, at = 0): CircuitBreakerMachine {
  const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000, ...options });
  expect(m.release(permit(m, at), 'failure', at)).toBe(true);
  return m;
}

describe('transitions', () => {
  it('closed → open after the threshold, refusing with the time to the next trial', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 3 }), openDurationMs: 1000 });
    for (const t of [0, 1]) expect(m.release(permit(m, t), 'failure', t)).toBe(false);
    expect(m.state(2)).toBe('closed');
    expect(m.release(permit(m, 10), 'failure', 10)).toBe(true);
    expect(m.state(10)).toBe('open');
    expect(rejection(m, 10)).toEqual({ kind: 'rejection', state: 'open', retryAfterMs: 1000, isolated: false });
    // 10.5 ms to the trial: reported as 11, whole ms rounded up, so a caller that waits it finds the breaker half-open.
    expect(rejection(m, 999.5)).toEqual({ kind: 'rejection', state: 'open', retryAfterMs: 11, isolated: false });
    expect(m.snapshot(500, 0)).toMatchObject({ state: 'open', remainingOpenMs: 510, openDurationMs: 1000, openings: 1 });
    expect(m.snapshot(500.25, 0)).toMatchObject({ state: 'open', remainingOpenMs: 510, openDurationMs: 1000, openings: 1 });
    expect(rejection(m, 1009.999)).toEqual({ kind: 'rejection', state: 'open', retryAfterMs: 1, isolated: false });
    expect(m.state(1010)).toBe('half-open');
  });

  it('a clock with fractions of a ms: retryAfterMs is whole, rounded up, and waiting it never arrives early', () => {
    const m = opened({}, 0.3); // next trial at 1000.3
    for (const now of [0.3, 1.7, 250.05, 999.31, 1000.29]) {
      const r = rejection(m, now);
      expect(Number.isInteger(r.retryAfterMs), String(now)).toBe(true);
      expect(r.retryAfterMs).toBe(Math.ceil(1000.3 - now));
      expect(now + r.retryAfterMs).toBeGreaterThanOrEqual(1000.3);
      expect(now + r.retryAfterMs - 1).toBeLessThan(1000.3); // the least whole wait that gets there
    }
    expect(m.state(1000.3)).toBe('half-open');
  });

  it('a jittered open duration: the half-open refusal\'s estimate is whole ms too', () => {
    const m = opened({ openDurationMs: fullJitterBackoff({ initialBackoffMs: 1000, maxBackoffMs: 1000 }), random: fixed(0.12345) }, 0);
    const r = rejection(m, 0);
    expect(r.retryAfterMs).toBe(Math.ceil(1000 * 0.12345)); // 123.45 → 124
    expect(m.acquire(124).kind).toBe('permit'); // half-open: the one trial admitted
    expect(rejection(m, 124)).toEqual({ kind: 'rejection', state: 'half-open', retryAfterMs: 124, isolated: false });
  });

  it('refusals are not counted', () => {
    const m = opened();
    const before = m.snapshot(1, 0);
    const generation = m.generation;
    for (let t = 1; t < 1000; t++) rejection(m, t);
    expect(m.snapshot(1, 0).counts).toEqual(before.counts);
    expect(m.generation).toBe(generation);
  });

  it('half-open at nextTrialAt admits exactly halfOpenMaxCalls trials', () => {
    const m = opened({ halfOpenMaxCalls: 3 });
    expect(m.acquire(999).kind).toBe('rejection');
    const trials = [permit(m, 1000), permit(m, 1000), permit(m, 1000)];
    expect(trials.every((p) => p.trial)).toBe(true);
    expect(rejection(m, 1000)).toEqual({ kind: 'rejection', state: 'half-open', retryAfterMs: 1000, isolated: false });
    expect(m.snapshot(1000, 0)).toMatchObject({ state: 'half-open', halfOpenInFlight: 3 });
  });

  it('a failed trial reopens at once and restarts the timer from the failure', () => {
    const m = opened({ halfOpenMaxCalls: 3 });
    const [a, b] = [permit(m, 1000), permit(m, 1000)];
    expect(m.release(a, 'failure', 1250)).toBe(true);
    expect(m.snapshot(1250, 0)).toMatchObject({ state: 'open', remainingOpenMs: 1000, openings: 2, halfOpenInFlight: 0 });
    // The other trial, from the previous half-open period, is stale now.
    expect(m.release(b, 'success', 1300)).toBe(false);
    expect(rejection(m, 2249).retryAfterMs).toBe(1);
    expect(permit(m, 2250).trial).toBe(true);
  });

  it('successThreshold successful trials close it (default = halfOpenMaxCalls)', () => {
    const m = opened({ halfOpenMaxCalls: 2 });
    expect(m.successThreshold).toBe(2);
    const [a, b] = [permit(m, 1000), permit(m, 1000)];
    expect(m.release(a, 'success', 1001)).toBe(false);
    expect(m.state(1001)).toBe('half-open');
    // The freed slot goes to the next caller; still 2 at most in flight.
    const c = permit(m, 1002);
    expect(m.acquire(1002).kind).toBe('rejection');
    expect(m.release(b, 'success', 1003)).toBe(true);
    expect(m.snapshot(1003, 0)).toMatchObject({ state: 'closed', openings: 0, halfOpenInFlight: 0 });
    expect(m.release(c, 'failure', 1004)).toBe(false); // stale: the closed period started after it
    expect(m.snapshot(1004, 0).counts).toEqual({ strategy: 'consecutive failures', consecutiveFailures: 0, threshold: 1 });
  });

  it('successThreshold above halfOpenMaxCalls runs the trials in turns', () => {
    const m = opened({ successThreshold: 3 });
    for (let i = 0; i < 2; i++) {
      const p = permit(m, 1000 + i);
      expect(m.acquire(1000 + i).kind).toBe('rejection');
      expect(m.release(p, 'success', 1000 + i)).toBe(false);
    }
    expect(m.release(permit(m, 1005), 'success', 1005)).toBe(true);
    expect(m.state(1005)).toBe('closed');
  });

  it('an ignored trial (caller abort) frees its permit without counting', () => {
    const m = opened();
    const a = permit(m, 1000);
    expect(m.acquire(1000).kind).toBe('rejection');
    expect(m.release(a, 'ignored', 1001)).toBe(false);
    expect(m.snapshot(1001, 0)).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, halfOpenSuccesses: 0 });
    const b = permit(m, 1001);
    expect(m.release(b, 'success', 1002)).toBe(true);
  });

  it('ignored outcomes while closed are not counted', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 2 }) });
    m.release(permit(m, 0), 'failure', 0);
    m.release(permit(m, 0), 'ignored', 0);
    expect(m.snapshot(0, 0).counts.consecutiveFailures).toBe(1);
    expect(m.release(permit(m, 0), 'failure', 0)).toBe(true);
  });
});

describe('stale permits (generations)', () => {
  it('a closed-state call ending after the breaker opened changes nothing', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const slow = permit(m, 0);
    m.release(permit(m, 0), 'failure', 5);
    const g = m.generation;
    expect(m.release(slow, 'failure', 6)).toBe(false);
    expect(m.snapshot(6, 0)).toMatchObject({ state: 'open', remainingOpenMs: 999 });
    expect(m.generation).toBe(g);
  });

  it('a closed-state success cannot close a later half-open period, nor take a trial slot', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const slow = permit(m, 0);
    m.release(permit(m, 0), 'failure', 0);
    const trial = permit(m, 1000);
    expect(m.release(slow, 'success', 1001)).toBe(false);
    expect(m.snapshot(1001, 0)).toMatchObject({ state: 'half-open', halfOpenInFlight: 1, halfOpenSuccesses: 0 });
    expect(m.acquire(1001).kind).toBe('rejection');
    expect(m.release(trial, 'success', 1002)).toBe(true);
  });

  it('a trial of an earlier half-open period cannot free a slot of the current one', () => {
    const m = opened({ halfOpenMaxCalls: 2 });
    const [a, b] = [permit(m, 1000), permit(m, 1000)];
    m.release(a, 'failure', 1000); // reopens until 2000
    const [c, d] = [permit(m, 2000), permit(m, 2000)];
    expect(m.release(b, 'ignored', 2001)).toBe(false);
    expect(m.snapshot(2001, 0).halfOpenInFlight).toBe(2);
    expect(m.acquire(2001).kind).toBe('rejection');
    expect(m.release(c, 'success', 2002)).toBe(false);
    expect(m.release(d, 'success', 2002)).toBe(true);
  });

  it('double release and foreign permits are ignored', () => {
    const m = opened({ halfOpenMaxCalls: 2 });
    const other = circuitBreakerMachine();
    const a = permit(m, 1000);
    expect(m.release(a, 'ignored', 1000)).toBe(false);
    expect(m.release(a, 'ignored', 1000)).toBe(false);
    expect(m.snapshot(1000, 0).halfOpenInFlight).toBe(0);
    const b = permit(m, 1000);
    expect(other.release(b, 'failure', 1000)).toBe(false);
    expect(m.release({ kind: 'permit', trial: true, generation: b.generation }, 'failure', 1000)).toBe(false);
    expect(m.snapshot(1000, 0)).toMatchObject({ state: 'half-open', halfOpenInFlight: 1 });
  });
});

describe('open duration', () => {
  it('from a backoff: the nth consecutive opening uses delay(n, previous), reset by closing', () => {
    const calls: [number, number][] = [];
    const base = exponentialBackoff({ initialBackoffMs: 1000, maxBackoffMs: 5000 });
    const spy = { ...base, name: base.name, maxDelayMs: base.maxDelayMs, toJSON: () => base.toJSON(), delay: (n: number, prev: number, rng: Rng) => (calls.push([n, prev]), base.delay(n, prev, rng)) };
    const m = opened({ openDurationMs: spy, random: fixed(0) });
    let t = 0;
    const durations = [1000];
    for (let i = 0; i < 4; i++) {
      t += m.snapshot(t, 0).remainingOpenMs!;
      m.release(permit(m, t), 'failure', t);
      durations.push(m.snapshot(t, 0).openDurationMs!);
    }
    expect(durations).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(calls).toEqual([[1, 0], [2, 1000], [3, 2000], [4, 4000], [5, 5000]]);
    t += m.snapshot(t, 0).remainingOpenMs!;
    m.release(permit(m, t), 'success', t);
    m.release(permit(m, t), 'failure', t);
    expect(m.snapshot(t, 0)).toMatchObject({ openings: 1, openDurationMs: 1000 });
  });

  it('a jittered backoff draws from the random source', () => {
    const m = opened({ openDurationMs: fullJitterBackoff({ initialBackoffMs: 1000 }), random: fixed(0.25) });
    expect(m.snapshot(0, 0).openDurationMs).toBe(250);
  });

  it('openDurationMs 0 half-opens at the very next acquire', () => {
    const m = opened({ openDurationMs: 0 });
    expect(m.state(0)).toBe('half-open');
    expect(permit(m, 0).trial).toBe(true);
  });

  it.each([Number.NaN, -5, Infinity, 2 ** 31, '100', undefined])(
    'a custom backoff whose delay() returns %s: the opening throws, naming it, and changes nothing',
    (value) => {
      const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: { ...constantBackoff(), delay: () => value as number }, random: fixed(0) });
      let thrown: unknown;
      try {
        m.release(permit(m, 0), 'failure', 0);
      } catch (error) {
        thrown = error;
      }
      expect(isInvalidOptionError(thrown)).toBe(true);
      expect((thrown as Error).message).toMatch(/^circuitBreaker: backoff\.delay\(\) must return a number of ms in \[0, 2147483647\]/);
      expect(m.snapshot(0, 0)).toMatchObject({ state: 'closed', openings: 0 });
    },
  );
});

describe('events', () => {
  it('open, half-open, close, in order, with times', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const all: BreakerEvent[] = [];
    const opens: number[] = [];
    m.onStateChange((e) => all.push(e));
    m.on('open', (e) => opens.push(e.nextTrialAt));
    m.release(permit(m, 5), 'failure', 5);
    m.release(permit(m, 1200), 'failure', 1300);
    m.release(permit(m, 2400), 'success', 2500);
    expect(all).toEqual([
      { type: 'open', from: 'closed', at: 5, openDurationMs: 1000, nextTrialAt: 1005, openings: 1 },
      { type: 'half-open', from: 'open', at: 1200, released: false },
      { type: 'open', from: 'half-open', at: 1300, openDurationMs: 1000, nextTrialAt: 2300, openings: 2 },
      { type: 'half-open', from: 'open', at: 2400, released: false },
      { type: 'close', from: 'half-open', at: 2500 },
    ]);
    expect(opens).toEqual([1005, 2300]);
  });

  it('unsubscribe stops delivery; twice is harmless', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 10 });
    const seen: string[] = [];
    const off = m.onStateChange((e) => seen.push(e.type));
    m.release(permit(m, 0), 'failure', 0);
    off();
    off();
    m.state(10);
    expect(seen).toEqual(['open']);
  });

  it('a throwing listener does not break the breaker; others still run; onListenerError sees it', () => {
    const reported: [unknown, string][] = [];
    const m = circuitBreakerMachine({
      counting: consecutiveFailures({ threshold: 1 }),
      openDurationMs: 10,
      onListenerError: (error, event) => reported.push([error, event.type]),
    });
    const boom = new Error('listener bug');
    const seen: string[] = [];
    m.on('open', () => {
      throw boom;
    });
    m.onStateChange((e) => seen.push(e.type));
    expect(m.release(permit(m, 0), 'failure', 0)).toBe(true);
    expect(m.snapshot(1, 0)).toMatchObject({ state: 'open', remainingOpenMs: 9 });
    expect(seen).toEqual(['open']);
    expect(reported).toEqual([[boom, 'open']]);
    expect(permit(m, 10).trial).toBe(true);
  });

  it('a throwing onListenerError is swallowed too', () => {
    const m = circuitBreakerMachine({
      counting: consecutiveFailures({ threshold: 1 }),
      onListenerError: () => {
        throw new Error('hook bug');
      },
    });
    m.on('open', () => {
      throw new Error('listener bug');
    });
    expect(m.release(permit(m, 0), 'failure', 0)).toBe(true);
    expect(m.state(0)).toBe('open');
  });

  it('a listener that acquires during half-open takes a real trial slot', () => {
    const m = opened();
    let inside: BreakerPermit | BreakerRejection | undefined;
    m.on('half-open', () => {
      inside = m.acquire(1000);
    });
    expect(m.acquire(1000).kind).toBe('rejection');
    expect(inside?.kind).toBe('permit');
    expect(m.snapshot(1000, 0).halfOpenInFlight).toBe(1);
  });
});

describe('snapshot', () => {
  it('is plain JSON with the documented fields', () => {
    const m = circuitBreakerMachine();
    const s = m.snapshot(0, 1_764_600_000_000);
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    expect(s).toEqual({
      schema: 'herdless/circuit-breaker',
      schemaVersion: 1,
      takenAt: 1_764_600_000_000,
      state: 'closed',
      isolated: false,
      openings: 0,
      halfOpenInFlight: 0,
      halfOpenSuccesses: 0,
      halfOpenFailures: 0,
      counts: { strategy: 'consecutive failures', consecutiveFailures: 0, threshold: 5 },
    });
  });

  it('reading the state at nextTrialAt half-opens', () => {
    const m = opened();
    expect(m.snapshot(999, 0).state).toBe('open');
    const s = m.snapshot(1000, 0);
    expect(s).toMatchObject({ state: 'half-open', openDurationMs: 1000 });
    expect(s).not.toHaveProperty('remainingOpenMs');
  });
});
