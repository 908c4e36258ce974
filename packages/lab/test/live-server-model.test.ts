import { ARTICLE_SERVER } from 'herdless/sim';
import { describe, expect, it } from 'vitest';
import { LiveServerModel, MAX_WINDOWS, type LiveVerdict } from '../src/live/server-model.js';

/** Feeds `batches[t]` arrivals into tick t (at its middle) and decides every tick; returns the verdicts per tick. */
function drive(model: LiveServerModel<number>, batches: readonly number[]): LiveVerdict[][] {
  const out: LiveVerdict[][] = batches.map(() => []);
  let id = 0;
  const tickOf = new Map<number, number>();
  for (const [t, n] of batches.entries()) {
    for (let k = 0; k < n; k++) {
      tickOf.set(id, t);
      model.arrive(t * 10 + 5, id++);
    }
    model.advance(t * 10 + 10, (request, verdict) => out[tickOf.get(request)!]!.push(verdict));
  }
  return out;
}

const count = (vs: LiveVerdict[], v: LiveVerdict): number => vs.filter((x) => x === v).length;

describe('LiveServerModel: the article server rules on arrival times', () => {
  it('fails everything during start-up, then serves the first 5 arrivals of each tick', () => {
    const model = new LiveServerModel<number>(ARTICLE_SERVER, 0);
    const batches = Array<number>(102).fill(0);
    batches[0] = 3;
    batches[99] = 2;
    batches[100] = 8;
    batches[101] = 5;
    const out = drive(model, batches);
    expect(out[0]).toEqual([503, 503, 503]);
    expect(out[99]).toEqual([503, 503]);
    // First come, first served: the first five get 200, in arrival order.
    expect(out[100]).toEqual([200, 200, 200, 200, 200, 503, 503, 503]);
    expect(out[101]).toEqual([200, 200, 200, 200, 200]);
    const stats = model.snapshot();
    expect(stats.arrivals.slice(0, 11)).toEqual([3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 13]);
    expect(stats.successes[10]).toBe(10);
    expect(stats.totals).toEqual({ arrivals: 18, successes: 10, crashes: 0 });
    expect(stats.ticks).toBe(102);
  });

  it('crashes above 100 arrivals in 10 ticks, fails the whole batch, and is down for 1 s (no crash during start-up)', () => {
    const model = new LiveServerModel<number>(ARTICLE_SERVER, 0);
    const batches = Array<number>(215).fill(0);
    batches[0] = 1000; // start-up: no crash however many arrive
    batches[150] = 60;
    batches[155] = 41; // 101 in the window: crash at tick 155
    batches[200] = 1; // still down (155 + 100 = 255)
    const out = drive(model, batches);
    expect(count(out[0]!, 503)).toBe(1000);
    expect(count(out[150]!, 200)).toBe(5);
    expect(out[155]!.every((v) => v === 503)).toBe(true);
    expect(out[200]).toEqual([503]);
    const stats = model.snapshot();
    expect(stats.totals.crashes).toBe(1);
    expect(stats.crashAtMs).toEqual([1550]);
    expect(stats.crashes[15]).toBe(1);
  });

  it('is down through an outage (not counted as a crash) and up after it', () => {
    const batches = [1, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1];
    const model2 = new LiveServerModel<number>({ ...ARTICLE_SERVER, startupMs: 0, outages: [{ startMs: 50, endMs: 100 }] }, 0);
    const out2 = drive(model2, batches);
    expect(out2[0]).toEqual([200]);
    expect(out2[5]).toEqual([503, 503]);
    expect(out2[9]).toEqual([503]);
    expect(out2[10]).toEqual([200]);
    expect(model2.snapshot().totals.crashes).toBe(0);
  });

  it('reset starts time 0 again and hands back the requests still waiting', () => {
    const model = new LiveServerModel<string>(ARTICLE_SERVER, 0);
    model.arrive(2500, 'a');
    model.arrive(2501, 'b');
    expect(model.waiting).toBe(true);
    expect(model.oldestTick).toBe(250);
    expect(model.tickEnd(250)).toBe(2510);
    expect(model.reset(3000)).toEqual(['a', 'b']);
    expect(model.waiting).toBe(false);
    expect(model.startedAt).toBe(3000);
    const verdicts: [string, LiveVerdict][] = [];
    model.arrive(3005, 'c');
    model.advance(3010, (r, v) => verdicts.push([r, v]));
    expect(verdicts).toEqual([['c', 503]]); // start-up again
    expect(model.snapshot().totals.arrivals).toBe(1);
  });

  it('keeps at most MAX_WINDOWS windows of stats, counting the dropped ones in the totals', () => {
    const model = new LiveServerModel<number>({ ...ARTICLE_SERVER, startupMs: 0 }, 0);
    const windowMs = 100;
    model.arrive(5, 1);
    model.advance(10, () => {});
    model.arrive((MAX_WINDOWS + 5) * windowMs + 5, 2);
    model.advance((MAX_WINDOWS + 5) * windowMs + 10, () => {});
    const stats = model.snapshot();
    expect(stats.arrivals.length).toBe(MAX_WINDOWS);
    expect(stats.firstWindow).toBe(6);
    expect(stats.arrivals[MAX_WINDOWS - 1]).toBe(1);
    expect(stats.totals.arrivals).toBe(2);
  });
});
