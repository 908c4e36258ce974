/**
 * loadShedder's options by the letter: each refusal names its field, the value and what was
 * expected; each default is what the documentation says. (server.test.ts covers the fields at
 * large; this file the exact words and bounds.)
 */
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from 'herdless';
import { LoadShedder } from 'herdless/server';
import { invalidOption } from './support/invalid-option.js';

const CLOCK = 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock';
const RNG = 'must be an Rng ({ random(): number })';
const LOOP = 'must be an EventLoopDelay ({ delayMs(), utilization(), close() }), e.g. eventLoopDelayMonitor()';
const ADAPTIVE = 'must be true, false or an object of AdaptiveLimitOptions';
const f = () => {};

describe('loadShedder options: the refusals, word for word', () => {
  it.each([
    [undefined, 'options', 'must be an object with maxInFlight'],
    [{}, 'maxInFlight', 'is required (an integer ≥ 1)'],
    [{ maxInFlight: 1, clock: 5 }, 'clock', CLOCK],
    [{ maxInFlight: 1, clock: { setTimeout: f, clearTimeout: f } }, 'clock', CLOCK],
    [{ maxInFlight: 1, clock: { now: f, clearTimeout: f } }, 'clock', CLOCK],
    [{ maxInFlight: 1, clock: { now: f, setTimeout: f } }, 'clock', CLOCK],
    [{ maxInFlight: 1, retryAfterJitter: 'yes' }, 'retryAfterJitter', 'must be a boolean'],
    [{ maxInFlight: 1, random: 5 }, 'random', RNG],
    [{ maxInFlight: 1, random: {} }, 'random', RNG],
    [{ maxInFlight: 1, propagate: 1 }, 'propagate', 'must be a boolean'],
    [{ maxInFlight: 1, onHandlerError: 'log' }, 'onHandlerError', 'must be a function'],
    [{ maxInFlight: 1, clientKey: 'ip' }, 'clientKey', 'must be a function (request) => string | undefined'],
    [{ maxInFlight: 1, attemptHeader: 5 }, 'attemptHeader', 'must be an HTTP header name (a token such as "x-attempt")'],
    [{ maxInFlight: 1, eventLoopDelay: 5 }, 'eventLoopDelay', LOOP],
    [{ maxInFlight: 1, eventLoopDelay: null }, 'eventLoopDelay', LOOP],
    [{ maxInFlight: 1, eventLoopDelay: { utilization: f, close: f } }, 'eventLoopDelay', LOOP],
    [{ maxInFlight: 1, eventLoopDelay: { delayMs: f, close: f } }, 'eventLoopDelay', LOOP],
    [{ maxInFlight: 1, eventLoopDelay: { delayMs: f, utilization: f } }, 'eventLoopDelay', LOOP],
    [{ maxInFlight: 1, adaptiveLimit: 5 }, 'adaptiveLimit', ADAPTIVE],
    [{ maxInFlight: 1, adaptiveLimit: null }, 'adaptiveLimit', ADAPTIVE],
    [{ maxInFlight: 1, adaptiveLimit: [] }, 'adaptiveLimit', ADAPTIVE],
  ])('%j → %s', (options, field, requirement) => {
    const error = invalidOption(() => new LoadShedder(options as never));
    expect([error.field, error.requirement]).toEqual([field, requirement]);
    expect(error.message.startsWith('loadShedder: ')).toBe(true);
  });

  it('options that are not an object name options', () => {
    expect(invalidOption(() => new LoadShedder(5 as never)).field).toBe('options');
  });

  it.each([
    [{ maxInFlight: 1_000_001 }, 'maxInFlight'],
    [{ maxInFlight: 1, maxQueue: 1.5 }, 'maxQueue'],
    [{ maxInFlight: 1, maxQueue: 1_000_001 }, 'maxQueue'],
    [{ maxInFlight: 1, maxQueueWaitMs: 2 ** 31 }, 'maxQueueWaitMs'],
    [{ maxInFlight: 1, retryAfterMs: 2 ** 30 }, 'retryAfterMs'],
    [{ maxInFlight: 1, maxRetryRatio: -0.1 }, 'maxRetryRatio'],
    [{ maxInFlight: 1, retryRatioWindow: 1.5 }, 'retryRatioWindow'],
    [{ maxInFlight: 1, retryRatioWindow: 100_001 }, 'retryRatioWindow'],
    [{ maxInFlight: 1, maxEventLoopDelayMs: 0 }, 'maxEventLoopDelayMs'],
    [{ maxInFlight: 1, maxEventLoopDelayMs: -1 }, 'maxEventLoopDelayMs'],
    [{ maxInFlight: 1, maxEventLoopUtilization: 0 }, 'maxEventLoopUtilization'],
    [{ maxInFlight: 1, maxEventLoopUtilization: 1.01 }, 'maxEventLoopUtilization'],
  ])('%j is out of range: %s', (options, field) => {
    expect(invalidOption(() => new LoadShedder(options as never)).field).toBe(field);
  });

  it('the edges of the ranges are accepted', () => {
    const probe = { delayMs: () => 0, utilization: () => 0, close: f };
    const c = new LoadShedder({
      maxInFlight: 1_000_000,
      maxQueue: 1_000_000,
      maxQueueWaitMs: 2 ** 31 - 1,
      retryAfterMs: (2 ** 31 - 1) / 2,
      retryRatioWindow: 100_000,
      maxEventLoopDelayMs: Infinity,
      maxEventLoopUtilization: 1,
      eventLoopDelay: probe,
    }).config;
    expect([c.maxInFlight, c.maxQueue, c.maxQueueWaitMs, c.retryAfterMs, c.retryRatioWindow, c.maxEventLoopDelayMs, c.maxEventLoopUtilization]).toEqual([
      1_000_000, 1_000_000, 2 ** 31 - 1, (2 ** 31 - 1) / 2, 100_000, Infinity, 1,
    ]);
  });
});

describe('loadShedder options: the defaults', () => {
  it('as documented', () => {
    const c = new LoadShedder({ maxInFlight: 3 }).config;
    expect({
      maxQueue: c.maxQueue,
      maxQueueWaitMs: c.maxQueueWaitMs,
      retryAfterMs: c.retryAfterMs,
      retryAfterJitter: c.retryAfterJitter,
      maxRetryRatio: c.maxRetryRatio,
      retryRatioWindow: c.retryRatioWindow,
      attemptHeader: c.attemptHeader,
      maxHoldAfterCloseMs: c.maxHoldAfterCloseMs,
      propagate: c.propagate,
      maxEventLoopDelayMs: c.maxEventLoopDelayMs,
      maxEventLoopUtilization: c.maxEventLoopUtilization,
      eventLoopDelay: c.eventLoopDelay,
      adaptiveLimit: c.adaptiveLimit,
      telemetry: c.telemetry,
    }).toEqual({
      maxQueue: 0,
      maxQueueWaitMs: 1000,
      retryAfterMs: 1000,
      retryAfterJitter: true,
      maxRetryRatio: 0.1,
      retryRatioWindow: 100,
      attemptHeader: 'x-herdless-attempt',
      maxHoldAfterCloseMs: 30_000,
      propagate: true,
      maxEventLoopDelayMs: Infinity,
      maxEventLoopUtilization: Infinity,
      eventLoopDelay: undefined,
      adaptiveLimit: undefined,
      telemetry: undefined,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('adaptiveLimit: true is the gradient limit with its defaults; false is none', () => {
    expect(new LoadShedder({ maxInFlight: 64, adaptiveLimit: true }).config.adaptiveLimit).toEqual({});
    expect(new LoadShedder({ maxInFlight: 64, adaptiveLimit: true }).stats().limit).toBe(10);
    expect(new LoadShedder({ maxInFlight: 64, adaptiveLimit: false }).config.adaptiveLimit).toBeUndefined();
    expect(new LoadShedder({ maxInFlight: 64, adaptiveLimit: false }).stats().limit).toBe(64);
  });

  it('given values are kept: a clock, an attempt header in any case, propagate false', () => {
    const clock = new ManualClock();
    const c = new LoadShedder({ maxInFlight: 1, clock, attemptHeader: 'X-Attempt', propagate: false, retryAfterJitter: false }).config;
    expect([c.clock, c.attemptHeader, c.propagate, c.retryAfterJitter]).toEqual([clock, 'x-attempt', false, false]);
  });

  it('a handler\'s failure is reported on the console by default', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failure = new Error('handler broke');
      new LoadShedder({ maxInFlight: 1 }).config.onHandlerError(failure);
      expect(error).toHaveBeenCalledWith('herdless/server: the handler failed', failure);
    } finally {
      error.mockRestore();
    }
  });
});
