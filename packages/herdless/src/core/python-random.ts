import { describe } from './errors.js';
import type { IntRng } from './rng.js';

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
/** CPython's `NV_MAGICCONST`, 4·e^(−1/2)/√2, as the double CPython computes (not recomputed: `Math.exp` need not match C's `exp` to the bit). */
const NV_MAGICCONST = 1.7155277699214135;

/**
 * A bit-exact port of CPython's `random.Random` (Mersenne Twister MT19937), so that the lab
 * reproduces the article's Python figures draw for draw.
 *
 * Seeding follows CPython's `random.seed(int)`: `init_by_array` with the 32-bit words of |seed|,
 * least significant first (`[0]` for seed 0). Every method consumes the generator exactly as
 * CPython 3.11 does: `random()` takes two 32-bit words, `getrandbits(k ≤ 32)` one, `randbelow(n)`
 * one per try of its rejection loop, `sample` follows CPython's pool/set switch.
 *
 * Sources: M. Matsumoto and T. Nishimura, "Mersenne Twister" (1998), `mt19937ar.c`;
 * CPython `Modules/_randommodule.c` and `Lib/random.py`.
 *
 * @throws RangeError when the seed is not a safe integer.
 * @example
 * ```ts
 * const r = new PyRandom(0);
 * r.random(); // 0.8444218515250481, as Python's random.seed(0); random.random()
 * ```
 */
export class PyRandom implements IntRng {
  private readonly mt = new Uint32Array(N);
  // CPython starts at N + 1 ("not seeded"); here the constructor always seeds, and seeding sets N.
  private mti = N;

  /** @param seed any safe integer; negative seeds use |seed|, as CPython does. */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(`PyRandom: seed must be a safe integer, got ${describe(seed)}`);
    }
    let s = Math.abs(seed);
    const key: number[] = [];
    do {
      key.push(s % 0x100000000);
      s = Math.floor(s / 0x100000000);
    } while (s > 0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    // Stryker disable next-line EqualityOperator: a pass with i = N would only write mt[N], outside the Uint32Array, a write typed arrays drop.
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      // 1812433253 * prev + i, modulo 2^32, without losing bits to doubles.
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    const len = key.length;
    // CPython runs max(N, len) steps; the key of a safe integer has at most 2 words, so that is N.
    for (let k = N; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= len) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private twist(): void {
    const mt = this.mt;
    let kk = 0;
    let y: number;
    for (; kk < N - M; kk++) {
      y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + M]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + (M - N)]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (mt[N - 1]! & UPPER_MASK) | (mt[0]! & LOWER_MASK);
    mt[N - 1] = mt[M - 1]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.mti = 0;
  }

  /** The next raw 32-bit output of MT19937, as an unsigned integer in [0, 2^32). */
  genrand32(): number {
    if (this.mti >= N) this.twist();
    let y = this.mt[this.mti++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** A uniform double in [0, 1) with 53 random bits, as CPython's `random()`. */
  random(): number {
    const a = this.genrand32() >>> 5;
    const b = this.genrand32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `a + (b - a) * random()`, as CPython's `uniform(a, b)`. */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }

  /**
   * An exponentially distributed draw with rate `lambd` (mean 1/lambd), as CPython's `expovariate`.
   * Note: V8's `Math.log` may differ from C's `log` by one ulp, so this is not always bit-identical.
   */
  expovariate(lambd: number): number {
    return -Math.log(1 - this.random()) / lambd;
  }

  /**
   * A normally distributed draw with mean `mu` and standard deviation `sigma`, as CPython's
   * `normalvariate(mu, sigma)`: Kinderman and Monahan's ratio-of-uniforms method, two `random()`
   * per try, repeated until accepted (so a call consumes 4, 8, … words of the generator).
   * Note: the acceptance test takes `log(u2)`; V8's `Math.log` may differ from C's by one ulp, which
   * could flip a test lying within one ulp of its bound — none among the lab's draws (its golden
   * figures are checked against CPython).
   * Source: A. J. Kinderman and J. F. Monahan, "Computer generation of random variables using the
   * ratio of uniform deviates", ACM TOMS 3 (1977); CPython `Lib/random.py`.
   */
  normalvariate(mu: number, sigma: number): number {
    let z: number;
    for (;;) {
      const u1 = this.random();
      const u2 = 1 - this.random();
      z = (NV_MAGICCONST * (u1 - 0.5)) / u2;
      const zz = (z * z) / 4;
      if (zz <= -Math.log(u2)) break;
    }
    return mu + z * sigma;
  }

  /** `k` random bits (1 ≤ k ≤ 32) as an unsigned integer, as CPython's `getrandbits(k)`. */
  getrandbits(k: number): number {
    if (!(Number.isInteger(k) && k >= 1 && k <= 32)) {
      throw new RangeError(`PyRandom.getrandbits: k must be an integer in [1, 32], got ${String(k)}`);
    }
    return this.genrand32() >>> (32 - k);
  }

  /** A uniform integer in [0, n), by CPython's rejection loop over `getrandbits(bit_length(n))`. */
  randbelow(n: number): number {
    if (!(Number.isInteger(n) && n >= 1 && n < 0x100000000)) {
      throw new RangeError(`PyRandom.randbelow: n must be an integer in [1, 2^32), got ${String(n)}`);
    }
    // getrandbits(bit_length(n)) keeps the top bit_length(n) = 32 - clz32(n) bits of one word.
    const shift = Math.clz32(n);
    let r = this.genrand32() >>> shift;
    while (r >= n) r = this.genrand32() >>> shift;
    return r;
  }

  /**
   * `k` distinct elements of `population`, in selection order, as CPython's `sample(population, k)`.
   * @throws RangeError when k is not an integer in [0, population.length].
   */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    // Grown by samplePositions, which checks k first (`new Array(k)` threw "Invalid array length" for k = -1).
    const picks: number[] = [];
    this.samplePositions(n, k, picks);
    return picks.map((i) => population[i]!);
  }

  /**
   * The positions that `sample(range(n), k)` would return, written into `out[0..k)` in selection
   * order, without copying the population: the simulator's allocation-free form of {@link sample}.
   * @throws RangeError when k is not an integer in [0, n].
   */
  samplePositions(n: number, k: number, out: number[] | Int32Array): void {
    if (!(Number.isInteger(k) && k >= 0 && k <= n)) {
      throw new RangeError(`PyRandom.sample: k must be an integer in [0, ${n}], got ${String(k)}`);
    }
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      // Pool method: a partial Fisher–Yates over a copy of 0..n-1 (scratch space for small n).
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the scratch array only saves an allocation; a fresh Int32Array(n) gives the same draws.
      const pool = n <= 64 ? poolScratch : new Int32Array(n);
      // Stryker disable next-line EqualityOperator: a pass with i = n writes pool[n], which no draw reads (j < n - i, n - i - 1 < n).
      for (let i = 0; i < n; i++) pool[i] = i;
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        out[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
      return;
    }
    // Set method: redraw a position already taken. A linear scan beats a Set for small k.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: the scan and the Set redraw the same positions; only the speed differs.
    if (k <= 16) {
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (taken(out, i, j)) j = this.randbelow(n);
        out[i] = j;
      }
      return;
    }
    const selected = new Set<number>();
    for (let i = 0; i < k; i++) {
      let j = this.randbelow(n);
      while (selected.has(j)) j = this.randbelow(n);
      selected.add(j);
      out[i] = j;
    }
  }
}

const poolScratch = /* @__PURE__ */ new Int32Array(64);

function taken(out: ArrayLike<number>, count: number, j: number): boolean {
  for (let i = 0; i < count; i++) if (out[i] === j) return true;
  return false;
}
