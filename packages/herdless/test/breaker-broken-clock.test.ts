/** A circuit breaker whose injected clock stops reading numbers fails loud and closed, never open-ended. */
import { describe, expect, it } from 'vitest';
import { circuitBreaker, consecutiveFailures, type Clock } from 'herdless';
import { invalidOption } from './support/invalid-option.js';

const NAN_CLOCK: Clock = { now: () => NaN };
const CLOCK_ERROR = 'circuitBreaker: clock.now() must return a finite number of ms (a bug in the injected clock), got NaN';
const countable = () => Object.assign(new Error('reset'), { code: 'ECONNRESET' });

describe('a breaker whose injected clock breaks', () => {
  it('a clock that reads NaN: 6 failing calls reach the dependency 5 times, then the calls are refused naming the clock', async () => {
    const breaker = circuitBreaker({ clock: NAN_CLOCK });
    let calls = 0;
    const errors: unknown[] = [];
    for (let i = 0; i < 6; i++) errors.push(await breaker.execute(async () => (calls++, Promise.reject(countable()))).catch((e: unknown) => e));
    expect(calls).toBe(5);
    const refused = invalidOption(() => {
      throw errors[5];
    });
    expect([refused.field, refused.message]).toEqual(['clock.now()', CLOCK_ERROR]);
  });

  it('a clock that breaks later: the failure that cannot open the breaker says so, and no call reaches the dependency until the clock reads a number again', async () => {
    let reading = 0;
    const breaker = circuitBreaker({ clock: { now: () => reading }, counting: consecutiveFailures({ threshold: 5 }), openDurationMs: 1000 });
    reading = Number.NaN;
    let calls = 0;
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const error = (await breaker.execute(async () => (calls++, Promise.reject(countable()))).catch((e: unknown) => e)) as Error;
      outcomes.push(error.message === CLOCK_ERROR ? 'clock' : error.message);
    }
    // The closed state reads no clock: four failures are counted; the fifth must open the breaker, and cannot.
    expect(outcomes).toEqual(['reset', 'reset', 'reset', 'reset', 'clock', 'clock']);
    expect(calls).toBe(5);
    reading = 10;
    // The clock reads again: the breaker works again, and the next failure opens it.
    await breaker.execute(async () => (calls++, Promise.reject(countable()))).catch(() => undefined);
    expect([calls, breaker.state]).toEqual([6, 'open']);
  });
});
