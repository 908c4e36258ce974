import { parseLoadShedderOptions, type LoadShedderConfig, type LoadShedderOptions } from './options.js';
import { emitTelemetry } from '../runtime/telemetry.js';
import { eventLoopDelayMonitor, type EventLoopDelay } from './event-loop.js';
import { GradientLimit } from './gradient-limit.js';

/**
 * What a {@link LoadShedder} has counted since it was made: the gauges `inFlight` and `queued`,
 * and totals. A snapshot: read `stats()` again for fresh numbers.
 * @example
 * ```ts
 * const { inFlight, queued, shed, retriesSeen } = shedder.stats();
 * ```
 */
export interface LoadShedderStats {
  /** Requests being handled now (admitted, not yet answered); never above `maxInFlight`. */
  readonly inFlight: number;
  /** The in-flight limit now: `maxInFlight`, or the adaptive limit's current value. */
  readonly limit: number;
  /** Requests waiting in the queue now; never above `maxQueue`. */
  readonly queued: number;
  /** The most requests ever in flight at once. */
  readonly peakInFlight: number;
  /** Requests that arrived, shed or not. */
  readonly requests: number;
  /** Requests that arrived as retries (attempt header ≥ 2). */
  readonly retriesSeen: number;
  /** Requests admitted to the handler (at once or after queueing). */
  readonly admitted: number;
  /** Requests answered 503 without reaching the handler (`shedDoNotRetry` of them marked "don't retry"). */
  readonly shed: number;
  /** Shed answers that carried `X-Herdless-Retry: no`. */
  readonly shedDoNotRetry: number;
  /** Queued requests whose client went away before a slot was free (nothing could be answered). */
  readonly abandoned: number;
  /** Answers that passed on a downstream give-up (status from downstream, marked when `propagate`). */
  readonly givenUp: number;
}

/**
 * Why a request was shed: the in-flight limit with no queue or a full queue, a queue wait that ran
 * out, or the event loop running later than `maxEventLoopDelayMs`.
 */
export type ShedReason = 'queue-full' | 'queue-timeout' | 'event-loop-delay';

/**
 * The verdict on one request: admitted (call `release()` exactly once when its answer is done), or
 * shed, with whether the answer must say "don't retry".
 */
export type Admission =
  | { readonly kind: 'admitted'; readonly release: () => void }
  | { readonly kind: 'shed'; readonly reason: ShedReason; readonly doNotRetry: boolean };

interface Waiter {
  readonly resolve: (admission: Admission) => void;
  readonly attempt: number;
  timer: unknown;
  done: boolean;
}

/**
 * The load-shedding state one server shares among all its requests: a limit on requests in
 * flight, a bounded FIFO queue with a maximum wait, and the share of retries among recent
 * requests. Protocol-free: the node:http middleware and the fetch-style wrapper of
 * {@link loadShedder} drive it; use it directly for another server (a WebSocket upgrade, a job queue).
 *
 * @example
 * ```ts
 * const shedder = new LoadShedder({ maxInFlight: 16 });
 * const admission = await shedder.admit(attemptFromMetadata);
 * if (admission.kind === 'shed') return reject(admission.doNotRetry ? 'overloaded; don\'t retry' : 'overloaded');
 * try { await work(); } finally { admission.release(); }
 * ```
 */
export class LoadShedder {
  /** The options, checked and normalised. */
  readonly config: LoadShedderConfig;
  #inFlight = 0;
  #peak = 0;
  readonly #queue: Waiter[] = [];
  #queueHead = 0;
  #requests = 0;
  #retries = 0;
  #admitted = 0;
  #shed = 0;
  #shedDoNotRetry = 0;
  #abandoned = 0;
  #givenUp = 0;
  /** The latest `retryRatioWindow` requests: 1 for a retry, 0 for a first attempt (a ring). */
  readonly #window: Uint8Array;
  #windowNext = 0;
  #windowFilled = 0;
  #windowRetries = 0;
  /** The source of each request in the window that was a retry and had one (see `clientKey`). */
  readonly #windowSources: (string | undefined)[];
  /** Retries in the window per source. */
  readonly #sourceRetries = new Map<string, number>();
  /** The event loop's delay, when `maxEventLoopDelayMs` is set. */
  readonly #loop: EventLoopDelay | undefined;
  /** The adaptive in-flight limit, with `adaptiveLimit`. */
  readonly #adaptive: GradientLimit | undefined;
  /** The loop monitor this shedder made itself (and closes). */
  readonly #ownLoop: EventLoopDelay | undefined;

  /**
   * @param options see {@link LoadShedderOptions}; `maxInFlight` is required.
   * @throws InvalidOptionError naming the field and the value.
   */
  constructor(options: LoadShedderOptions) {
    this.config = parseLoadShedderOptions(options);
    this.#window = new Uint8Array(this.config.retryRatioWindow);
    // Stryker disable next-line ArrayDeclaration: the size only preallocates; an array grows as its slots are written
    this.#windowSources = new Array<string | undefined>(this.config.retryRatioWindow);
    this.#adaptive = this.config.adaptiveLimit === undefined ? undefined : new GradientLimit(this.config.adaptiveLimit, this.config.maxInFlight);
    if (this.config.maxEventLoopDelayMs !== Infinity || this.config.maxEventLoopUtilization !== Infinity) {
      this.#ownLoop = this.config.eventLoopDelay === undefined ? eventLoopDelayMonitor() : undefined;
      this.#loop = this.config.eventLoopDelay ?? this.#ownLoop;
    }
  }

  /**
   * Stops what the shedder measures in the background (the event-loop monitor it made for
   * `maxEventLoopDelayMs`; one passed as `eventLoopDelay` is the caller's to close). Its timer is
   * unref'd, so forgetting this never keeps a process alive. Idempotent.
   * @example
   * ```ts
   * server.on('close', () => shedder.close());
   * ```
   */
  close(): void {
    this.#ownLoop?.close();
  }

  /**
   * The counters now.
   * @example
   * ```ts
   * metrics.gauge('in_flight', shedder.stats().inFlight);
   * ```
   */
  stats(): LoadShedderStats {
    return {
      inFlight: this.#inFlight,
      limit: this.#limit(),
      queued: this.#queue.length - this.#queueHead,
      peakInFlight: this.#peak,
      requests: this.#requests,
      retriesSeen: this.#retries,
      admitted: this.#admitted,
      shed: this.#shed,
      shedDoNotRetry: this.#shedDoNotRetry,
      abandoned: this.#abandoned,
      givenUp: this.#givenUp,
    };
  }

  /**
   * The share of retries among the latest `retryRatioWindow` requests, in [0, 1] (0 before any request).
   * @example
   * ```ts
   * if (shedder.retryRatio() > 0.1) log.warn('callers are retrying: their other backends fail too');
   * ```
   */
  retryRatio(): number {
    return this.#windowFilled === 0 ? 0 : this.#windowRetries / this.#windowFilled;
  }

  /**
   * Decides on one arriving request: admitted at once, shed at once, or (with a queue) a promise
   * that settles when a slot frees up or the wait runs out. Every call counts one request.
   *
   * @param attempt the request's attempt number (1 for a first attempt). It comes from the
   *   client (a header): see `clientKey` for what a client that lies about it can do.
   * @param gone when given, a function that registers a callback for the client going away; a
   *   queued request whose client is gone leaves the queue (counted as `abandoned`) and its promise
   *   never settles — there is nobody to answer.
   * @param source who sent the request (see `clientKey`); `undefined` when unknown. A source's
   *   retries move the share that marks other clients' shed answers only up to `maxRetryRatio`.
   * @example
   * ```ts
   * const admission = await shedder.admit(Number(headers.get('x-herdless-attempt') ?? 1));
   * ```
   */
  admit(attempt: number, gone?: (callback: () => void) => void, source?: string): Admission | Promise<Admission> {
    this.#requests++;
    const retry = attempt >= 2;
    if (retry) this.#retries++;
    this.#observe(retry, source);
    // The loop is late: whatever the in-flight count, a new request would only wait behind it.
    const loop = this.#loop;
    if (loop !== undefined && (loop.delayMs() > this.config.maxEventLoopDelayMs || loop.utilization() > this.config.maxEventLoopUtilization)) {
      return this.#shedOne('event-loop-delay', attempt);
    }
    // Stryker disable next-line ConditionalExpression: every release runs #next(), which fills free slots from the queue: a free slot never coexists with a waiter
    if (this.#inFlight < this.#limit() && this.#queueHead === this.#queue.length) return this.#enter();
    if (this.#queue.length - this.#queueHead >= this.config.maxQueue) return this.#shedOne('queue-full', attempt);
    return new Promise<Admission>((resolve) => {
      const waiter: Waiter = { resolve, attempt, timer: undefined, done: false };
      waiter.timer = this.config.clock.setTimeout(() => {
        // Stryker disable next-line ConditionalExpression: a waiter is done only when admitted or abandoned, and both clear this timer
        if (waiter.done) return;
        waiter.done = true;
        this.#drop(waiter);
        resolve(this.#shedOne('queue-timeout', attempt));
      }, this.config.maxQueueWaitMs);
      this.#queue.push(waiter);
      gone?.(() => {
        if (waiter.done) return;
        waiter.done = true;
        this.config.clock.clearTimeout(waiter.timer);
        this.#drop(waiter);
        this.#abandoned++;
      });
    });
  }

  /** Counts an answer that passed on a downstream give-up (the wrappers of {@link loadShedder} do it). */
  countGivenUp(): void {
    this.#givenUp++;
  }

  #observe(retry: boolean, source: string | undefined): void {
    const size = this.#window.length;
    const slot = this.#windowNext;
    if (this.#windowFilled === size) {
      this.#windowRetries -= this.#window[slot]!;
      const left = this.#windowSources[slot];
      // Stryker disable next-line ConditionalExpression: an undefined key would hold NaN, which caps nothing (NaN > cap is false)
      if (left !== undefined) {
        const n = this.#sourceRetries.get(left)! - 1;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: a source kept at 0 retries caps nothing; deleting it only keeps the map small
        if (n === 0) this.#sourceRetries.delete(left);
        else this.#sourceRetries.set(left, n);
      }
    } else this.#windowFilled++;
    this.#window[slot] = retry ? 1 : 0;
    const counted = retry ? source : undefined;
    this.#windowSources[slot] = counted;
    if (retry) this.#windowRetries++;
    if (counted !== undefined) this.#sourceRetries.set(counted, (this.#sourceRetries.get(counted) ?? 0) + 1);
    this.#windowNext = slot + 1 === size ? 0 : slot + 1;
  }

  /**
   * Whether retries pile up so that every shed answer says "don't retry": the share of retries
   * above `maxRetryRatio`, with each known source's retries counted up to `maxRetryRatio` × the
   * window's requests — one source that says every request is a retry (a forged or broken attempt
   * header) brings the share to the threshold at most, never over it: it cannot alone turn the
   * answers of the other clients into "don't retry".
   */
  #retriesPileUp(): boolean {
    const max = this.config.maxRetryRatio;
    // Capping only lowers the share: below the threshold uncapped, it is below capped too.
    if (this.retryRatio() <= max) return false;
    // Stryker disable next-line ConditionalExpression: with no source the loop below caps nothing and finds the same share, already above max
    if (this.#sourceRetries.size === 0) return true;
    const filled = this.#windowFilled;
    const cap = Math.floor(max * filled);
    let counted = this.#windowRetries;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: uncapped sources only add to a share already above max (the early return), so it stays above
    for (const n of this.#sourceRetries.values()) if (n > cap) counted -= n - cap;
    return counted / filled > max;
  }

  #limit(): number {
    return this.#adaptive === undefined ? this.config.maxInFlight : this.#adaptive.limit;
  }

  #enter(): Admission {
    this.#inFlight++;
    this.#admitted++;
    if (this.#inFlight > this.#peak) this.#peak = this.#inFlight;
    let released = false;
    const adaptive = this.#adaptive;
    const inFlight = this.#inFlight;
    const admittedAt = adaptive === undefined ? 0 : this.config.clock.now();
    return {
      kind: 'admitted',
      release: () => {
        if (released) return;
        released = true;
        if (adaptive !== undefined) adaptive.onSample(this.config.clock.now() - admittedAt, inFlight);
        this.#inFlight--;
        this.#next();
      },
    };
  }

  /** A slot is free: the oldest waiter still waiting takes it. */
  #next(): void {
    while (this.#queueHead < this.#queue.length && this.#inFlight < this.#limit()) {
      const waiter = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead] = undefined as never;
      this.#queueHead++;
      // Stryker disable next-line ConditionalExpression: a waiter that times out or is abandoned leaves the queue (#drop) at once: none in it is done
      if (waiter.done) continue;
      // Stryker disable next-line BooleanLiteral: the waiter has left the queue and its timer is cleared: nothing reads its flag again
      waiter.done = true;
      this.config.clock.clearTimeout(waiter.timer);
      waiter.resolve(this.#enter());
    }
    this.#compact();
  }

  /** Takes a waiter out of the queue wherever it is (a timeout or an abandon). */
  #drop(waiter: Waiter): void {
    const i = this.#queue.indexOf(waiter, this.#queueHead);
    // Stryker disable next-line ConditionalExpression: only a waiter still in the queue is dropped (its done flag guards the callers)
    if (i >= 0) this.#queue.splice(i, 1);
    this.#compact();
  }

  // Stryker disable all: compacting only bounds the memory of the queue array; the order, the counts and the admissions are the same whenever it runs
  #compact(): void {
    // The head index avoids an O(n) shift per admission; the array is trimmed once it is mostly dead.
    if (this.#queueHead > 0 && this.#queueHead * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#queueHead);
      this.#queueHead = 0;
    }
  }
  // Stryker restore all

  #shedOne(reason: ShedReason, attempt: number): Admission {
    this.#shed++;
    // SRE book, "Handling Overload": a rejected retry, or a rejection while retries pile up,
    // says "overloaded; don't retry" so that the callers above do not multiply the load.
    const doNotRetry = attempt >= 2 || this.#retriesPileUp();
    if (doNotRetry) this.#shedDoNotRetry++;
    const telemetry = this.config.telemetry;
    if (telemetry !== undefined) emitTelemetry(telemetry, { type: 'shed', layer: 'server', reason, retry: attempt >= 2, doNotRetry }, undefined);
    return { kind: 'shed', reason, doNotRetry };
  }
}
