/**
 * Core rules that only the HTTP and gRPC layers' tests stated before (they are left out of the core
 * mutation run, which keeps the files that state core rules without sockets): the proportional
 * jitter backoff's name, an option error's whole sentence, and the throttling backoff's default.
 */
import { describe, expect, it } from 'vitest';
import { constantBackoff, proportionalJitterBackoff, retryThrottlingBudget } from 'herdless';
import { parseRetryPolicy } from 'herdless/core';
import { invalidOption } from './support/invalid-option.js';

describe('core rules the layers rely on', () => {
  it('proportional jitter is named so', () => {
    expect(proportionalJitterBackoff().name).toBe('proportional jitter');
  });

  it('an option error is one sentence: owner, field, requirement, the value it got', () => {
    const error = invalidOption(() => parseRetryPolicy({ maxAttempts: 0 }));
    expect(error.message).toBe(`retry: maxAttempts ${error.requirement}, got 0`);
    expect(error.name).toBe('InvalidOptionError');
  });

  it('an unknown option says it is none of the owner\'s, names the closest and lists them', () => {
    const error = invalidOption(() => retryThrottlingBudget({ maxToken: 10 } as never));
    expect(error.field).toBe('maxToken');
    expect(error.requirement).toBe('is not an option of retryThrottlingBudget (did you mean maxTokens? options: maxTokens, tokenRatio)');
    const far = invalidOption(() => retryThrottlingBudget({ capacity: 10 } as never));
    expect(far.requirement).toBe('is not an option of retryThrottlingBudget (check the spelling; options: maxTokens, tokenRatio)');
  });

  it('the throttling backoff: the caller\'s own backoff when one is given and no throttlingBackoff; else the default', () => {
    const backoff = constantBackoff({ delayMs: 50 });
    expect(parseRetryPolicy({ backoff }).throttlingBackoff).toBe(backoff);
    const throttling = constantBackoff({ delayMs: 900 });
    expect(parseRetryPolicy({ backoff, throttlingBackoff: throttling }).throttlingBackoff).toBe(throttling);
    const byDefault = parseRetryPolicy({ maxAttempts: 3 }).throttlingBackoff;
    expect(byDefault).not.toBe(parseRetryPolicy({ maxAttempts: 3 }).backoff);
    expect(byDefault.name).toBe('full jitter');
  });
});
