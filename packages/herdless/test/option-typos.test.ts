import { describe, expect, it } from 'vitest';
import {
  awsRetryQuota,
  circuitBreaker,
  constantBackoff,
  consecutiveFailures,
  decorrelatedJitterBackoff,
  exponentialBackoff,
  failureRatio,
  finagleRetryBudget,
  fullJitterBackoff,
  keyedBudgets,
  proportionalJitterBackoff,
  retryRatioBudget,
  retryThrottlingBudget,
} from 'herdless';
import { invalidOption } from './support/invalid-option.js';

// A misspelled option must never fall back silently to its default (constantBackoff({ delay: 5 })
// would otherwise retry at once: the herd).
describe('misspelled options are errors that name the option', () => {
  it.each<[string, () => unknown, string]>([
    ['constantBackoff', () => constantBackoff({ delay: 5 } as never), 'constantBackoff: delay is not an option of constantBackoff (did you mean delayMs? options: delayMs), got 5'],
    ['exponentialBackoff', () => exponentialBackoff({ maxBackoff: 1000 } as never), 'exponentialBackoff: maxBackoff is not an option'],
    ['fullJitterBackoff', () => fullJitterBackoff({ initialBackoff: 5 } as never), 'fullJitterBackoff: initialBackoff is not an option'],
    ['proportionalJitterBackoff', () => proportionalJitterBackoff({ jiter: 0.1 } as never), 'proportionalJitterBackoff: jiter is not an option'],
    ['decorrelatedJitterBackoff', () => decorrelatedJitterBackoff({ base: 5 } as never), 'decorrelatedJitterBackoff: base is not an option'],
    ['circuitBreaker', () => circuitBreaker({ openDuration: 5 } as never), 'circuitBreaker: openDuration is not an option'],
    ['consecutiveFailures', () => consecutiveFailures({ treshold: 5 } as never), 'consecutiveFailures: treshold is not an option'],
    ['failureRatio', () => failureRatio({ window: 5 } as never), 'failureRatio: window is not an option'],
    ['retryThrottlingBudget', () => retryThrottlingBudget({ maxToken: 5 } as never), 'retryThrottlingBudget: maxToken is not an option'],
    ['retryRatioBudget', () => retryRatioBudget({ percent: 5 } as never), 'retryRatioBudget: percent is not an option'],
    ['finagleRetryBudget', () => finagleRetryBudget({ ttl: 5 } as never), 'finagleRetryBudget: ttl is not an option'],
    ['awsRetryQuota', () => awsRetryQuota({ cost: 5 } as never), 'awsRetryQuota: cost is not an option'],
    ['keyedBudgets', () => keyedBudgets(() => retryThrottlingBudget(), { max: 5 } as never), 'keyedBudgets: max is not an option'],
  ])('%s', (_name, make, message) => {
    expect(invalidOption(() => make()).message).toContain(message);
  });

  it('an option set to undefined is not a typo', () => {
    expect(() => constantBackoff({ delayMs: undefined })).not.toThrow();
    expect(() => circuitBreaker({ clock: undefined, isFailure: undefined })).not.toThrow();
  });
});

describe('per-call and frozen options', () => {
  it('createRetry accepts signal: undefined, and rejects policy options per call', async () => {
    const { createRetry } = await import('herdless');
    expect(() => createRetry({ signal: undefined } as never)).not.toThrow();
    const r = createRetry({ maxAttempts: 2 });
    expect(() => r(() => 1, { maxAttempts: 9 } as never)).toThrow('createRetry: maxAttempts is a createRetry() option, fixed when the retrier is made: not a per-call option, got 9');
    expect(() => r(() => 1, { sginal: 1 } as never)).toThrow('createRetry: sginal is not a per-call option (only signal is), got 1');
    await expect(r(() => 'ok', {})).resolves.toBe('ok');
  });

  it('backoff objects are frozen: a later edit cannot turn them into immediate retries', () => {
    const b = constantBackoff({ delayMs: 500 });
    expect(Object.isFrozen(b)).toBe(true);
    expect(() => {
      (b as { delayMs: number }).delayMs = Number.NaN;
    }).toThrow(TypeError);
    expect(Object.isFrozen(decorrelatedJitterBackoff())).toBe(true);
  });

  it('the exponential family is immutable without a freeze: every edit throws and changes nothing', () => {
    const b = fullJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000 });
    const edits: [string, unknown][] = [
      ['delay', () => 0],
      ['initialBackoffMs', 0],
      ['maxBackoffMs', Number.NaN],
      ['backoffMultiplier', 0],
      ['maxDelayMs', 0],
      ['toJSON', () => ({})],
    ];
    for (const [key, value] of edits) {
      expect(() => {
        (b as unknown as Record<string, unknown>)[key] = value;
      }, key).toThrow(TypeError);
    }
    expect(b.delay(5, 0, { random: () => 0.5 })).toBe(500);
    expect(b.toJSON()).toEqual({ kind: 'full jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000 });
    expect(b.maxDelayMs).toBe(1000);
  });
});
