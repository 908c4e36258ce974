import { InvalidOptionError } from '../core/errors.js';
import { telemetryOption, type TelemetryObserver } from '../runtime/telemetry.js';
import { numberOption, objectOption } from '../core/validate.js';
import { ATTEMPT_HEADER, headerNameOption } from '../core/wire.js';
import type { Rng } from '../core/rng.js';
import { systemScheduler, type Scheduler } from '../runtime/scheduler.js';
import { systemRandom } from '../runtime/system-random.js';

/** The node:http request as `clientKey` sees it (headers, and the socket's peer address). */
export interface NodeRequestLike {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly socket?: { readonly remoteAddress?: string | undefined } | null | undefined;
}

/**
 * Options of {@link loadShedder}. All times in milliseconds.
 * @example
 * ```ts
 * const options: LoadShedderOptions = { maxInFlight: 64, maxQueue: 64, maxQueueWaitMs: 250, retryAfterMs: 2_000 };
 * ```
 */
export interface LoadShedderOptions {
  /** Requests handled at once (admitted, not yet answered). Required: an integer ≥ 1. */
  maxInFlight: number;
  /**
   * Requests that may wait for a slot when `maxInFlight` are being handled, first come first
   * served; one more is shed at once. Integer ≥ 0. Default 0: no queue, shed as soon as the
   * limit is reached.
   */
  maxQueue?: number | undefined;
  /** The longest a request waits in the queue before it is shed, in ms (> 0, finite). Default 1000. */
  maxQueueWaitMs?: number | undefined;
  /**
   * The wait a shed answer asks for, in ms (≥ 0, finite): `retry-after-ms` exactly, and
   * `Retry-After` in whole seconds (RFC 9110 §10.2.3), rounded up (but see `retryAfterJitter`).
   * Default 1000.
   */
  retryAfterMs?: number | undefined;
  /**
   * Spread the waits: each shed answer asks for a wait drawn uniformly from
   * [`retryAfterMs`, 2 × `retryAfterMs`), never less than `retryAfterMs`. Without it, every client
   * shed in the same burst is told the same wait and comes back at the same moment — the herd
   * again (AWS, "Exponential Backoff And Jitter"). The whole-second `Retry-After` keeps the spread:
   * the draw is rounded down or up at random (up with the probability of its fraction, so the mean
   * wait stays that of the draw), never below `retryAfterMs` rounded up — with the default 1000 ms,
   * clients that read only `Retry-After` are told 1 or 2 seconds, half each. Default true.
   */
  retryAfterJitter?: boolean | undefined;
  /** The randomness of `retryAfterJitter`. Default `systemRandom` (`Math.random`); a seeded `PyRandom` in tests. */
  random?: Rng | undefined;
  /**
   * The share of retries among recent requests (in [0, 1]) above which every shed answer says
   * "overloaded; don't retry" (`X-Herdless-Retry: no`), not only the shed retries: many retries mean
   * the backend's other callers are failing too, and retrying would only add load (SRE book,
   * "Handling Overload", which uses 10 %). Default 0.1; 1 turns this off.
   */
  maxRetryRatio?: number | undefined;
  /** How many of the latest requests the retry share is measured over. Integer in [1, 100 000]. Default 100. */
  retryRatioWindow?: number | undefined;
  /**
   * The request header carrying the attempt number (a request without it is a first attempt). A
   * header name, any case. Default `x-herdless-attempt` (what `withRetry()` sends).
   *
   * The header is the client's word, not a fact the server checked: a client can forge it. A
   * forger never changes admission (the limit, the queue and the wait do not read it). It can make
   * its own shed answers say "don't retry" (harming only itself), and, by raising the retry share,
   * make the shed answers of other clients say it too — unless `clientKey` tells the sources apart.
   */
  attemptHeader?: string | undefined;
  /**
   * Who sent a request, for the retry share: a caller's identity the server trusts (an mTLS
   * subject, an API key's owner, a service name set by your gateway), or the peer address when
   * callers connect directly. Called once per request with the node:http request (`node()`,
   * `middleware`) or the fetch `Request` (`fetch()`); `undefined` means unknown.
   *
   * With it, the retries of one source count toward the share that marks every shed answer "don't
   * retry" only up to `maxRetryRatio` × the window's requests: one source claiming that all its
   * requests are retries (a forged or broken attempt header) can bring the share up to
   * `maxRetryRatio`, never over it, so it cannot alone turn other clients' answers into "don't
   * retry"; honest overload, where many sources retry, is counted as before. Do not key by peer
   * address behind a proxy: every request would be one source, and the share could never pass
   * the threshold. A `clientKey` that throws makes the source unknown; the error goes to
   * `onHandlerError`. Default: none (every retry counts, whoever sent it).
   */
  clientKey?: ((request: NodeRequestLike | Request) => string | undefined) | undefined;
  /**
   * After a client leaves, the longest its slot stays held while the work it started has not
   * ended, in ms (> 0). The slot counts the work, not the connection: it is held until the handler
   * ends the response (or `node()`'s handler settles), because a client that hangs up does not
   * stop the work it asked for, and freeing the slot then would let clients that time out and
   * retry multiply the server's work. The handler's `signal` aborts when its client leaves, so a
   * handler that listens stops early; this bound only catches a handler that stops without ending
   * its response (the middleware cannot see an express route return). Default 30 000.
   */
  maxHoldAfterCloseMs?: number | undefined;
  /**
   * When the handler's own downstream call through herdless gave up (it throws a `RetryError`, an
   * error `isGivenUp()` recognises, or returns a given-up `Response`), the answer to this server's
   * caller takes the downstream status (503 by default) and, when `propagate` is true, carries
   * `X-Herdless-Retry: no`, so that the layers above do not retry what was already retried below.
   * Set it to `false` on the edge server, whose callers (users, browsers) are the one layer that
   * should retry. Default true.
   */
  propagate?: boolean | undefined;
  /** The timers of the queue. Default `systemScheduler` (`setTimeout`); a `ManualClock` in tests. */
  clock?: Scheduler | undefined;
  /**
   * Receives a failure of the wrapped handler that is not a downstream give-up (it is answered
   * 500, or the connection is destroyed if the head was already sent). Default: `console.error`.
   */
  onHandlerError?: ((error: unknown) => void) | undefined;
  /**
   * Receives a `'shed'` event for every shed request (the reason, whether it was a retry, whether
   * the answer said "don't retry"); see `TelemetryObserver`. `herdless/otel` counts them as
   * `herdless.server.shed`. An observer: its failures are reported as a process warning. Default: none.
   */
  telemetry?: TelemetryObserver | undefined;
}

/** @internal The options, checked and normalised. */
export interface LoadShedderConfig {
  readonly maxInFlight: number;
  readonly maxQueue: number;
  readonly maxQueueWaitMs: number;
  readonly retryAfterMs: number;
  readonly retryAfterJitter: boolean;
  readonly random: Rng;
  readonly maxRetryRatio: number;
  readonly retryRatioWindow: number;
  readonly attemptHeader: string;
  readonly clientKey: ((request: NodeRequestLike | Request) => string | undefined) | undefined;
  readonly maxHoldAfterCloseMs: number;
  readonly propagate: boolean;
  readonly clock: Scheduler;
  readonly onHandlerError: (error: unknown) => void;
  readonly telemetry: TelemetryObserver | undefined;
}

const OWNER = 'loadShedder';
const KEYS: readonly string[] = [
  'maxInFlight',
  'maxQueue',
  'maxQueueWaitMs',
  'retryAfterMs',
  'retryAfterJitter',
  'random',
  'maxRetryRatio',
  'retryRatioWindow',
  'attemptHeader',
  'clientKey',
  'maxHoldAfterCloseMs',
  'propagate',
  'clock',
  'onHandlerError',
  'telemetry',
];
/** Timers beyond 2^31 − 1 ms fire at once in Node.js and browsers. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const reportHandlerError = (error: unknown): void => {
  console.error('herdless/server: the handler failed', error);
};

/** @internal Checks `options`; the error names the field and the value. */
export function parseLoadShedderOptions(options: LoadShedderOptions | undefined): LoadShedderConfig {
  if (options === undefined) throw new InvalidOptionError(OWNER, 'options', options, 'must be an object with maxInFlight');
  const o = objectOption(OWNER, 'options', options, KEYS);
  if (o.maxInFlight === undefined) throw new InvalidOptionError(OWNER, 'maxInFlight', undefined, 'is required (an integer ≥ 1)');
  const clock = o.clock ?? systemScheduler;
  if (typeof clock !== 'object' || clock === null || typeof clock.setTimeout !== 'function' || typeof clock.clearTimeout !== 'function' || typeof clock.now !== 'function') {
    throw new InvalidOptionError(OWNER, 'clock', clock, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
  }
  if (o.retryAfterJitter !== undefined && typeof o.retryAfterJitter !== 'boolean') {
    throw new InvalidOptionError(OWNER, 'retryAfterJitter', o.retryAfterJitter, 'must be a boolean');
  }
  const random = o.random ?? systemRandom;
  if (typeof random !== 'object' || random === null || typeof random.random !== 'function') {
    throw new InvalidOptionError(OWNER, 'random', random, 'must be an Rng ({ random(): number })');
  }
  if (o.propagate !== undefined && typeof o.propagate !== 'boolean') throw new InvalidOptionError(OWNER, 'propagate', o.propagate, 'must be a boolean');
  if (o.onHandlerError !== undefined && typeof o.onHandlerError !== 'function') {
    throw new InvalidOptionError(OWNER, 'onHandlerError', o.onHandlerError, 'must be a function');
  }
  if (o.clientKey !== undefined && typeof o.clientKey !== 'function') {
    throw new InvalidOptionError(OWNER, 'clientKey', o.clientKey, 'must be a function (request) => string | undefined');
  }
  if (o.attemptHeader !== undefined && typeof o.attemptHeader !== 'string') {
    throw new InvalidOptionError(OWNER, 'attemptHeader', o.attemptHeader, 'must be an HTTP header name (a token such as "x-attempt")');
  }
  const attemptHeader = headerNameOption(OWNER, 'attemptHeader', o.attemptHeader, ATTEMPT_HEADER)!;
  return Object.freeze({
    telemetry: telemetryOption(OWNER, o.telemetry),
    maxInFlight: numberOption(OWNER, 'maxInFlight', o.maxInFlight, 1, { integer: true, min: 1, max: 1_000_000 }),
    maxQueue: numberOption(OWNER, 'maxQueue', o.maxQueue, 0, { integer: true, min: 0, max: 1_000_000 }),
    maxQueueWaitMs: numberOption(OWNER, 'maxQueueWaitMs', o.maxQueueWaitMs, 1000, { min: 0, minExclusive: true, max: MAX_TIMER_MS }),
    retryAfterMs: numberOption(OWNER, 'retryAfterMs', o.retryAfterMs, 1000, { min: 0, max: MAX_TIMER_MS / 2 }),
    retryAfterJitter: o.retryAfterJitter ?? true,
    random,
    maxRetryRatio: numberOption(OWNER, 'maxRetryRatio', o.maxRetryRatio, 0.1, { min: 0, max: 1 }),
    retryRatioWindow: numberOption(OWNER, 'retryRatioWindow', o.retryRatioWindow, 100, { integer: true, min: 1, max: 100_000 }),
    attemptHeader,
    clientKey: o.clientKey,
    maxHoldAfterCloseMs: numberOption(OWNER, 'maxHoldAfterCloseMs', o.maxHoldAfterCloseMs, 30_000, { min: 0, minExclusive: true, max: MAX_TIMER_MS }),
    propagate: o.propagate ?? true,
    clock,
    onHandlerError: o.onHandlerError ?? reportHandlerError,
  });
}
