import { numberOption, objectOption } from '../core/validate.js';

/**
 * Options of the adaptive in-flight limit (`adaptiveLimit` of `loadShedder`). The limit follows
 * Netflix's concurrency-limits `GradientLimit`: see {@link GradientLimit}.
 * @example
 * ```ts
 * const options: AdaptiveLimitOptions = { minLimit: 2, initialLimit: 10, tolerance: 1, queueSize: 1 };
 * ```
 */
export interface AdaptiveLimitOptions {
  /** The limit never goes below this. Integer ≥ 1. Default 1. */
  minLimit?: number | undefined;
  /** The limit to start from (at most `maxInFlight`, which is the ceiling). Default 10. */
  initialLimit?: number | undefined;
  /**
   * How much slower than the fastest seen a window's mean latency may be before the limit
   * shrinks: the gradient is `min(1, tolerance × minLatency / latency)`. Default 1 (shrink as soon
   * as requests queue); Netflix uses 1.5–2, which trades latency for throughput. Range [1, 10].
   */
  tolerance?: number | undefined;
  /**
   * Requests allowed to queue on top of the estimate — how fast the limit grows while latency
   * does not rise (per window, before smoothing). Default 1. Range [0, 1000].
   */
  queueSize?: number | undefined;
  /** Answered requests per measuring window. Integer in [1, 10 000]. Default 20. */
  windowSize?: number | undefined;
  /** How much of each new estimate is taken (exponential smoothing). Range (0, 1]. Default 0.2. */
  smoothing?: number | undefined;
}

/**
 * An in-flight limit that follows measured latency — Netflix concurrency-limits' gradient
 * algorithm (`GradientLimit`; also the idea of Envoy's adaptive concurrency filter). Every
 * `windowSize` answered requests it compares the window's mean latency with the fastest answer
 * seen (the latency without queueing) and sets
 *
 *     gradient = clamp(tolerance × minLatency / latency, 0.5, 1)
 *     limit ← (1 − smoothing) × limit + smoothing × (limit × gradient + queueSize)
 *
 * within [`minLimit`, `maxInFlight`]. While requests do not queue the gradient is 1 and the limit
 * grows by `queueSize` per window; once they queue, latency rises with the excess and the limit
 * falls back toward what the server can serve at once. With `W` requests served at once and a
 * mean unqueued latency `S`, it settles where `limit × (1 − gradient) = queueSize`:
 * `limit ≈ W × minLatency / S + queueSize` — `W + queueSize` on a steady server, a little lower
 * where latency varies.
 *
 * It grows only in a window whose requests reached the limit (the rule of TCP's congestion
 * window validation, RFC 7661): when the traffic, not the server, is the bound — a lull, or the
 * gap after a burst — latency stays low whatever the limit, and growing then would leave a limit
 * that the next burst queues behind. (concurrency-limits grows while half the limit is in use;
 * with the arrivals of a busy client machine, 0.9× the server's capacity in bursts, that drifted
 * to 11, 22 % above the best fixed limit of 9; this rule holds 9.)
 *
 * Why the fastest answer and not concurrency-limits' later `Gradient2Limit`, whose baseline is a
 * long-term average of latency: under sustained overload that average absorbs the queueing it
 * should measure, the gradient returns to 1, and every window adds `queueSize` again — the limit
 * drifts up for as long as the overload lasts (reported on that project too). In the virtual-time
 * sweep of `test/server-adaptive-limit.test.ts` (8 workers of 100 ms, 2× overload), an average
 * baseline settled at 15–24 where the best fixed limit was 8; this one settles at 7–9.
 *
 * Pure: the caller passes each request's latency. The fastest answer is kept for the object's
 * life, so the requests it measures should be alike: answers that are fast because they fail
 * early (a 404 from a cache, a validation error) pull the baseline down and the limit with it —
 * put the adaptive limit on the routes that do the work, or give those routes their own shedder.
 * A server whose no-load latency grows for good (a slower dependency) likewise ends with a limit
 * below its best until it is made anew.
 *
 * Source: Netflix, concurrency-limits, `GradientLimit` (github.com/Netflix/concurrency-limits);
 * RFC 7661 for the growth rule.
 * @example
 * ```ts
 * const limit = new GradientLimit({ initialLimit: 10 }, 64);
 * limit.onSample(42, 7); // a request answered after 42 ms, with 7 in flight
 * limit.limit; // the whole number of requests to admit at once
 * ```
 */
export class GradientLimit {
  /** The estimate (a real number); {@link limit} is its whole part. */
  estimate: number;
  /** The fastest answer seen, ms: the latency without queueing. */
  minLatencyMs = Infinity;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly tolerance: number;
  readonly queueSize: number;
  readonly windowSize: number;
  readonly smoothing: number;
  #sum = 0;
  #count = 0;
  #peakInFlight = 0;

  /**
   * @param options see {@link AdaptiveLimitOptions}.
   * @param maxLimit the ceiling (`maxInFlight`).
   * @throws InvalidOptionError naming the field and the value.
   */
  constructor(options: AdaptiveLimitOptions | undefined, maxLimit: number) {
    const owner = 'loadShedder';
    // A misspelt key is one of adaptiveLimit's options, not of the shedder's: the refusal says whose.
    const o = objectOption('adaptiveLimit', 'adaptiveLimit', options, ['minLimit', 'initialLimit', 'tolerance', 'queueSize', 'windowSize', 'smoothing']);
    this.maxLimit = maxLimit;
    this.minLimit = Math.min(maxLimit, numberOption(owner, 'adaptiveLimit.minLimit', o.minLimit, 1, { integer: true, min: 1 }));
    this.estimate = Math.max(this.minLimit, Math.min(maxLimit, numberOption(owner, 'adaptiveLimit.initialLimit', o.initialLimit, 10, { min: 1 })));
    this.tolerance = numberOption(owner, 'adaptiveLimit.tolerance', o.tolerance, 1, { min: 1, max: 10 });
    this.queueSize = numberOption(owner, 'adaptiveLimit.queueSize', o.queueSize, 1, { min: 0, max: 1000 });
    this.windowSize = numberOption(owner, 'adaptiveLimit.windowSize', o.windowSize, 20, { integer: true, min: 1, max: 10_000 });
    this.smoothing = numberOption(owner, 'adaptiveLimit.smoothing', o.smoothing, 0.2, { min: 0, minExclusive: true, max: 1 });
  }

  /** The requests to admit at once now: the estimate's whole part. */
  get limit(): number {
    return Math.floor(this.estimate);
  }

  /** One answered request: its latency in ms, and the requests in flight when it was admitted. */
  onSample(latencyMs: number, inFlight: number): void {
    if (!(latencyMs >= 0) || latencyMs === Infinity) return;
    // The baseline is the fastest single answer: under overload from the start, every window's
    // mean already includes queueing, and a baseline of means would never see the server unqueued.
    // Stryker disable next-line EqualityOperator: an equal latency sets the same minimum
    if (latencyMs < this.minLatencyMs) this.minLatencyMs = latencyMs;
    this.#sum += latencyMs;
    this.#count++;
    if (inFlight > this.#peakInFlight) this.#peakInFlight = inFlight;
    if (this.#count < this.windowSize) return;
    const mean = this.#sum / this.#count;
    const used = this.#peakInFlight;
    this.#sum = 0;
    this.#count = 0;
    this.#peakInFlight = 0;
    const gradient = Math.max(0.5, Math.min(1, (this.tolerance * this.minLatencyMs) / Math.max(mean, Number.MIN_VALUE)));
    // App-limited (RFC 7661): a window that never filled the limit says nothing about a larger one.
    const queue = used < Math.floor(this.estimate) ? 0 : this.queueSize;
    const next = this.estimate * gradient + queue;
    const smoothed = (1 - this.smoothing) * this.estimate + this.smoothing * next;
    this.estimate = Math.max(this.minLimit, Math.min(this.maxLimit, smoothed));
  }
}
