// The circuit breaker's shell at its edges, in virtual time: the state read through a clock that
// stops reading numbers, thenables that are functions, tryAcquire()/settle() for callback clients,
// and what a refusal carries as its cause.
import { describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, consecutiveFailures, isCircuitOpenError, type BreakerPermit, type TelemetryEvent } from 'herdless';
import { invalidOption } from './support/invalid-option.js';

const down = (label = 'down'): Error => Object.assign(new Error(label), { status: 503 });

describe('the state, read through a broken clock', () => {
  it.each([
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['NaN', Number.NaN],
    ['a string', '99999'],
  ])('a reading of %s moves nothing: an open breaker reads open; a good reading half-opens it', async (_name, bad) => {
    let reading: unknown = 0;
    const breaker = circuitBreaker({ clock: { now: () => reading as number }, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    reading = bad;
    expect(breaker.state).toBe('open');
    reading = 1000;
    expect(breaker.state).toBe('half-open');
  });
});

describe('results that are functions', () => {
  it('a function with a then() is a thenable: its settled value is what the classifier sees', async () => {
    const clock = new ManualClock(0);
    const seen: unknown[] = [];
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), isResultFailure: (v) => (seen.push(v), v === 'bad') });
    const thenable = Object.assign(() => undefined, { then: (resolve: (v: string) => void) => resolve('bad') });
    await expect(breaker.execute(() => thenable as unknown as PromiseLike<string>)).resolves.toBe('bad');
    expect(seen).toEqual(['bad']);
    expect(breaker.state).toBe('open');
  });

  it('the same with a signal', async () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), isResultFailure: (v) => v === 'bad' });
    const thenable = Object.assign(() => undefined, { then: (resolve: (v: string) => void) => resolve('bad') });
    await expect(breaker.execute(() => thenable as unknown as PromiseLike<string>, { signal: new AbortController().signal })).resolves.toBe('bad');
    expect(breaker.state).toBe('open');
  });

  it('a plain function value is returned as it is and counted as a success', async () => {
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }) });
    const fn = (): number => 1;
    await expect(breaker.execute(() => fn)).resolves.toBe(fn);
    expect(breaker.state).toBe('closed');
  });
});

describe('tryAcquire and settle', () => {
  it('each kind of settlement counts as execute() would; "ignored" not at all', () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 2 }), isResultFailure: (v) => v === 'bad' });
    const take = (): BreakerPermit => {
      const p = breaker.tryAcquire();
      if (isCircuitOpenError(p)) throw p;
      return p;
    };
    breaker.settle(take(), { error: down() });
    breaker.settle(take(), 'ignored');
    expect(breaker.state).toBe('closed');
    breaker.settle(take(), { value: 'ok' }); // a success: the count starts again
    breaker.settle(take(), { error: down() });
    expect(breaker.state).toBe('closed');
    breaker.settle(take(), { value: 'bad' });
    expect(breaker.state).toBe('open');
    const refused = breaker.tryAcquire();
    expect(isCircuitOpenError(refused)).toBe(true);
  });

  it('a refusal from tryAcquire is reported to telemetry as execute() reports it', () => {
    const events: TelemetryEvent[] = [];
    const breaker = circuitBreaker({ name: 'db', clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), telemetry: { onEvent: (e) => void events.push(e) } });
    const p = breaker.tryAcquire() as BreakerPermit;
    breaker.settle(p, { error: down() });
    breaker.tryAcquire();
    expect(events.at(-1)).toEqual({ type: 'breaker-rejection', breaker: 'db', state: 'open', isolated: false });
  });

  it('a classifier that throws on settle() throws to the caller, the permit given back uncounted', () => {
    const boom = new Error('classifier bug');
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), isFailure: () => { throw boom; }, isResultFailure: () => { throw boom; } });
    expect(() => breaker.settle(breaker.tryAcquire() as BreakerPermit, { error: down() })).toThrow(boom);
    expect(() => breaker.settle(breaker.tryAcquire() as BreakerPermit, { value: 1 })).toThrow(boom);
    expect(breaker.state).toBe('closed');
  });
});

describe('the cause of a refusal', () => {
  it('is the failure that opened the breaker; an isolated breaker has none', async () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const opening = down('the opening failure');
    await breaker.execute(() => Promise.reject(opening)).catch(() => undefined);
    const refused = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect((refused as Error).cause).toBe(opening);
    const isolation = breaker.isolate();
    const isolated = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(isolated).toMatchObject({ isolated: true });
    expect('cause' in (isolated as object)).toBe(false);
    isolation.release();
  });

  it('after reset() a refusal carries no cause from before', async () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    breaker.reset();
    const isolation = breaker.isolate();
    isolation.release(); // half-open: one trial slot
    const trial = breaker.execute(() => new Promise(() => undefined));
    void trial;
    const refused = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(isCircuitOpenError(refused)).toBe(true);
    expect('cause' in (refused as object)).toBe(false);
  });
});

describe('options', () => {
  it.each([
    ['an empty name', { name: '' }, 'name', 'circuitBreaker: name must be a non-empty string, got ""'],
    ['a name that is a number', { name: 5 }, 'name', 'circuitBreaker: name must be a non-empty string, got 5'],
    ['a clock without now()', { clock: {} }, 'clock', 'circuitBreaker: clock must be an object with a now() method, got an object (Object)'],
    ['a clock that is a function', { clock: () => 0 }, 'clock', 'circuitBreaker: clock must be an object with a now() method, got a function'],
  ])('refuses %s', (_name, options, field, message) => {
    const error = invalidOption(() => circuitBreaker(options as never));
    expect([error.field, error.message]).toEqual([field, message]);
  });

  it('is named "default" without a name', () => {
    expect(circuitBreaker().name).toBe('default');
  });
});

describe('a broken clock, named in every manual control', () => {
  const CLOCK = /^circuitBreaker: clock\.now\(\) must return a finite number of ms \(a bug in the injected clock\), got NaN$/;

  it('snapshot(), isolate(), release(), endIsolation() and reset() name the clock', () => {
    let reading = 0;
    const breaker = circuitBreaker({ clock: { now: () => reading } });
    const isolation = breaker.isolate();
    reading = Number.NaN;
    expect(invalidOption(() => breaker.snapshot()).message).toMatch(CLOCK);
    expect(invalidOption(() => breaker.isolate()).message).toMatch(CLOCK);
    expect(invalidOption(() => isolation.release()).message).toMatch(CLOCK);
    expect(invalidOption(() => breaker.endIsolation()).message).toMatch(CLOCK);
    expect(invalidOption(() => breaker.reset()).message).toMatch(CLOCK);
  });

  it('execute() with an operation that is not a function rejects naming it', async () => {
    const error = await circuitBreaker().execute('op' as never).catch((e: unknown) => e);
    expect(invalidOption(() => {
      throw error;
    }).message).toBe('circuitBreaker.execute: fn must be a function, got "op"');
  });
});
