// ManualClock at its edges: what it starts from and refuses, the runAll guard at exactly its limit,
// a run that threw leaving the clock usable, and timers scheduled after time has moved.
import { describe, expect, it } from 'vitest';
import { ManualClock } from 'herdless';

describe('ManualClock: start', () => {
  it('starts at 0 by default, or at any finite startMs (negative included)', () => {
    expect(new ManualClock().now()).toBe(0);
    expect(new ManualClock(-250.5).now()).toBe(-250.5);
    expect(new ManualClock(1e15).now()).toBe(1e15);
  });

  it.each([
    [Number.NaN, 'NaN'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
    ['5', '5'],
    [null, 'null'],
  ])('refuses startMs %s with a RangeError naming it', (startMs, shown) => {
    expect(() => new ManualClock(startMs as never)).toThrow(new RangeError(`ManualClock: startMs must be a finite number, got ${shown}`));
  });
});

describe('ManualClock: timers', () => {
  it('a timer is due its delay after the time it was scheduled at, not after the start', async () => {
    const clock = new ManualClock(1000);
    await clock.advance(500);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 20);
    expect(clock.nextAt).toBe(1520);
    await clock.advance(19);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([1520]);
  });

  it('an earlier timer scheduled last goes first; one due between two others, between them', async () => {
    const clock = new ManualClock(0);
    const log: string[] = [];
    for (const [name, at] of [['30', 30], ['10', 10], ['50', 50], ['20', 20], ['40', 40], ['5', 5], ['20b', 20]] as const) {
      clock.setTimeout(() => log.push(name), at);
    }
    expect(clock.nextAt).toBe(5);
    expect(await clock.runAll()).toBe(7);
    expect(log).toEqual(['5', '10', '20', '20b', '30', '40', '50']);
  });

  it('the handles are distinct and clearing one leaves the rest; clearing it twice is harmless', async () => {
    const clock = new ManualClock();
    const log: number[] = [];
    const handles = [1, 2, 3].map((n) => clock.setTimeout(() => log.push(n), 10));
    expect(new Set(handles).size).toBe(3);
    clock.clearTimeout(handles[1]);
    clock.clearTimeout(handles[1]);
    expect(clock.pending).toBe(2);
    await clock.advance(10);
    expect(log).toEqual([1, 3]);
  });

  it('a delay of exactly 2^31 − 1 ms is allowed; 1 ms more is refused with its figure', () => {
    const clock = new ManualClock();
    expect(() => clock.setTimeout(() => undefined, 2 ** 31)).toThrow(
      new RangeError('ManualClock: a timer of 2147483648 ms exceeds 2^31 − 1 ms; setTimeout would fire it after 1 ms'),
    );
    expect(clock.pending).toBe(0);
    clock.setTimeout(() => undefined, 2 ** 31 - 1);
    expect(clock.nextAt).toBe(2 ** 31 - 1);
  });

  it('a NaN delay counts as 0', async () => {
    const clock = new ManualClock(7);
    let fired = 0;
    clock.setTimeout(() => fired++, Number.NaN);
    expect(clock.nextAt).toBe(7);
    await clock.advance(0);
    expect(fired).toBe(1);
  });
});

describe('ManualClock: advance and runAll', () => {
  it('advance() lands on now + ms even past the last timer; runAll() stays at the last timer', async () => {
    const clock = new ManualClock(0);
    clock.setTimeout(() => undefined, 10);
    await clock.advance(100);
    expect(clock.now()).toBe(100);
    clock.setTimeout(() => undefined, 10);
    expect(await clock.runAll()).toBe(1);
    expect(clock.now()).toBe(110);
    expect(await clock.runAll()).toBe(0);
    expect(clock.now()).toBe(110);
  });

  it('a timer due exactly at the end of an advance fires in it; one due 1 ms later does not', async () => {
    const clock = new ManualClock(0);
    const log: number[] = [];
    clock.setTimeout(() => log.push(10), 10);
    clock.setTimeout(() => log.push(11), 11);
    await clock.advance(10);
    expect(log).toEqual([10]);
    expect(clock.pending).toBe(1);
  });

  it('runAll(n) fires exactly n timers when n are pending; n + 1 is refused after firing n', async () => {
    const clock = new ManualClock(0);
    let fired = 0;
    for (let i = 1; i <= 3; i++) clock.setTimeout(() => fired++, i);
    expect(await clock.runAll(3)).toBe(3);
    for (let i = 1; i <= 4; i++) clock.setTimeout(() => fired++, i);
    await expect(clock.runAll(3)).rejects.toThrow(new RangeError('ManualClock.runAll: more than 3 timers fired'));
    expect(fired).toBe(6);
    expect(clock.pending).toBe(1);
  });

  it('after a run that threw, the clock can be advanced again', async () => {
    const clock = new ManualClock(0);
    for (let i = 1; i <= 2; i++) clock.setTimeout(() => undefined, i);
    await expect(clock.runAll(1)).rejects.toThrow('more than 1 timers fired');
    expect(clock.now()).toBe(1); // the one timer it fired
    await expect(clock.advance(5)).resolves.toBeUndefined();
    expect(clock.now()).toBe(6);
    expect(clock.pending).toBe(0);
  });

  it('runAll refuses while an advance runs, and the advance is unharmed', async () => {
    const clock = new ManualClock(0);
    const first = clock.advance(10);
    await expect(clock.runAll()).rejects.toThrow(new RangeError('ManualClock: advance() or runAll() is already running; await it first'));
    await first;
    expect(clock.now()).toBe(10);
  });

  it.each([
    ['a string', '5', '5'],
    ['-0.5', -0.5, '-0.5'],
    ['-Infinity', -Infinity, '-Infinity'],
  ])('advance(%s) is refused with a RangeError', async (_name, ms, shown) => {
    const clock = new ManualClock(0);
    await expect(clock.advance(ms as never)).rejects.toThrow(new RangeError(`ManualClock.advance: ms must be a finite number ≥ 0, got ${shown}`));
    expect(clock.now()).toBe(0);
  });

  it('before the first timer, promise callbacks already queued run (the code they wake may schedule one)', async () => {
    const clock = new ManualClock(0);
    const log: number[] = [];
    void Promise.resolve()
      .then(() => undefined)
      .then(() => clock.setTimeout(() => log.push(clock.now()), 5));
    await clock.advance(5);
    expect(log).toEqual([5]);
  });
});
