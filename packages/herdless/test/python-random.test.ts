import { describe, expect, it } from 'vitest';
import { PyRandom } from 'herdless/sim';

// Vectors computed with CPython 3.11's `random` module (random.seed(n), then the calls shown).
describe('PyRandom — bit-exact CPython random', () => {
  it('random() after seed 0', () => {
    const r = new PyRandom(0);
    expect([r.random(), r.random(), r.random()]).toEqual([0.8444218515250481, 0.7579544029403025, 0.420571580830845]);
  });

  it('getrandbits(32) after seed 0 stays unsigned', () => {
    const r = new PyRandom(0);
    expect([r.getrandbits(32), r.getrandbits(32), r.getrandbits(32)]).toEqual([3626764237, 1654615998, 3255389356]);
  });

  it('sample (set and pool methods), uniform and expovariate on one generator', () => {
    const r = new PyRandom(0);
    expect(r.sample([...Array(1000).keys()], 5)).toEqual([864, 394, 776, 911, 430]);
    expect(r.sample([0, 1, 2, 3, 4, 5, 6], 5)).toEqual([0, 2, 4, 3, 1]);
    expect(r.uniform(0.8, 1.2)).toBe(1.1672937327140527);
    expect(r.expovariate(30)).toBeCloseTo(0.05903639811567454, 15);
  });

  it('normalvariate: the ratio-of-uniforms loop consumes the generator as CPython does', () => {
    // Seed 0's first normal draw is rejected once (four random() calls), so the random() after it
    // is CPython's fifth: a port that skipped the loop or drew in another order would differ.
    const r = new PyRandom(0);
    expect(r.normalvariate(10, 2)).toBe(9.632263557813484);
    expect(r.random()).toBe(0.5112747213686085);
    const s = new PyRandom(0);
    expect([1, 2, 3, 4, 5].map(() => s.normalvariate(10, 2))).toEqual([9.632263557813484, 10.065008258155164, 11.39765538650796, 9.80726430996945, 12.827015580096242]);
    const t = new PyRandom(7);
    expect([t.normalvariate(0, 1), t.normalvariate(0, 1), t.normalvariate(0, 1)]).toEqual([-0.35590824951057143, 0.27915309343878736, 0.0970447726200016]);
  });

  it('random() after seed 19', () => {
    expect(new PyRandom(19).random()).toBe(0.6771258268002703);
  });

  it('samplePositions equals sample over range(n)', () => {
    const a = new PyRandom(7);
    const b = new PyRandom(7);
    for (const [n, k] of [[3, 3], [21, 5], [22, 5], [100, 5], [5, 0], [200, 20], [90, 6]] as const) {
      const out: number[] = [];
      a.samplePositions(n, k, out);
      expect(out.slice(0, k)).toEqual(b.sample([...Array(n).keys()], k));
    }
  });

  it('large samples: pool method with k > 5 and set method with k > 16', () => {
    const r = new PyRandom(7);
    expect(r.sample([...Array(90).keys()], 6)).toEqual([41, 19, 50, 83, 6, 9]);
    expect(r.sample([...Array(200).keys()], 20)).toEqual([137, 24, 93, 149, 14, 129, 54, 9, 22, 111, 107, 17, 61, 23, 141, 108, 15, 144, 31, 57]);
  });

  it('randbelow(1) still consumes a word', () => {
    const a = new PyRandom(3);
    const b = new PyRandom(3);
    expect(a.randbelow(1)).toBe(0);
    b.genrand32();
    expect(a.random()).toBe(b.random());
  });

  it.each([
    [1.5, 'seed must be a safe integer, got 1.5'],
    [Number.NaN, 'got NaN'],
    [2 ** 60, 'seed must be a safe integer'],
    // Quoted as InvalidOptionError quotes values: `got [object Object]` and an empty `got ` said nothing.
    [{}, 'seed must be a safe integer, got an object (Object)'],
    [[], 'seed must be a safe integer, got an array of length 0'],
    ['7', 'seed must be a safe integer, got "7"'],
  ])('rejects seed %s', (seed, message) => {
    expect(() => new PyRandom(seed as number)).toThrow(message);
  });

  it('seeds larger than 32 bits use every word, like CPython', () => {
    expect(new PyRandom(2 ** 32 + 5).random()).toBe(0.15727238718789782);
    expect(new PyRandom(-5).random()).toBe(new PyRandom(5).random());
  });

  it('rejects a bad sample size', () => {
    expect(() => new PyRandom(0).sample([1, 2], 3)).toThrow('k must be an integer in [0, 2], got 3');
  });
});
