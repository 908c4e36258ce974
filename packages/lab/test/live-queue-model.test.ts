import { PyRandom, metastableSetup, type MetastableServer, type MetastableTrigger } from 'herdless/sim';
import { describe, expect, it } from 'vitest';
import { MAX_SECONDS, QueueModel, type QueueOutcome } from '../src/live/queue-model.js';
import { queueModelOf, timeoutOf } from '../src/live/queue-server.js';
import { goodputBefore } from '../src/live/queue-experiment.js';
import { queueArrivals } from '../src/live/queue-fleet.js';

// The model is driven in virtual time: every `now` is given, no clock or timer is read.

const NO_TRIGGER: MetastableTrigger = { kind: 'capacity', startMs: 0, endMs: 0, factor: 1 };
const server = (over: Partial<MetastableServer> = {}): MetastableServer => ({
  workers: 1,
  serviceMs: 100,
  service: 'constant',
  discipline: 'fifo',
  dropExpired: false,
  shedding: false,
  ...over,
});

function model(over: Partial<MetastableServer> = {}, trigger: MetastableTrigger = NO_TRIGGER, seed = 0) {
  const ends: [string, QueueOutcome, number][] = [];
  let now = 0;
  const m = new QueueModel<string>(server(over), trigger, seed, 0, (r, outcome) => ends.push([r, outcome, now]));
  const at = (t: number): void => {
    now = t;
    m.advance(t);
  };
  // Ends at the services' own times: advance one due end at a time so `now` reads as that end.
  const runTo = (t: number): void => {
    for (let e = m.nextEndAt; e !== undefined && e <= t; e = m.nextEndAt) at(e);
    at(t);
  };
  return { m, ends, runTo, arrive: (t: number, r: string) => (runTo(t), m.arrive(t, r)) };
}

describe('QueueModel: the metastable server on the caller’s clock', () => {
  it('serves one at a time per worker, FIFO: the oldest queued first, each for its service time', () => {
    const { m, ends, arrive, runTo } = model({ workers: 1, serviceMs: 100 });
    arrive(0, 'a');
    arrive(10, 'b');
    arrive(20, 'c');
    expect(m.nextEndAt).toBe(100);
    runTo(1000);
    expect(ends).toEqual([
      ['a', 'served', 100],
      ['b', 'served', 200],
      ['c', 'served', 300],
    ]);
  });

  it('LIFO serves the newest queued first', () => {
    const { ends, arrive, runTo } = model({ workers: 1, discipline: 'lifo' });
    arrive(0, 'a');
    arrive(10, 'b');
    arrive(20, 'c');
    runTo(1000);
    expect(ends.map((e) => e[0])).toEqual(['a', 'c', 'b']);
  });

  it('serves a request whose client left to the end, for nobody: wasted work', () => {
    const { m, ends, arrive, runTo } = model({ workers: 1 });
    arrive(0, 'a');
    const b = arrive(10, 'b');
    m.leave(50, b); // queued, its client gone
    runTo(1000);
    expect(ends).toEqual([
      ['a', 'served', 100],
      ['b', 'wasted', 200],
    ]);
    const s = m.snapshot(1000);
    expect(s.totals).toEqual({ arrivals: 2, served: 1, wasted: 1, dropped: 0, shed: 0 });
  });

  it('with dropExpired, stops a service when its client leaves and drops a queued one unserved', () => {
    const { m, ends, arrive, runTo } = model({ workers: 1, dropExpired: true });
    const a = arrive(0, 'a');
    const b = arrive(10, 'b');
    arrive(20, 'c');
    m.leave(30, b); // queued: dropped when a worker reaches it
    runTo(40);
    m.leave(40, a); // in service: cut now, the worker takes the next (b is dropped, c starts at 40)
    runTo(1000);
    expect(ends).toEqual([
      ['a', 'cut', 40],
      ['b', 'dropped', 40],
      ['c', 'served', 140],
    ]);
    expect(m.snapshot(1000).totals).toEqual({ arrivals: 3, served: 1, wasted: 1, dropped: 1, shed: 0 });
  });

  it('with dropExpired, the deadline a request carries (arrival + its timeout) cuts and drops on the server’s own clock, before any close', () => {
    const { m, ends, arrive, runTo } = model({ workers: 1, dropExpired: true, serviceMs: 100 });
    m.arrive(0, 'a', 50); // its deadline (50) comes before its service's end (100): cut at 50
    arrive(10, 'b'); // no deadline: served 50–150
    m.arrive(20, 'c', 100); // reaches a worker at 150, after its deadline (120): dropped unserved
    m.arrive(30, 'd', 1000); // served 150–250, well within its deadline
    runTo(1000);
    expect(ends).toEqual([
      ['a', 'cut', 50],
      ['b', 'served', 150],
      ['c', 'dropped', 150],
      ['d', 'served', 250],
    ]);
    expect(m.snapshot(1000).totals).toEqual({ arrivals: 4, served: 2, wasted: 1, dropped: 1, shed: 0 });
    // Without dropExpired the deadline is ignored: the server serves what it queued.
    const plain = model({ workers: 1, serviceMs: 100 });
    plain.m.arrive(0, 'a', 50);
    plain.runTo(1000);
    expect(plain.ends).toEqual([['a', 'served', 100]]);
  });

  it('a client leaving after its answer, or twice, changes nothing', () => {
    const { m, ends, arrive, runTo } = model({ dropExpired: true });
    const a = arrive(0, 'a');
    runTo(200);
    m.leave(200, a);
    m.leave(210, a);
    expect(ends).toEqual([['a', 'served', 100]]);
  });

  it('runs the capacity trigger: a service that starts during it takes mean / factor', () => {
    const trigger: MetastableTrigger = { kind: 'capacity', startMs: 1000, endMs: 2000, factor: 0.5 };
    const { ends, arrive, runTo } = model({ workers: 1, serviceMs: 100 }, trigger);
    arrive(900, 'before'); // starts before: 100 ms
    arrive(1500, 'during'); // 200 ms
    arrive(2000, 'after'); // the trigger's end is exclusive: 100 ms
    runTo(3000);
    expect(ends).toEqual([
      ['before', 'served', 1000],
      ['during', 'served', 1700],
      ['after', 'served', 2100],
    ]);
  });

  it('draws exponential service times from PyRandom(seed), in the order services start', () => {
    const { ends, arrive, runTo } = model({ workers: 2, serviceMs: 200, service: 'exponential' }, NO_TRIGGER, 7);
    arrive(0, 'a');
    arrive(0, 'b');
    runTo(100_000);
    const rng = new PyRandom(7);
    const da = rng.expovariate(1 / 200);
    const db = rng.expovariate(1 / 200);
    expect(ends.find((e) => e[0] === 'a')![2]).toBeCloseTo(da, 9);
    expect(ends.find((e) => e[0] === 'b')![2]).toBeCloseTo(db, 9);
  });

  it('records per second the arrivals, served, wasted, shed and the queue at each second’s end', () => {
    const { m, arrive, runTo } = model({ workers: 1, serviceMs: 600 });
    arrive(0, 'a'); // served 0–600
    const b = arrive(100, 'b'); // served 600–1200, its client gone at 900: wasted
    arrive(200, 'c'); // served 1200–1800
    m.leave(900, b);
    m.shed(1500);
    runTo(2500);
    const s = m.snapshot(2500);
    // Two seconds ended by 2.5 s: a is served in the first, b wasted and c served in the second.
    expect(s.arrivals).toEqual([3, 0]);
    expect(s.served).toEqual([1, 1]);
    expect(s.wasted).toEqual([0, 1]);
    expect(s.shed).toEqual([0, 1]);
    // At 1 s: b in service, c queued. At 2 s: nothing.
    expect(s.queue).toEqual([1, 0]);
    expect(s.busy).toBe(0);
    expect(s.queued).toBe(0);
  });

  it('ends services due at a late call in end-time order, each at its own time (a late timer delays answers, not the schedule)', () => {
    const ends: [string, QueueOutcome][] = [];
    const m = new QueueModel<string>(server({ workers: 1, serviceMs: 100 }), NO_TRIGGER, 0, 0, (r, o) => ends.push([r, o]));
    m.arrive(0, 'a');
    m.arrive(0, 'b');
    m.arrive(0, 'c');
    m.advance(250); // a 0–100, b 100–200, c 200–300
    expect(ends).toEqual([
      ['a', 'served'],
      ['b', 'served'],
    ]);
    expect(m.nextEndAt).toBe(300);
  });

  it('reset ends what is queued or in service as `reset`, restarts time 0 and the stats, and takes the new server', () => {
    const { m, ends, arrive } = model({ workers: 1 });
    arrive(0, 'a');
    arrive(10, 'b');
    m.reset(5000, server({ workers: 3, discipline: 'lifo' }), NO_TRIGGER, 1);
    expect(ends.map((e) => e.slice(0, 2))).toEqual([
      ['b', 'reset'],
      ['a', 'reset'],
    ]);
    expect(m.startedAt).toBe(5000);
    expect(m.serverModel.workers).toBe(3);
    expect(m.nextEndAt).toBeUndefined();
    expect(m.snapshot(5000).totals.arrivals).toBe(0);
  });

  it('keeps at most an hour of seconds', () => {
    const m = new QueueModel<string>(server(), NO_TRIGGER, 0, 0, () => {});
    m.arrive(0, 'a');
    m.advance((MAX_SECONDS + 10) * 1000);
    const s = m.snapshot((MAX_SECONDS + 10) * 1000);
    expect(s.arrivals.length).toBe(MAX_SECONDS);
    expect(s.firstSecond).toBe(10);
    expect(s.totals.arrivals).toBe(1);
  });
});

describe('the live metastable pieces around the model', () => {
  it('queueModelOf: a reset body over the start-up model, checked by the simulator’s rules', () => {
    const base = { server: metastableSetup().server, trigger: metastableSetup().trigger, seed: 0 };
    expect(queueModelOf(base, { server: { discipline: 'lifo' }, seed: 3 })).toMatchObject({ server: { discipline: 'lifo', workers: 50 }, seed: 3 });
    expect(() => queueModelOf(base, { server: { workers: 0 } })).toThrow(/server\.workers/);
    expect(() => queueModelOf(base, { servers: {} })).toThrow('servers is not a field of the reset body (did you mean server? fields: server, trigger, seed)');
    expect(() => queueModelOf(base, { sed: 1 })).toThrow('sed is not a field of the reset body (did you mean seed? fields: server, trigger, seed)');
    expect(() => queueModelOf(base, { timeout: 1 })).toThrow('timeout is not a field of the reset body (fields: server, trigger, seed)');
    expect(() => queueModelOf(base, { server: { workrs: 3 } })).toThrow(
      "server.workrs is not a field of the reset body (did you mean workers? server's fields: workers, serviceMs, service, discipline, dropExpired, shedding)",
    );
    expect(() => queueModelOf(base, { trigger: { Factor: 2 } })).toThrow("trigger.Factor is not a field of the reset body (did you mean factor? trigger's fields: kind, startMs, endMs, factor)");
    expect(() => queueModelOf(base, { server: 3 })).toThrow('server must be a JSON object of fields (workers, serviceMs, service, discipline, dropExpired, shedding), got 3');
    expect(() => queueModelOf(base, { trigger: 'spike' })).toThrow('trigger must be a JSON object of fields (kind, startMs, endMs, factor), got "spike"');
    expect(() => queueModelOf(base, { seed: -1 })).toThrow(/seed must be an integer/);
    expect(() => queueModelOf(base, [1])).toThrow('the reset body must be a JSON object of fields (server, trigger, seed), got [1]');
    expect(() => queueModelOf(base, 7)).toThrow('the reset body must be a JSON object of fields (server, trigger, seed), got 7');
    expect(queueModelOf(base, null)).toEqual(base);
  });

  it('queueArrivals draws the simulator’s Poisson arrivals: the same gaps, thinned outside a spike', () => {
    const setup = metastableSetup({ ratePerSecond: 50, horizonMs: 10_000, trigger: { kind: 'spike', startMs: 2000, endMs: 4000, factor: 3 } });
    const arrivals = queueArrivals(setup, new PyRandom(1));
    const count = (from: number, to: number): number => arrivals.filter((t) => t >= from && t < to).length;
    // 2 s at 150/s against 8 s at 50/s: a spike second holds about three times a normal one.
    expect(count(2000, 4000) / 2).toBeGreaterThan(100);
    expect(count(4000, 10_000) / 6).toBeLessThan(75);
    expect(arrivals.every((t, i) => i === 0 || t > arrivals[i - 1]!)).toBe(true);
    expect(queueArrivals(setup, new PyRandom(1))).toEqual(arrivals);
  });

  it('timeoutOf reads the propagated deadline from connect-timeout-ms, and nothing else', () => {
    const of = (v: string | string[] | undefined) => timeoutOf({ headers: { 'connect-timeout-ms': v } });
    expect(of('1000')).toBe(1000);
    expect(of(undefined)).toBeUndefined();
    expect(of('0')).toBeUndefined();
    expect(of('-5')).toBeUndefined();
    expect(of('1e3')).toBeUndefined();
    expect(of('12345678901')).toBeUndefined();
    expect(of(['1000', '2000'])).toBeUndefined();
  });

  it('goodputBefore: the share of new requests answered in time from the second second to the trigger', () => {
    expect(goodputBefore({ fresh: [5, 10, 10, 10, 0], goodput: [0, 10, 8, 9, 0] }, 4000)).toBeCloseTo(27 / 30, 12);
    expect(goodputBefore({ fresh: [0, 0], goodput: [0, 0] }, 1000)).toBe(1);
  });
});
