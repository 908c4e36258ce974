import { numberOption, objectOption } from '../core/validate.js';

/**
 * `node:perf_hooks`, looked up when a monitor is made rather than imported: the load shedder is
 * also bundled for browsers (the lab page's simulator uses it), where no such module exists.
 * `process.getBuiltinModule` is in Node.js ≥ 20.16, Deno and Bun.
 */
function perfHooks(): typeof import('node:perf_hooks') {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const hooks = proc?.getBuiltinModule?.('node:perf_hooks') as typeof import('node:perf_hooks') | undefined;
  if (hooks === undefined) throw new Error('eventLoopDelayMonitor: needs node:perf_hooks (Node.js ≥ 20.16, Deno, Bun); pass your own eventLoopDelay elsewhere');
  return hooks;
}

/**
 * A reading of how late the event loop runs, in ms — what a Node.js server saturates on first: a
 * handler that computes (parses, renders, hashes) holds the loop, and every other request, timer
 * and socket waits behind it. `herdless/server` sheds new requests while it is above
 * `maxEventLoopDelayMs`. {@link eventLoopDelayMonitor} is the Node.js one; pass your own (a
 * fixed value in a test) as the `eventLoopDelay` option.
 * @example
 * ```ts
 * const probe: EventLoopDelay = { delayMs: () => 0, utilization: () => 0.5, close: () => {} };
 * ```
 */
export interface EventLoopDelay {
  /** The current delay, in ms (≥ 0). Called once per arriving request: it must be cheap. */
  delayMs(): number;
  /**
   * The share of the last sample interval the loop spent running callbacks, in [0, 1]
   * (`performance.eventLoopUtilization()`); read by `maxEventLoopUtilization`.
   */
  utilization(): number;
  /** Stops measuring (timers, histograms). */
  close(): void;
}

/** Options of {@link eventLoopDelayMonitor}. */
export interface EventLoopDelayMonitorOptions {
  /**
   * How often the histogram is read and reset, in ms. Default 100: a server under a burst starts
   * shedding within about one interval. Range [10, 60 000].
   */
  sampleIntervalMs?: number | undefined;
  /** The histogram's timer resolution, in ms (`monitorEventLoopDelay`'s `resolution`). Default 10. Range [1, 1000]. */
  resolutionMs?: number | undefined;
}

/**
 * The event loop's delay as Node.js measures it (`perf_hooks.monitorEventLoopDelay`, the signal
 * `@fastify/under-pressure` sheds on). Two readings, the larger wins:
 *
 * - the largest delay the histogram saw over the last sample interval (`sampleIntervalMs`,
 *   default 100 ms), minus its timer resolution (a loop that is never late reads ≈ 0);
 * - how overdue the sampler itself is now: when a handler holds the loop, the sampler cannot run,
 *   and a request that arrives right after the block sees the block's length at once, without
 *   waiting for the next sample.
 *
 * Its timer is unref'd: it never keeps a process alive. Call `close()` when the server stops.
 *
 * @throws InvalidOptionError naming the field: `sampleIntervalMs` outside [10, 60 000], `resolutionMs` outside [1, 1000];
 *   an Error on a runtime without `node:perf_hooks` (a browser).
 * @example
 * ```ts
 * const delay = eventLoopDelayMonitor({ sampleIntervalMs: 100 });
 * const shed = loadShedder({ maxInFlight: 64, maxEventLoopDelayMs: 100, eventLoopDelay: delay });
 * ```
 */
export function eventLoopDelayMonitor(options?: EventLoopDelayMonitorOptions): EventLoopDelay {
  const owner = 'eventLoopDelayMonitor';
  const o = objectOption(owner, 'options', options, ['sampleIntervalMs', 'resolutionMs']);
  const interval = numberOption(owner, 'sampleIntervalMs', o.sampleIntervalMs, 100, { min: 10, max: 60_000 });
  const resolution = numberOption(owner, 'resolutionMs', o.resolutionMs, 10, { min: 1, max: 1000, integer: true });
  const { monitorEventLoopDelay, performance } = perfHooks();
  const histogram = monitorEventLoopDelay({ resolution });
  histogram.enable();
  let previous = 0;
  let sampled = 0;
  let sampledAt = performance.now();
  let elu = performance.eventLoopUtilization();
  let utilization = 0;
  const timer = setInterval(() => {
    // The histogram's values are in ns; its timer fires every `resolution` ms, so that much of
    // each reading is the timer's own period, not lateness. The last two intervals count: the
    // histogram's timer and this one fire in the same phase, in either order, so the block just
    // ended may land in the interval after the one being read.
    const current = histogram.count === 0 ? 0 : Math.max(0, histogram.max / 1e6 - resolution);
    sampled = Math.max(previous, current);
    previous = current;
    histogram.reset();
    const now = performance.eventLoopUtilization();
    utilization = performance.eventLoopUtilization(now, elu).utilization;
    elu = now;
    sampledAt = performance.now();
  }, interval);
  timer.unref();
  return {
    delayMs: () => Math.max(sampled, performance.now() - sampledAt - interval),
    utilization: () => utilization,
    close: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
