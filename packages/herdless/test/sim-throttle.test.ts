// The simulator drives an adaptive throttle per client, asking it about every request of a tick's
// batch before the server sees it: refused requests never arrive, end at once, and hand their
// chunks back; admitted ones keep their order and their state.
import { describe, expect, it } from 'vitest';
import { adaptiveThrottling, type AttemptThrottle } from 'herdless';
import { budgetPolicy, budgetScenario, runScenario } from 'herdless/sim';
import { simulate } from '../src/sim/engine.js';

const sum = (a: Int32Array) => a.reduce((x, y) => x + y, 0);

/** A throttle that admits by a fixed rule of the call count, and records what it heard. */
class Scripted implements AttemptThrottle {
  readonly name = 'scripted';
  asked = 0;
  accepted = 0;
  rejected = 0;
  constructor(private readonly rule: (n: number) => boolean) {}
  admit(): boolean {
    return this.rule(this.asked++);
  }
  onAnswer(_now: number, accepted: boolean): void {
    if (accepted) this.accepted++;
    else this.rejected++;
  }
}

describe('the simulator with adaptive throttling', () => {
  it('a throttle that refuses everything: nothing reaches the server, every request ends throttled, every chunk is free again', () => {
    const scenario = budgetScenario({ ...budgetPolicy('4 attempts'), throttle: () => new Scripted(() => false) });
    const { result, chunks } = simulate(scenario, 0, { perTick: true });
    const fresh = sum(result.perTick!.fresh);
    expect(result.requests).toBe(0);
    expect(result.throttled).toBe(fresh);
    expect(result.gaveUp).toBe(fresh);
    expect(result.succeeded).toBe(0);
    const store = chunks();
    expect(store.free).toBe(store.allocated);
  });

  it('refusing every other request: the admitted half arrives, in order, and every answer is reported', () => {
    const throttles: Scripted[] = [];
    const scenario = budgetScenario(
      {
        ...budgetPolicy('no retry'),
        throttle: () => {
          const t = new Scripted((n) => n % 2 === 0);
          throttles.push(t);
          return t;
        },
      },
      { outage: { startMs: 100_000, endMs: 100_001 } },
    );
    const r = runScenario(scenario, 3, { perTick: true });
    const asked = throttles.reduce((a, t) => a + t.asked, 0);
    const admitted = throttles.reduce((a, t) => a + Math.ceil(t.asked / 2), 0);
    expect(asked).toBe(sum(r.perTick!.fresh));
    expect(r.requests).toBe(admitted);
    expect(r.throttled).toBe(asked - admitted);
    expect(throttles.reduce((a, t) => a + t.accepted + t.rejected, 0)).toBe(admitted);
    expect(r.succeeded + r.gaveUp + r.outstanding).toBe(asked);
  });

  it('adaptiveThrottling itself: the books balance and, during the outage, first tries are refused', () => {
    const r = runScenario(budgetScenario('4 attempts + adaptive throttling'), 0, { perTick: true });
    expect(r.throttled).toBeGreaterThan(0);
    expect(r.succeeded + r.gaveUp + r.outstanding).toBe(sum(r.perTick!.fresh));
    // Without a throttle the field is absent: the JSON of existing rows does not change.
    expect('throttled' in runScenario(budgetScenario('4 attempts'), 0)).toBe(false);
    expect(adaptiveThrottling().name).toBe('adaptive throttling');
  });
});
