/**
 * eventLoopDelayMonitor's arithmetic in virtual time: `node:perf_hooks` is replaced (through
 * `process.getBuiltinModule`, where the monitor looks it up) by a histogram and a clock that the
 * test sets, and the sampling interval runs on vitest's fake timers. The monitor against a really
 * blocked event loop is in server-event-loop.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventLoopDelayMonitor } from 'herdless/server';
import { invalidOption } from './support/invalid-option.js';

/** What the monitor reads from node:perf_hooks, driven by the test. */
class FakePerfHooks {
  /** performance.now(), ms. */
  now = 0;
  /** The event loop's busy and idle time so far, ms (for eventLoopUtilization). */
  active = 0;
  idle = 0;
  readonly histogram = { count: 0, max: 0, enabled: false, resolution: 0, resets: 0 };

  readonly module = {
    monitorEventLoopDelay: ({ resolution }: { resolution: number }) => {
      const h = this.histogram;
      h.resolution = resolution;
      return {
        enable: () => void (h.enabled = true),
        disable: () => void (h.enabled = false),
        reset: () => {
          h.count = 0;
          h.max = 0;
          h.resets++;
        },
        get count() {
          return h.count;
        },
        get max() {
          return h.max;
        },
      };
    },
    performance: {
      now: () => this.now,
      eventLoopUtilization: (a?: { active: number; idle: number }, b?: { active: number; idle: number }) => {
        if (a === undefined) return { active: this.active, idle: this.idle, utilization: this.active / (this.active + this.idle || 1) };
        const active = a.active - b!.active;
        const idle = a.idle - b!.idle;
        return { active, idle, utilization: active / (active + idle) };
      },
    },
  };

  /** The histogram saw delays, the largest `maxMs` (it keeps nanoseconds). */
  saw(count: number, maxMs: number): void {
    this.histogram.count = count;
    this.histogram.max = maxMs * 1e6;
  }
}

let hooks: FakePerfHooks;
beforeEach(() => {
  hooks = new FakePerfHooks();
  const real = process.getBuiltinModule.bind(process);
  vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => (id === 'node:perf_hooks' ? hooks.module : real(id))) as never);
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Moves the fake clock and the interval timer together. */
async function advance(ms: number): Promise<void> {
  hooks.now += ms;
  await vi.advanceTimersByTimeAsync(ms);
}

describe('eventLoopDelayMonitor (virtual time)', () => {
  it('the largest delay of the last two intervals, less the histogram\'s own resolution', async () => {
    const delay = eventLoopDelayMonitor({ sampleIntervalMs: 100, resolutionMs: 10 });
    expect([hooks.histogram.enabled, hooks.histogram.resolution]).toEqual([true, 10]);
    expect(delay.delayMs()).toBe(0);
    hooks.saw(5, 60);
    await advance(100);
    expect(delay.delayMs()).toBe(50); // 60 − 10
    expect(hooks.histogram.resets).toBe(1);
    await advance(100); // an interval with nothing: the one before still counts
    expect(delay.delayMs()).toBe(50);
    await advance(100); // two intervals with nothing
    expect(delay.delayMs()).toBe(0);
    hooks.saw(1, 15);
    await advance(100);
    expect(delay.delayMs()).toBe(5);
    hooks.saw(1, 4); // below the resolution: 0, not negative
    await advance(100);
    expect(delay.delayMs()).toBe(5); // the interval before
    await advance(100);
    expect(delay.delayMs()).toBe(0);
    delay.close();
  });

  it('an overdue sampler reads the block at once: now − last sample − the interval', async () => {
    const delay = eventLoopDelayMonitor({ sampleIntervalMs: 100 });
    hooks.saw(1, 30);
    await advance(100); // sampled 20 at 100
    hooks.now += 350; // the loop held: the interval could not fire
    expect(delay.delayMs()).toBe(250); // 450 − 100 − 100 > 20
    hooks.now -= 300; // (only 50 ms later: the sample wins)
    expect(delay.delayMs()).toBe(20);
    delay.close();
  });

  it('utilization is the share of the last interval the loop was busy', async () => {
    const delay = eventLoopDelayMonitor({ sampleIntervalMs: 100 });
    expect(delay.utilization()).toBe(0);
    hooks.active += 25;
    hooks.idle += 75;
    await advance(100);
    expect(delay.utilization()).toBe(0.25);
    hooks.active += 90;
    hooks.idle += 10;
    await advance(100);
    expect(delay.utilization()).toBe(0.9); // this interval's, not the whole run's
    delay.close();
  });

  it('defaults: samples every 100 ms with a 10 ms resolution', async () => {
    const delay = eventLoopDelayMonitor();
    expect(hooks.histogram.resolution).toBe(10);
    hooks.saw(1, 40);
    await advance(99);
    expect(delay.delayMs()).toBe(0);
    await advance(1);
    expect(delay.delayMs()).toBe(30);
    delay.close();
  });

  it('close() stops the sampling and the histogram', async () => {
    const delay = eventLoopDelayMonitor({ sampleIntervalMs: 10 });
    delay.close();
    expect(hooks.histogram.enabled).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    hooks.saw(1, 500);
    await vi.advanceTimersByTimeAsync(100);
    expect(hooks.histogram.resets).toBe(0);
  });

  it('options: sampleIntervalMs in [10, 60 000], resolutionMs a whole number in [1, 1000], nothing else', () => {
    for (const ok of [{ sampleIntervalMs: 10 }, { sampleIntervalMs: 60_000 }, { resolutionMs: 1 }, { resolutionMs: 1000 }]) {
      eventLoopDelayMonitor(ok).close();
    }
    for (const [options, field] of [
      [{ sampleIntervalMs: 9.9 }, 'sampleIntervalMs'],
      [{ sampleIntervalMs: 60_001 }, 'sampleIntervalMs'],
      [{ resolutionMs: 0 }, 'resolutionMs'],
      [{ resolutionMs: 1001 }, 'resolutionMs'],
      [{ resolutionMs: 2.5 }, 'resolutionMs'],
      [{ interval: 10 }, 'interval'],
      [5, 'options'],
    ] as const) {
      const error = invalidOption(() => eventLoopDelayMonitor(options as never));
      expect(error.field).toBe(field);
      expect(error.message.startsWith('eventLoopDelayMonitor:')).toBe(true);
    }
  });

  it('without node:perf_hooks (a browser) it says what to pass instead', () => {
    vi.mocked(process.getBuiltinModule).mockImplementation((() => undefined) as never);
    expect(() => eventLoopDelayMonitor()).toThrow('eventLoopDelayMonitor: needs node:perf_hooks (Node.js ≥ 20.16, Deno, Bun); pass your own eventLoopDelay elsewhere');
  });
});
