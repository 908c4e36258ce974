import { describe, expect, it } from 'vitest';
import { ManualClock } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';

describe('ManualClock', () => {
  it('fires due timers in (time, scheduling order) and moves time to each', async () => {
    const clock = new ManualClock(100);
    const log: string[] = [];
    clock.setTimeout(() => log.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => log.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => log.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => log.push(`late@${clock.now()}`), 31);
    expect(clock.pending).toBe(4);
    expect(clock.nextAt).toBe(110);
    await clock.advance(30);
    expect(log).toEqual(['a@110', 'b@120', 'c@120']);
    expect(clock.now()).toBe(130);
    expect(clock.pending).toBe(1);
    await clock.advance(1);
    expect(log.at(-1)).toBe('late@131');
    expect(clock.pending).toBe(0);
    expect(clock.nextAt).toBeUndefined();
  });

  it('clearTimeout cancels; unknown handles are ignored', async () => {
    const clock = new ManualClock();
    let fired = 0;
    const h = clock.setTimeout(() => fired++, 5);
    clock.setTimeout(() => fired++, 6);
    clock.clearTimeout(h);
    clock.clearTimeout(12345);
    clock.clearTimeout(undefined);
    expect(clock.pending).toBe(1);
    await clock.advance(10);
    expect(fired).toBe(1);
  });

  it('timers scheduled by woken code (after an await) fire within the same advance', async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const sleep = (ms: number) => new Promise<void>((r) => clock.setTimeout(r, ms));
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(10);
        await Promise.resolve();
        seen.push(clock.now());
      }
    })();
    await clock.advance(25);
    expect(seen).toEqual([10, 20]);
    expect(clock.now()).toBe(25);
    await clock.advance(5);
    await loop;
    expect(seen).toEqual([10, 20, 30]);
  });

  it('a 0 ms or negative timer fires on the next advance, even advance(0)', async () => {
    const clock = new ManualClock();
    let fired = 0;
    clock.setTimeout(() => fired++, 0);
    clock.setTimeout(() => fired++, -5);
    await clock.advance(0);
    expect(fired).toBe(2);
    expect(clock.now()).toBe(0);
  });

  it('runAll fires everything, returns the count, and guards against endless timers', async () => {
    const clock = new ManualClock();
    clock.setTimeout(() => clock.setTimeout(() => undefined, 1000), 500);
    expect(await clock.runAll()).toBe(2);
    expect(clock.now()).toBe(1500);
    const forever = (): void => void clock.setTimeout(forever, 1);
    forever();
    await expect(clock.runAll(50)).rejects.toThrow('more than 50 timers fired');
  });

  it('rejects a delay above 2^31 − 1 ms (the platform would fire it after 1 ms)', () => {
    const clock = new ManualClock();
    expect(() => clock.setTimeout(() => undefined, MAX_DELAY_MS + 1)).toThrow(RangeError);
    expect(() => clock.setTimeout(() => undefined, MAX_DELAY_MS)).not.toThrow();
  });

  it.each([
    { input: -1, error: 'ms must be a finite number ≥ 0, got -1' },
    { input: Number.NaN, error: 'got NaN' },
    { input: Infinity, error: 'got Infinity' },
  ])('advance($input) is rejected', async ({ input, error }) => {
    await expect(new ManualClock().advance(input)).rejects.toThrow(error);
  });

  it('refuses overlapping advances', async () => {
    const clock = new ManualClock();
    const first = clock.advance(10);
    await expect(clock.advance(10)).rejects.toThrow('already running');
    await first;
    expect(clock.now()).toBe(10);
  });
});
