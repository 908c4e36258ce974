import type { Rng } from '../rng.js';
import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';
import { MAX_DELAY_MS, type Backoff, type BackoffSpec } from './backoff.js';

/**
 * Options shared by the exponential family. The un-jittered delay before retry n is
 * `min(maxBackoffMs, initialBackoffMs × backoffMultiplier^(n−1))` — gRFC A6's names and formula.
 */
export interface ExponentialBackoffOptions {
  /** The un-jittered wait before the first retry, in ms. Default 100. Range [0, 2^31 − 1]. */
  initialBackoffMs?: number | undefined;
  /** Growth factor per retry. Default 2. Range: finite, > 0. */
  backoffMultiplier?: number | undefined;
  /**
   * The cap on the un-jittered wait, in ms. Default 10 000. Must be ≥ `initialBackoffMs`.
   * `Infinity` (or any value above 2^31 − 1) means "no cap" and is held to 2^31 − 1 ms.
   */
  maxBackoffMs?: number | undefined;
}

/** Options of {@link proportionalJitterBackoff}. */
export interface ProportionalJitterBackoffOptions extends ExponentialBackoffOptions {
  /** The relative spread: the delay is multiplied by uniform(1 − jitter, 1 + jitter). Default 0.2 (gRPC). Range [0, 1]. */
  jitter?: number | undefined;
  /**
   * `true` caps the delay *after* the jitter: never above `maxBackoffMs`. Default `false`, gRPC's
   * formula (gRFC A6), where the jitter applies to the capped value, so a delay may exceed
   * `maxBackoffMs` by up to `jitter` (20%) by design.
   */
  capAfterJitter?: boolean | undefined;
}

type Kind = 'exponential' | 'full jitter' | 'equal jitter' | 'proportional jitter';

interface Normalised {
  initial: number;
  multiplier: number;
  cap: number;
}

const EXPONENTIAL_KEYS: readonly string[] = ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'];
const PROPORTIONAL_KEYS: readonly string[] = /* @__PURE__ */ EXPONENTIAL_KEYS.concat('jitter', 'capAfterJitter');
const INITIAL_RULE = { min: 0, max: MAX_DELAY_MS };
const MULTIPLIER_RULE = { min: 0, minExclusive: true };
const CAP_RULE = { min: 0, allowInfinity: true };

function normalise(owner: string, options: ExponentialBackoffOptions | undefined, known: readonly string[] = EXPONENTIAL_KEYS): Normalised {
  const o = objectOption(owner, 'options', options, known);
  const initial = numberOption(owner, 'initialBackoffMs', o.initialBackoffMs, 100, INITIAL_RULE);
  const multiplier = numberOption(owner, 'backoffMultiplier', o.backoffMultiplier, 2, MULTIPLIER_RULE);
  const rawCap = numberOption(owner, 'maxBackoffMs', o.maxBackoffMs, Math.max(10_000, initial), CAP_RULE);
  if (rawCap < initial) {
    throw new InvalidOptionError(owner, 'maxBackoffMs', rawCap, `must be ≥ initialBackoffMs (${initial})`);
  }
  return { initial, multiplier, cap: Math.min(rawCap, MAX_DELAY_MS) };
}

/**
 * The capped exponential value `min(cap, initial × multiplier^(retry−1))`, safe for any retry
 * number: the power may overflow to Infinity (then the cap applies) and 0 × Infinity never leaks NaN.
 */
function capped(initial: number, multiplier: number, cap: number, retry: number): number {
  const v = initial * multiplier ** (retry - 1);
  // Stryker disable next-line EqualityOperator: at v === cap both branches give cap (v = cap > 0 needs initial > 0; v = cap = 0 gives 0 either way).
  if (v < cap) return v;
  return initial === 0 ? 0 : cap;
}

/** Retries whose capped value is looked up rather than computed (index = retry number). */
const TABLE_SIZE = 64;

/**
 * The family's shared part. Immutable without `Object.freeze` (which cost more than the rest of
 * building one, and a backoff may be built per call): every field is private behind a getter, and
 * the prototypes are frozen, so an assignment such as `b.delay = …` or `b.maxBackoffMs = 0` throws
 * (strict mode) or does nothing — it can never shadow what a call reads.
 */
abstract class ExponentialFamily implements Backoff {
  abstract readonly name: Kind;
  readonly #initial: number;
  readonly #multiplier: number;
  readonly #cap: number;
  // `capped()` for retries 0.., computed by the same expression on the first delay() (so a lookup
  // returns the very same double: `**` costs tens of ns, a lookup one, and the simulator calls
  // delay() millions of times), and only until the value stops changing. Not at construction: a
  // backoff built per call and never asked for a delay (the success path) costs no `**` at all.
  #table: Float64Array | undefined;
  /** The value of every retry from `#table.length` to TABLE_SIZE − 1: the cap (or 0 with initialBackoffMs 0). */
  #rest = 0;
  constructor(n: Normalised) {
    this.#initial = n.initial;
    this.#multiplier = n.multiplier;
    this.#cap = n.cap;
  }
  get initialBackoffMs(): number {
    return this.#initial;
  }
  get backoffMultiplier(): number {
    return this.#multiplier;
  }
  get maxBackoffMs(): number {
    return this.#cap;
  }
  /** The longest wait this backoff gives, in ms: the cap, unless a jitter can exceed it (proportional jitter). */
  get maxDelayMs(): number {
    return this.#cap;
  }
  #fill(): Float64Array {
    const initial = this.#initial;
    const multiplier = this.#multiplier;
    const cap = this.#cap;
    const values: number[] = [];
    // Stryker disable next-line EqualityOperator: `r <= TABLE_SIZE` adds a 65th value that no lookup reads (base() looks up retry < TABLE_SIZE only).
    for (let r = 0; r < TABLE_SIZE; r++) {
      const v = capped(initial, multiplier, cap, r);
      values.push(v);
      // A non-decreasing series that reached the cap (or stays at 0) has the same value from here on.
      // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator,BlockStatement: stopping later (or never) only fills more of the table with the same capped() values; the stops too early are killed (backoff-lookup.test.ts, backoff-edges.test.ts).
      if (multiplier >= 1 && r >= 1 && (v === cap || initial === 0)) {
        this.#rest = v;
        break;
      }
    }
    return (this.#table = Float64Array.from(values));
  }
  /** `capped()` for this backoff's parameters and retry number `retry`. */
  protected base(retry: number): number {
    // Stryker disable next-line ConditionalExpression,BlockStatement: skipping the lookup computes capped() itself, the very same double (the table only saves the `**`).
    if (retry >>> 0 === retry && retry < TABLE_SIZE) {
      const table = this.#table ?? this.#fill();
      return retry < table.length ? table[retry]! : this.#rest;
    }
    return capped(this.#initial, this.#multiplier, this.#cap, retry);
  }
  abstract delay(retry: number, previousMs: number, rng: Rng): number;
  toJSON(): BackoffSpec {
    return {
      kind: this.name as 'exponential',
      initialBackoffMs: this.#initial,
      backoffMultiplier: this.#multiplier,
      maxBackoffMs: this.#cap,
    };
  }
}

/**
 * Freezes the prototypes of a member of the family and of the family itself (see
 * {@link ExponentialFamily}). Marked pure at each use: a bundle that builds no backoff of a kind
 * leaves that class out.
 */
function frozen<C extends abstract new (...args: never[]) => ExponentialFamily>(type: C): C {
  Object.freeze(ExponentialFamily.prototype);
  Object.freeze(type.prototype);
  return type;
}

const Exponential = /* @__PURE__ */ frozen(
  class Exponential extends ExponentialFamily {
    get name(): 'exponential' {
      return 'exponential';
    }
    delay(retry: number): number {
      return this.base(retry);
    }
  },
);

const FullJitter = /* @__PURE__ */ frozen(
  class FullJitter extends ExponentialFamily {
    get name(): 'full jitter' {
      return 'full jitter';
    }
    delay(retry: number, _previousMs: number, rng: Rng): number {
      // uniform(0, v) = 0 + (v − 0) × random(), written so that it equals CPython's to the bit.
      return this.base(retry) * rng.random();
    }
  },
);

const EqualJitter = /* @__PURE__ */ frozen(
  class EqualJitter extends ExponentialFamily {
    get name(): 'equal jitter' {
      return 'equal jitter';
    }
    delay(retry: number, _previousMs: number, rng: Rng): number {
      const v = this.base(retry);
      const half = v / 2;
      const d = half + half * rng.random();
      // Never above v: only subnormal values (v/2 rounded up) could get there.
      // Stryker disable next-line EqualityOperator: at d === v both branches return v.
      return d <= v ? d : v;
    }
  },
);

const ProportionalJitter = /* @__PURE__ */ frozen(
  class ProportionalJitter extends ExponentialFamily {
    readonly #jitter: number;
    readonly #maxDelay: number;
    readonly #capAfterJitter: boolean;
    constructor(n: Normalised, jitter: number, capAfterJitter: boolean) {
      super(n);
      this.#jitter = jitter;
      this.#capAfterJitter = capAfterJitter;
      this.#maxDelay = capAfterJitter ? n.cap : Math.min(MAX_DELAY_MS, n.cap * (1 + jitter));
    }
    get capAfterJitter(): boolean {
      return this.#capAfterJitter;
    }
    get name(): 'proportional jitter' {
      return 'proportional jitter';
    }
    get jitter(): number {
      return this.#jitter;
    }
    override get maxDelayMs(): number {
      return this.#maxDelay;
    }
    delay(retry: number, _previousMs: number, rng: Rng): number {
      const v = this.base(retry);
      const jitter = this.#jitter;
      const lo = 1 - jitter;
      const d = v * (lo + (1 + jitter - lo) * rng.random());
      // Stryker disable next-line EqualityOperator: at d === maxDelay both branches return maxDelay.
      return d < this.#maxDelay ? d : this.#maxDelay;
    }
    override toJSON(): BackoffSpec {
      // capAfterJitter only when set: the spec of gRPC's own formula stays as it was.
      const spec = { ...(super.toJSON() as object), kind: 'proportional jitter', jitter: this.#jitter };
      return (this.#capAfterJitter ? { ...spec, capAfterJitter: true } : spec) as BackoffSpec;
    }
  },
);

/**
 * Capped exponential backoff without jitter: `min(maxBackoffMs, initialBackoffMs × backoffMultiplier^(n−1))`
 * ms before retry n. Deterministic — clients that fail together stay in step (the article's
 * `exponential` row never finishes). Prefer {@link fullJitterBackoff}.
 *
 * @throws InvalidOptionError naming the field for a negative, NaN or infinite value, a multiplier ≤ 0,
 *   or `maxBackoffMs` below `initialBackoffMs`.
 * @example
 * ```ts
 * exponentialBackoff({ initialBackoffMs: 200, maxBackoffMs: 10_000 }).delay(3, 0, systemRandom); // 800
 * ```
 */
export function exponentialBackoff(options?: ExponentialBackoffOptions): Backoff {
  return new Exponential(normalise('exponentialBackoff', options));
}

/**
 * Full jitter: uniform(0, v) ms before retry n, where v is the capped exponential value. Spreads
 * retries over the whole window; in the AWS post ("Exponential Backoff And Jitter", M. Brooker,
 * 2015) it did the least work, and in the article's herd lab it crashed the server least (1.1 times
 * on average). herdless's default.
 *
 * @throws InvalidOptionError as {@link exponentialBackoff}.
 * @example
 * ```ts
 * const b = fullJitterBackoff(); // 100 ms × 2^(n−1), capped at 10 s, times uniform(0, 1)
 * ```
 */
export function fullJitterBackoff(options?: ExponentialBackoffOptions): Backoff {
  return new FullJitter(normalise('fullJitterBackoff', options));
}

/**
 * @internal Full jitter from `initialBackoffMs` (in [0, 10 000]), doubling to a 10 s cap: the
 * defaults' constructor, for values known to be valid — what `fullJitterBackoff({ initialBackoffMs,
 * backoffMultiplier: 2, maxBackoffMs: 10_000 })` builds, without reading options (so a bundle that
 * only needs the defaults leaves the option reader out).
 */
export function defaultFullJitter(initialBackoffMs: number): Backoff {
  return new FullJitter({ initial: initialBackoffMs, multiplier: 2, cap: 10_000 });
}

/**
 * Equal jitter: v/2 + uniform(0, v/2) ms before retry n (v as in {@link exponentialBackoff}): always
 * waits at least half the exponential value. Source: the AWS "Exponential Backoff And Jitter" post.
 *
 * @throws InvalidOptionError as {@link exponentialBackoff}.
 * @example
 * ```ts
 * equalJitterBackoff({ initialBackoffMs: 200 }).delay(1, 0, systemRandom); // in [100, 200] (200 only by rounding)
 * ```
 */
export function equalJitterBackoff(options?: ExponentialBackoffOptions): Backoff {
  return new EqualJitter(normalise('equalJitterBackoff', options));
}

/**
 * Proportional jitter, gRPC's form (gRFC A6): `min(initialBackoffMs × backoffMultiplier^(n−1), maxBackoffMs)
 * × uniform(1 − jitter, 1 + jitter)` ms before retry n, jitter 0.2 by default (±20%). Its largest
 * delay, `maxDelayMs`, is therefore `maxBackoffMs × (1 + jitter)` (held to 2^31 − 1 ms): by design,
 * a wait may exceed `maxBackoffMs` by 20%. `capAfterJitter: true` applies the cap after the jitter
 * instead (`maxDelayMs` = `maxBackoffMs`; the waits that reach the cap then pile up on it).
 *
 * @throws InvalidOptionError as {@link exponentialBackoff}, for `jitter` outside [0, 1], or a `capAfterJitter` that is not a boolean.
 * @example
 * ```ts
 * const grpc = proportionalJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000 });
 * grpc.delay(2, 0, systemRandom); // in [160, 240)
 * ```
 */
export function proportionalJitterBackoff(options?: ProportionalJitterBackoffOptions): Backoff {
  const n = normalise('proportionalJitterBackoff', options, PROPORTIONAL_KEYS);
  const jitter = numberOption('proportionalJitterBackoff', 'jitter', options?.jitter, 0.2, { min: 0, max: 1 });
  const capAfterJitter = options?.capAfterJitter;
  if (capAfterJitter !== undefined && typeof capAfterJitter !== 'boolean') {
    throw new InvalidOptionError('proportionalJitterBackoff', 'capAfterJitter', capAfterJitter, 'must be a boolean');
  }
  return new ProportionalJitter(n, jitter, capAfterJitter === true);
}
