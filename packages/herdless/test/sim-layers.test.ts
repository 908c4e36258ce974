import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInvalidOptionError } from 'herdless';
import { layerNames, runLayers } from 'herdless/sim';

describe('layers experiment (retry() and the don’t-retry mark, in virtual time)', () => {
  it('frontend → backend → db, 3 attempts each: 3, 9, 27; under the one-layer rule 3, 3, 3', async () => {
    expect(await runLayers()).toEqual([
      { policy: 'every layer retries', calls: { frontend: 3, backend: 9, db: 27 } },
      { policy: 'retry at one layer', calls: { frontend: 3, backend: 3, db: 3 } },
    ]);
  });

  it('generalises to A, A², … A^D, and A at every layer under the one-layer rule (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), async (depth, attempts) => {
        const [every, one] = await runLayers({ depth, attempts });
        const names = layerNames(depth);
        expect(Object.values(every!.calls)).toEqual(names.map((_, i) => attempts ** (i + 1)));
        expect(Object.values(one!.calls)).toEqual(names.map(() => attempts));
      }),
      { numRuns: 15 },
    );
  });

  it('names the services', () => {
    expect(layerNames(1)).toEqual(['db']);
    expect(layerNames(4)).toEqual(['frontend', 'backend 1', 'backend 2', 'db']);
  });

  it.each([
    [{ depth: 0 }, 'runLayers: depth must be ≥ 1, got 0'],
    [{ attempts: 1.5 }, 'runLayers: attempts must be an integer, got 1.5'],
    [{ depth: 10, attempts: 10 }, 'attempts ^ depth (10) must be ≤ 100000 calls, got 10'],
  ])('%j is rejected', async (options, message) => {
    const error = await runLayers(options).catch((e: unknown) => e);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toContain(message);
  });
});
