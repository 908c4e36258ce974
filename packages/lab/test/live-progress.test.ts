import { describe, expect, it } from 'vitest';
import { instrumentLines, progressTime } from '../src/live/experiments.js';

describe('live progress lines', () => {
  it('give the wall clock since time 0 up to the horizon', () => {
    expect(progressTime(0, 30_000)).toBe('0.0 s');
    expect(progressTime(5_012, 30_000)).toBe('5.0 s');
    expect(progressTime(30_000, 30_000)).toBe('30.0 s');
    expect(progressTime(25_400, 40_000, 0)).toBe('25 s');
  });

  it('never claim a time past the horizon: a late line says how late the machine is', () => {
    // A loaded machine: the progress timer fired 6.5 s after the horizon, before the horizon's own timer.
    expect(progressTime(36_500, 30_000)).toBe('30.0 s, the horizon (the wall clock is at 36.5 s: this machine runs its timers 6.5 s late; the run stops now)');
    expect(progressTime(47_000, 40_000, 0)).toBe('40 s, the horizon (the wall clock is at 47 s: this machine runs its timers 7 s late; the run stops now)');
  });

  it("count the server's timer lateness over its timer firings, not over the run's ticks", () => {
    const lateness = { p50: 0.5, p99: 2, max: 3, count: 6000 };
    const server = { p50: 1, p99: 2960.2, max: 3000, count: 13 };
    expect(instrumentLines(lateness, server)[1]).toBe(
      'server: tick timer lateness (its worst run) p50 1.0 ms, p99 2960.2 ms, max 3000.0 ms over 13 timer firings (its timer runs only while a request waits)',
    );
  });
});
