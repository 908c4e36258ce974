import type { Verdict } from '../classify/verdict.js';
import { fromSpec } from '../spec.js';
import { InvalidOptionError } from '../errors.js';
import { hasMethods, numberOption, objectOption } from '../validate.js';
import type { Rng } from '../rng.js';
import { SlidingCounts } from './sliding-window.js';

/**
 * A limit on attempts — first tries included — shared by many calls on purpose (one per client
 * process, or per backend), asked before every attempt. Where a retry budget (`RetryBudget`) limits only
 * retries, a throttle may refuse a first try too: it stops a client from sending what the backend
 * would refuse anyway.
 *
 * The protocol, in the order a caller (`retry()`, the adapters, the simulator) uses it:
 * 1. `admit(now, rng, isRetry)` just before an attempt would be sent. It counts the request
 *    whatever it answers; `false` means do not send it (`retry()` then gives up with reason
 *    `'throttled'`);
 * 2. `onAnswer(now, accepted)` once the backend's answer is known: `accepted` is `true` when the
 *    backend served the request (a success, or a failure that is not about load — a 404, a 400),
 *    `false` when it turned it away (a retryable failure: 503, 429, a timeout, a refused
 *    connection; or "don't retry" pushback) — see {@link isAcceptedVerdict}. An attempt with no
 *    answer (the caller aborted it) is not reported.
 *
 * Times are milliseconds on the caller's monotonic clock (real or virtual), non-decreasing; the
 * randomness is the caller's (`retry()`'s `random` option, the simulator's seeded RNG). A throttle
 * never reads a clock or `Math.random` itself, so the simulator drives the very same object.
 *
 * @example
 * ```ts
 * const throttle = adaptiveThrottling(); // one per client
 * if (!throttle.admit(now, rng, false)) return rejectLocally();
 * const ok = await send();
 * throttle.onAnswer(later, ok);
 * ```
 */
export interface AttemptThrottle {
  /** The throttle's kind, e.g. `'adaptive throttling'`; the lab and the telemetry print it. */
  readonly name: string;
  /**
   * Counts a request at `now` ms and answers whether to send it: `false` rejects it locally.
   * `isRetry` is false for a call's first try. Called once per attempt, before it is sent.
   */
  admit(now: number, rng: Rng, isRetry: boolean): boolean;
  /** The backend's answer to an admitted request, at `now` ms: accepted (served) or not. */
  onAnswer(now: number, accepted: boolean): void;
}

/**
 * Whether a failed attempt's verdict counts as *accepted* by the backend for adaptive throttling:
 * the backend answered and the answer was not about load. A `'fatal'` verdict (a 404, a 400, a
 * bug) is an accept; a `'retryable'` one (503, 429, a timeout, a refused connection) and a
 * `'do-not-retry'` one (overloaded, "don't retry" pushback) are rejections. A `'circuit-open'`
 * verdict is neither — the breaker refused the attempt locally, the backend never saw it — and
 * gives `undefined`.
 *
 * Source: the SRE book, "Handling Overload" — accepts are "requests accepted by the backend",
 * rejections the backend's "out of quota" answers; errors that say nothing about load are accepts.
 * @example
 * ```ts
 * throttle.onAnswer(now, isAcceptedVerdict(classify(error)) ?? true);
 * ```
 */
export function isAcceptedVerdict(verdict: Verdict): boolean | undefined {
  switch (verdict.kind) {
    case 'fatal':
      return true;
    case 'circuit-open':
      return undefined;
    default:
      return false;
  }
}

/** Options of {@link adaptiveThrottling}. */
export interface AdaptiveThrottlingOptions {
  /**
   * The multiplier K: the client keeps sending until its requests exceed K × its accepts over the
   * window. Default 2 (the SRE book's value: up to half the requests may be refused before the
   * client throttles). Smaller is more aggressive. Range ≥ 1, finite.
   */
  k?: number | undefined;
  /** The window over which requests and accepts are counted, in ms. Default 120 000 (the book's two minutes). Range > 0, finite. */
  windowMs?: number | undefined;
  /**
   * How many buckets the window is cut into (memory is 16 bytes per bucket); each is
   * `windowMs / buckets` ms wide. Default 120 (1 s buckets with the default window). Integer in
   * [1, 10 000].
   */
  buckets?: number | undefined;
  /**
   * The most a *first try* is rejected with, whatever the ratio (Envoy admission control's
   * `max_rejection_probability`, failsafe-go's `maxRejectionRate`): first tries are rejected with
   * probability `min(rule, maxRejectionProbability)`, retries with the rule's full probability (a
   * retry is extra load by definition, and has its budget; the cap exists to keep probing the
   * backend, which first tries do). It bounds how long full traffic takes to return once a backend
   * that refused everything for a window or more recovers: about
   * `windowMs / k × (1 + ln(1 / (1 − maxRejectionProbability)))` — within one window for
   * `maxRejectionProbability ≤ 1 − e^(1 − k)` (0.63 with K = 2); with 1 (the book's rule exactly)
   * it waits for a stray first try to get through and can take many windows. The price: while the
   * backend refuses everything, `1 − maxRejectionProbability` of the first tries still reach it.
   * The cap binds only while the backend serves less than `(1 − maxRejectionProbability) / k` of
   * what is asked. Default 0.5: full traffic back within 0.78–0.87 windows (a 10 s window,
   * seeds 0–19), where Envoy's 0.8 takes 1.27–1.47 windows and failsafe-go's 0.9 1.50–1.94.
   * Range [0, 1].
   */
  maxRejectionProbability?: number | undefined;
}

/** Adaptive throttling described as data (lab config files, the lab page, `toJSON()`): see {@link throttleFromSpec}. */
export type ThrottleSpec = { kind: 'adaptive throttling'; k: number; windowMs: number; buckets: number; maxRejectionProbability: number };

/**
 * @internal The `throttle` option of `owner` (`retry`, `createHedger`, the adapters): `undefined` when
 * not given, else the {@link AttemptThrottle} as it is. Throws `InvalidOptionError` naming `key`
 * for a value without `admit` and `onAnswer`.
 */
export function throttleOption(owner: string, key: string, value: unknown): AttemptThrottle | undefined {
  if (value !== undefined && !hasMethods(value, ['admit', 'onAnswer'])) {
    throw new InvalidOptionError(owner, key, value, 'must be an AttemptThrottle (admit, onAnswer), e.g. adaptiveThrottling()');
  }
  return value as AttemptThrottle | undefined;
}

/** The SRE book's client-side adaptive throttling, with its window's counts readable for charts and tests. */
export interface AdaptiveThrottling extends AttemptThrottle {
  readonly name: 'adaptive throttling';
  /** The multiplier K. */
  readonly k: number;
  /** The window length in ms. */
  readonly windowMs: number;
  /** The ring's bucket count. */
  readonly buckets: number;
  /** The cap on a first try's rejection probability: see {@link AdaptiveThrottlingOptions.maxRejectionProbability}. */
  readonly maxRejectionProbability: number;
  /** Requests (every attempt asked about, rejected ones included) in the window ending at `now` (moves the window). */
  requestsInWindow(now: number): number;
  /** Accepts in the window ending at `now` (moves the window). */
  acceptsInWindow(now: number): number;
  /** The probability with which a retry asked about at `now` would be rejected (moves the window). */
  rejectionProbability(now: number): number;
  /** The options, normalised, as data. */
  toJSON(): ThrottleSpec;
}

class Adaptive implements AdaptiveThrottling {
  readonly name = 'adaptive throttling' as const;
  // Counter A: requests; counter B: accepts.
  private readonly window: SlidingCounts;
  constructor(
    readonly k: number,
    readonly windowMs: number,
    readonly buckets: number,
    readonly maxRejectionProbability: number,
  ) {
    this.window = new SlidingCounts(windowMs / buckets, buckets);
  }
  admit(now: number, rng: Rng, isRetry: boolean): boolean {
    const w = this.window;
    w.advance(now);
    // The book's rule, over the requests and accepts before this one; the request then counts
    // whatever the answer — a locally rejected request is still one the application wanted to send.
    let p = (w.sumA - this.k * w.sumB) / (w.sumA + 1);
    if (!isRetry && p > this.maxRejectionProbability) p = this.maxRejectionProbability;
    w.add(1, 0);
    // No draw while nothing is refused: a healthy client's rng sequence is left as it was.
    return p <= 0 || rng.random() >= p;
  }
  onAnswer(now: number, accepted: boolean): void {
    if (!accepted) return;
    this.window.advance(now);
    this.window.add(0, 1);
  }
  requestsInWindow(now: number): number {
    this.window.advance(now);
    return this.window.sumA;
  }
  acceptsInWindow(now: number): number {
    this.window.advance(now);
    return this.window.sumB;
  }
  rejectionProbability(now: number): number {
    const w = this.window;
    w.advance(now);
    return Math.max(0, (w.sumA - this.k * w.sumB) / (w.sumA + 1));
  }
  toJSON(): ThrottleSpec {
    return { kind: 'adaptive throttling', k: this.k, windowMs: this.windowMs, buckets: this.buckets, maxRejectionProbability: this.maxRejectionProbability };
  }
}

const OPTION_KEYS = ['k', 'windowMs', 'buckets', 'maxRejectionProbability'] as const;

/**
 * Client-side adaptive throttling (Google SRE book, "Handling Overload"): over a sliding window
 * (two minutes by default) the client counts `requests` (every attempt it wanted to send) and
 * `accepts` (attempts the backend served), and rejects a new attempt locally with probability
 *
 *     max(0, (requests − K × accepts) / (requests + 1))
 *
 * — first tries included (at most `maxRejectionProbability`, 0.5 by default, so that the client
 * keeps probing a backend that refuses everything and full traffic returns within a window). While the backend accepts more than 1/K of the
 * requests nothing is refused; past that, what reaches the backend settles at about K × its
 * accepts, and the client resumes by itself as accepts come back. Envoy's admission control and
 * failsafe-go's adaptive throttler implement the same rule.
 *
 * Pass it to `retry()`, `createRetry()`, the retrying `fetch` and the adapters as `throttle` (one
 * object per client, shared by every call), or drive it yourself with {@link AttemptThrottle}'s
 * two methods. Its memory is a fixed ring of `buckets` buckets, whatever the traffic.
 *
 * @throws InvalidOptionError naming the field: `k` < 1 or not finite, `windowMs` ≤ 0 or not
 *   finite, `buckets` not an integer in [1, 10 000], `maxRejectionProbability` outside [0, 1], an unknown field.
 * @example
 * ```ts
 * const throttle = adaptiveThrottling({ k: 2 });
 * const withRetry = createRetry({ throttle, budget: retryRatioBudget() });
 * await withRetry(({ signal }) => fetch(url, { signal }).then(ok)); // may reject with reason 'throttled'
 * ```
 */
export function adaptiveThrottling(options?: AdaptiveThrottlingOptions): AdaptiveThrottling {
  const owner = 'adaptiveThrottling';
  const o = objectOption(owner, 'options', options, OPTION_KEYS);
  const k = numberOption(owner, 'k', o.k, 2, { min: 1 });
  const windowMs = numberOption(owner, 'windowMs', o.windowMs, 120_000, { min: 0, minExclusive: true });
  const buckets = numberOption(owner, 'buckets', o.buckets, 120, { min: 1, max: 10_000, integer: true });
  const cap = numberOption(owner, 'maxRejectionProbability', o.maxRejectionProbability, 0.5, { min: 0, max: 1 });
  return new Adaptive(k, windowMs, buckets, cap);
}

/**
 * Builds a new throttle from data (a lab config file, the lab page's form, the `toJSON()` of
 * another throttle): `{ kind: 'adaptive throttling', ...options }`, omitted fields taking
 * {@link adaptiveThrottling}'s defaults. Unknown kinds and fields are rejected.
 *
 * @param spec the parsed JSON value.
 * @param path where the spec sits, for error messages (e.g. `policy.throttle`).
 * @throws InvalidOptionError naming the field (prefixed with `path`) and the value.
 * @example
 * ```ts
 * const throttle = throttleFromSpec({ kind: 'adaptive throttling', k: 2, windowMs: 120_000 });
 * ```
 */
export function throttleFromSpec(spec: unknown, path = 'throttle'): AdaptiveThrottling {
  return fromSpec('throttleFromSpec', spec, path, { 'adaptive throttling': OPTION_KEYS }, (_kind, options) => adaptiveThrottling(options));
}
