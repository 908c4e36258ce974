import { describe, expect, it, vi } from 'vitest';
import { CircuitOpenError, consecutiveFailures, failureRatio, type Backoff, type BreakerEvent, type Clock } from 'herdless';
import { circuitBreakerMachine, type BreakerPermit, type CircuitBreakerMachine } from 'herdless/sim';
import { BreakerListeners } from '../src/core/breaker/events.js';
import { invalidOption } from './support/invalid-option.js';

// The breaker's edges that breaker-machine.test.ts and breaker-counting.test.ts do not reach: the
// half-open refusal's sentence, the strategies' names, a permit of another breaker, the clock read
// (once, and named in its error) when the shell releases, a trial expired by a release, the
// generation through a whole cycle, the listener lists, and the options refused by type.

function permit(m: CircuitBreakerMachine, now: number): BreakerPermit {
  const a = m.acquire(now);
  if (a.kind !== 'permit') throw new Error(`expected a permit at ${now}, got a rejection (${a.state})`);
  return a;
}

/** A clock that returns `readings` in turn (the last one forever after), counting its reads. */
function steppingClock(...readings: number[]): Clock & { reads: number } {
  const clock = {
    reads: 0,
    now: () => readings[Math.min(clock.reads++, readings.length - 1)]!,
  };
  return clock;
}

const NAN_CLOCK: Clock = { now: () => NaN };
const CLOCK_ERROR = 'circuitBreaker: clock.now() must return a finite number of ms (a bug in the injected clock), got NaN';

describe('CircuitOpenError: the sentence says which state refused', () => {
  it('open: the exact wait to the next trial, rounded up', () => {
    expect(new CircuitOpenError('open', 999.2).message).toBe('circuit breaker is open: next trial call in 1000 ms');
  });

  it('half-open: the trials are in flight and the wait is an estimate', () => {
    const e = new CircuitOpenError('half-open', 1499.5);
    expect(e.message).toBe('circuit breaker is half-open and its trial calls are in flight: retry after about 1500 ms');
    expect(e.state).toBe('half-open');
  });
});

describe('counting strategies: names, snapshots and refused options', () => {
  it('each strategy is named in `name`, and the failure ratio names itself in its counts', () => {
    expect(consecutiveFailures().name).toBe('consecutive failures');
    expect(failureRatio().name).toBe('failure ratio');
    const m = circuitBreakerMachine({ counting: failureRatio({ minimumCalls: 5 }) });
    m.release(permit(m, 0), 'failure', 0);
    expect(m.snapshot(1).counts).toEqual({ strategy: 'failure ratio', calls: 1, failures: 1, ratio: 0.5, windowMs: 10_000, minimumCalls: 5 });
  });

  it('options that are not an object are refused under the field `options`', () => {
    const e = invalidOption(() => consecutiveFailures(3 as never));
    expect(e.message).toBe('consecutiveFailures: options must be an object, got 3');
    expect(e.field).toBe('options');
    expect(invalidOption(() => circuitBreakerMachine(3 as never)).message).toBe('circuitBreaker: options must be an object, got 3');
  });

  it('minimumCalls and successThreshold must be integers', () => {
    expect(invalidOption(() => failureRatio({ minimumCalls: 2.5 })).message).toBe('failureRatio: minimumCalls must be an integer, got 2.5');
    expect(invalidOption(() => circuitBreakerMachine({ successThreshold: 1.5 })).message).toBe('circuitBreaker: successThreshold must be an integer, got 1.5');
  });
});

describe('breaker options refused by their type', () => {
  it('counting must be a strategy object: a number, or a function that has create(), is refused', () => {
    const strategyFn = Object.assign(() => undefined, { create: consecutiveFailures().create });
    for (const counting of [5, 'x', strategyFn]) {
      const e = invalidOption(() => circuitBreakerMachine({ counting: counting as never }));
      expect(e.field).toBe('counting');
      expect(e.requirement).toBe('must be a counting strategy such as consecutiveFailures() or failureRatio()');
    }
  });

  it('openDurationMs: a function that has delay() is not a Backoff; null is neither a number nor a Backoff', () => {
    const delayFn = Object.assign(() => 0, { delay: () => 10 });
    const e = invalidOption(() => circuitBreakerMachine({ openDurationMs: delayFn as never, random: { random: () => 0 } }));
    expect(e.field).toBe('openDurationMs');
    expect(e.message).toBe('circuitBreaker: openDurationMs must be a number of ms or a Backoff, got a function');
    expect(invalidOption(() => circuitBreakerMachine({ openDurationMs: null as never })).message).toBe('circuitBreaker: openDurationMs must be a number of ms or a Backoff, got null');
  });

  it('random must be an object with random(): null, a number and a function that has random() are refused', () => {
    const randomFn = Object.assign(() => 0, { random: () => 0 });
    for (const rng of [null, 5, randomFn]) {
      const e = invalidOption(() => circuitBreakerMachine({ random: rng as never }));
      expect(e.field).toBe('random');
      expect(e.requirement).toBe('must be an object with a random() method');
    }
  });
});

describe('release: what a permit may change', () => {
  it("a permit of another breaker changes nothing there, and still counts in its own", () => {
    const counting = consecutiveFailures({ threshold: 1 });
    const a = circuitBreakerMachine({ counting });
    const b = circuitBreakerMachine({ counting });
    const p = permit(a, 0);
    expect(b.release(p, 'failure', 0)).toBe(false);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', counts: { consecutiveFailures: 0 } });
    expect(a.release(p, 'failure', 0)).toBe(true);
    expect(a.state(0)).toBe('open');
  });

  it('a trial released after its time limit returns false: the expiry reopened the breaker, not the release', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000, halfOpenTrialTimeoutMs: 500 });
    m.release(permit(m, 0), 'failure', 0);
    const trial = permit(m, 1000);
    expect(trial.trial).toBe(true);
    expect(m.release(trial, 'success', 1600)).toBe(false);
    expect(m.snapshot(1600)).toMatchObject({ state: 'open', openedAt: 1500, nextTrialAt: 2500, openings: 2 });
  });

  it('an expiry noticed by a release at or after the reopened wait half-opens at that release', () => {
    const events: BreakerEvent[] = [];
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000, halfOpenTrialTimeoutMs: 500 });
    m.release(permit(m, 0), 'failure', 0);
    const trial = permit(m, 1000);
    m.onStateChange((e) => events.push(e));
    // Expired at 1500, reopened until 2500: the release at exactly 2500 half-opens the breaker then.
    expect(m.release(trial, 'failure', 2500)).toBe(false);
    expect(m.state(2600)).toBe('half-open');
    expect(events).toEqual([
      { type: 'open', from: 'half-open', at: 1500, openDurationMs: 1000, nextTrialAt: 2500, openings: 2 },
      { type: 'half-open', from: 'open', at: 2500 },
    ]);
  });
});

describe('the shell\'s release reads its clock', () => {
  it('once per counted outcome, and opens the breaker at that reading (a counter that needs the time)', () => {
    const m = circuitBreakerMachine({ counting: failureRatio({ minimumCalls: 1, ratio: 1 }), openDurationMs: 1000 });
    const clock = steppingClock(100, 200);
    expect(m.releaseFrom(permit(m, 0), 'failure', clock)).toBe(true);
    expect(clock.reads).toBe(1);
    expect(m.snapshot(150)).toMatchObject({ state: 'open', openedAt: 100, nextTrialAt: 1100 });
  });

  it('a clock that returns NaN is named in the error: closed outcome, opening of a timeless counter, trial outcome', () => {
    const ratio = circuitBreakerMachine({ counting: failureRatio() });
    expect(() => ratio.releaseFrom(permit(ratio, 0), 'success', NAN_CLOCK)).toThrow(CLOCK_ERROR);

    const consecutive = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    expect(() => consecutive.releaseFrom(permit(consecutive, 0), 'failure', NAN_CLOCK)).toThrow(CLOCK_ERROR);

    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    m.release(permit(m, 0), 'failure', 0);
    const trial = permit(m, 1000);
    expect(() => m.releaseFrom(trial, 'success', NAN_CLOCK)).toThrow(CLOCK_ERROR);
  });
});

describe('generations and open durations through a whole cycle', () => {
  it('every state change bumps the generation: 0 closed, 1 open, 2 half-open, 3 closed again', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    expect(m.snapshot(0).generation).toBe(0);
    m.release(permit(m, 0), 'failure', 0);
    expect(m.snapshot(0).generation).toBe(1);
    const trial = permit(m, 1000);
    expect(m.snapshot(1000).generation).toBe(2);
    m.release(trial, 'success', 1001);
    expect(m.snapshot(1001)).toMatchObject({ state: 'closed', generation: 3 });
  });

  it('after closing, the first opening gets previous = 0 from the backoff, not the last duration', () => {
    const calls: [number, number][] = [];
    const backoff: Backoff = {
      delay: (n, previous) => {
        calls.push([n, previous]);
        return 100 * n;
      },
      maxDelayMs: 10_000,
      toJSON: () => ({ kind: 'recording' }),
    };
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: backoff, random: { random: () => 0 } });
    m.release(permit(m, 0), 'failure', 0); // opening 1: 100 ms
    m.release(permit(m, 100), 'failure', 100); // failed trial, opening 2: 200 ms
    m.release(permit(m, 300), 'success', 300); // closes
    m.release(permit(m, 400), 'failure', 400); // opening 1 again
    expect(calls).toEqual([
      [1, 0],
      [2, 100],
      [1, 0],
    ]);
  });
});

describe('BreakerListeners: the lists behind on() and onStateChange()', () => {
  const open: BreakerEvent = { type: 'open', from: 'closed', at: 0, openDurationMs: 10, nextTrialAt: 10, openings: 1 };
  const halfOpen: BreakerEvent = { type: 'half-open', from: 'open', at: 10 };
  const close: BreakerEvent = { type: 'close', from: 'half-open', at: 11 };

  it('`active` is true exactly while someone listens', () => {
    const l = new BreakerListeners(() => {});
    expect(l.active).toBe(false);
    const off = l.add('open', () => {});
    expect(l.active).toBe(true);
    off();
    expect(l.active).toBe(false);
  });

  it('every list starts empty: a listener of all changes is the only one called, and nothing fails', () => {
    const onError = vi.fn();
    const seen: string[] = [];
    const l = new BreakerListeners(onError);
    l.add('change', (e) => seen.push(e.type));
    for (const e of [open, halfOpen, close]) l.emit(e);
    expect(seen).toEqual(['open', 'half-open', 'close']);
    expect(onError).not.toHaveBeenCalled();
  });

  it('unsubscribing one listener keeps the others; unsubscribing it twice removes nothing more', () => {
    const seen: string[] = [];
    const l = new BreakerListeners(() => {});
    const offA = l.add('open', () => seen.push('a'));
    l.add('open', () => seen.push('b'));
    offA();
    offA();
    expect(l.active).toBe(true);
    l.emit(open);
    expect(seen).toEqual(['b']);
  });

  it('through the machine: a second unsubscribe leaves the remaining listener subscribed', () => {
    const m = circuitBreakerMachine({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const seen: string[] = [];
    const offA = m.on('open', () => seen.push('a'));
    m.on('open', () => seen.push('b'));
    offA();
    offA();
    m.release(permit(m, 0), 'failure', 0);
    expect(seen).toEqual(['b']);
  });
});
