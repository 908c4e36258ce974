// A breaker's snapshot taken in this process and restored in another one (the built library, in a
// child process) whose monotonic and wall clocks differ from ours: the open period goes on to the
// millisecond. Time is injected on both sides: a ManualClock here, fixed clocks in the child.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, consecutiveFailures, type BreakerSnapshot } from 'herdless';

const execFileAsync = promisify(execFile);

/** A wall-clock instant (ms since the epoch) the tests stamp snapshots with. */
const WALL = 1_764_600_000_000;

const down = () => Object.assign(new Error('down'), { status: 503 });

describe('two processes: a snapshot taken in one, restored in another whose clocks are 10 minutes off', () => {
  const CHILD = fileURLToPath(new URL('./support/breaker-restore-child.mjs', import.meta.url));
  /** Runs the child (the built library) and returns its report. */
  async function restoreInChild(snapshot: BreakerSnapshot, monotonicStart: number, wallNow: number, probes: number[]) {
    const { stdout } = await execFileAsync(process.execPath, [CHILD, JSON.stringify(snapshot), String(monotonicStart), String(wallNow), JSON.stringify(probes)], {
      timeout: 60_000,
    });
    return JSON.parse(stdout) as { probes: { at: number; outcome: string; retryAfterMs?: number; state: string }[]; events: { type: string; afterRestoreMs: number }[] };
  }

  /** This process: a breaker opened for 30 s, snapshot 12 s into its open period (18 s left). */
  async function openSnapshot() {
    const clock = new ManualClock(50_000);
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 30_000, clock, now: () => WALL });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(12_000);
    return JSON.parse(JSON.stringify(breaker.snapshot())) as BreakerSnapshot;
  }

  it('refuses calls for the rest of the open period (to the millisecond), then half-opens and admits the trial', async () => {
    const snapshot = await openSnapshot();
    // The child's monotonic clock reads 10 minutes more than ours; its wall clock is 10 minutes behind.
    const report = await restoreInChild(snapshot, 50_000 + 12_000 + 600_000, WALL - 600_000, [0, 17_999, 18_000]);
    expect(report.probes).toEqual([
      { at: 0, outcome: 'refused', retryAfterMs: 18_000, state: 'open' },
      { at: 17_999, outcome: 'refused', retryAfterMs: 1, state: 'open' },
      { at: 18_000, outcome: 'sent', state: 'closed' },
    ]);
    expect(report.events).toEqual([
      { type: 'half-open', afterRestoreMs: 18_000 },
      { type: 'close', afterRestoreMs: 18_000 },
    ]);
  }, 70_000);

  it('with the wall clocks in agreement, the time the snapshot spent in storage is subtracted', async () => {
    const snapshot = await openSnapshot();
    const report = await restoreInChild(snapshot, 7, WALL + 5_000, [0, 12_999, 13_000]);
    expect(report.probes.map((p) => [p.at, p.outcome, p.retryAfterMs])).toEqual([
      [0, 'refused', 13_000],
      [12_999, 'refused', 1],
      [13_000, 'sent', undefined],
    ]);
  }, 70_000);
});
