import { describe, expect, it } from 'vitest';
import { unfinishedLines } from '../src/live/experiments.js';

// The live herd table's legend: `*` marks a live value whose run did not finish by the horizon, so
// the line explaining it appears only when some live value carries one; the simulator's unfinished
// runs are listed only for the strategies that have some (a new user saw "* unfinished …" under a
// table with no `*` in it).
type Rows = Parameters<typeof unfinishedLines>[0]['rows'];
const row = (strategy: string, liveFinished: boolean, simUnfinished: number) =>
  ({ strategy, live: { finished: liveFinished }, sim: { unfinished: simUnfinished } }) as unknown as Rows[number];
const simSeeds = Array.from({ length: 20 }, (_, i) => i);

describe('live herd: the legend of unfinished runs', () => {
  it('everything finished: no legend at all', () => {
    expect(unfinishedLines({ rows: [row('full jitter', true, 0), row('equal jitter', true, 0)], simSeeds })).toEqual([]);
  });

  it('only the simulator has unfinished runs: they are listed, and no `*` is explained', () => {
    expect(unfinishedLines({ rows: [row('full jitter', true, 0), row('fixed 1s', true, 20)], simSeeds })).toEqual(['simulator runs unfinished: fixed 1s 20 of 20']);
  });

  it('a live run did not finish: the `*` is explained; the simulator lists only its own unfinished strategies', () => {
    const rows = [row('fixed 1s', false, 20), row('exponential', false, 20), row('full jitter', false, 0)];
    expect(unfinishedLines({ rows, simSeeds })).toEqual(['* unfinished at the horizon (live); simulator runs unfinished: fixed 1s 20 of 20, exponential 20 of 20']);
    expect(unfinishedLines({ rows: [row('full jitter', false, 0)], simSeeds })).toEqual(['* unfinished at the horizon (live)']);
  });
});
