import { describe, expect, it } from 'vitest';
import { RetryError } from 'herdless';

// A give-up before any attempt was sent (adaptive throttling refusing a first try) has no last
// failure to name: the message says no attempt was sent instead of "last failure: undefined".
describe('RetryError message', () => {
  it('with no attempt sent, says so', () => {
    const e = new RetryError('throttled', 0, undefined, 'adaptive throttling rejected the attempt locally');
    expect(e.message).toBe('retry gave up after 0 attempts (throttled): adaptive throttling rejected the attempt locally (no attempt was sent)');
    expect(e.cause).toBeUndefined();
  });

  it('with attempts made, names the last failure', () => {
    const e = new RetryError('exhausted', 2, new Error('boom'), 'all 2 attempts failed');
    expect(e.message).toMatch(/^retry gave up after 2 attempts \(exhausted\): all 2 attempts failed; last failure: .*boom/);
  });

  it('with no attempt but a cause (a caller-side failure), still names it', () => {
    const e = new RetryError('fatal', 0, new Error('hook threw'), 'fatal');
    expect(e.message).toMatch(/; last failure: .*hook threw/);
  });
});
