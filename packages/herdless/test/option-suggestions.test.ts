import { describe, expect, it } from 'vitest';
import {
  adaptiveThrottling,
  awsRetryQuota,
  circuitBreaker,
  consecutiveFailures,
  createHedger,
  exponentialBackoff,
  failureRatio,
  finagleRetryBudget,
  fullJitterBackoff,
  hedge,
  keyedBreakers,
  keyedBudgets,
  retryRatioBudget,
  retryThrottlingBudget,
} from 'herdless';
import { backoffFromSpec } from 'herdless/core';
import { fetchWithRetry, withRetry } from 'herdless/http';
import { retryInterceptor } from 'herdless/undici';
import { retryAdapter } from 'herdless/axios';
import { grpcRetryInterceptor } from 'herdless/grpc-js';
import { connectRetryInterceptor } from 'herdless/connect';
import { closestOption } from '../src/core/closest-option.js';
import { invalidOption } from './support/invalid-option.js';

describe('closestOption: the option a misspelt key most likely means', () => {
  const retryKeys = ['maxAttempts', 'backoff', 'throttlingBackoff', 'deadlineMs', 'attemptTimeoutMs', 'budget', 'throttle'];
  it.each<[string, readonly string[], string | undefined]>([
    ['maxAtempts', retryKeys, 'maxAttempts'], // a letter left out
    ['maxAttemtps', retryKeys, 'maxAttempts'], // two letters swapped: two edits
    ['MaxAttempts', retryKeys, 'maxAttempts'], // letter case is no edit
    ['deadline', retryKeys, 'deadlineMs'], // the unit left out: two edits
    ['budgett', retryKeys, 'budget'],
    ['throttel', retryKeys, 'throttle'], // throttle (2 edits) before throttlingBackoff (far)
    ['timeout', retryKeys, undefined], // nothing within two edits
    ['mxAtmpts', retryKeys, undefined], // three edits: too far
    ['K', ['k', 'windowMs'], 'k'],
    ['x', ['k', 'windowMs'], undefined], // a one-letter key is never "one edit from" another one-letter name
    ['ab', ['k'], undefined],
    ['failureTreshold', ['failureThreshold', 'successThreshold'], 'failureThreshold'],
    ['maxRejectProbability', ['k', 'windowMs', 'buckets', 'maxRejectionProbability'], 'maxRejectionProbability'], // a long key (12+): three edits still count
    ['attemptTimeout', retryKeys, 'attemptTimeoutMs'], // 14 letters, two edits
    ['maxAttemptsXYZ', retryKeys, 'maxAttempts'], // 14 letters, three edits
    ['throttlingBackXYZW', retryKeys, undefined], // four edits: too far even for a long key
  ])('%s → %s', (key, known, expected) => {
    expect(closestOption(key, known)).toBe(expected);
  });

  it('a tie goes to the first listed name', () => {
    expect(closestOption('ab', ['abc', 'abd'])).toBe('abc');
    expect(closestOption('ab', ['abd', 'abc'])).toBe('abd');
  });

  it('a key of 64 characters or more is no misspelling (and costs no distance table)', () => {
    const name = 'a'.repeat(63);
    expect(closestOption(`${name}b`, [name])).toBeUndefined();
    expect(closestOption(name, [`${name}b`])).toBe(`${name}b`);
    expect(closestOption('x'.repeat(1_000_000), ['maxAttempts'])).toBeUndefined();
    expect(closestOption('x'.repeat(100), ['k'])).toBeUndefined(); // not "one insertion away" from a short name
  });
});

// Every options object of the library names the option a misspelt key most likely means, beside
// the list of every option (the user sees the fix without reading the list).
describe('a misspelt option: "did you mean …?"', () => {
  const cases: [string, () => unknown, string][] = [
    ['circuitBreaker', () => circuitBreaker({ openDuratonMs: 5 } as never), 'circuitBreaker: openDuratonMs is not an option of circuitBreaker (did you mean openDurationMs? options: '],
    ['circuitBreaker, other case', () => circuitBreaker({ HalfOpenMaxCalls: 2 } as never), '(did you mean halfOpenMaxCalls? options: '],
    ['consecutiveFailures', () => consecutiveFailures({ treshold: 5 } as never), 'consecutiveFailures: treshold is not an option of consecutiveFailures (did you mean threshold? options: threshold), got 5'],
    ['failureRatio', () => failureRatio({ minimumCall: 5 } as never), '(did you mean minimumCalls? options: '],
    ['retryThrottlingBudget', () => retryThrottlingBudget({ maxToken: 5 } as never), 'retryThrottlingBudget: maxToken is not an option of retryThrottlingBudget (did you mean maxTokens? options: maxTokens, tokenRatio'],
    ['retryRatioBudget', () => retryRatioBudget({ ration: 0.1 } as never), '(did you mean ratio? options: '],
    ['finagleRetryBudget', () => finagleRetryBudget({ ttlMS: 5 } as never), '(did you mean ttlMs? options: '],
    ['awsRetryQuota', () => awsRetryQuota({ retryCst: 5 } as never), '(did you mean retryCost? options: '],
    ['keyedBudgets', () => keyedBudgets(() => retryThrottlingBudget(), { maxKey: 5 } as never), '(did you mean maxKeys? options: '],
    ['adaptiveThrottling', () => adaptiveThrottling({ windowMS: 5 } as never), 'adaptiveThrottling: windowMS is not an option of adaptiveThrottling (did you mean windowMs? options: '],
    ['keyedBreakers', () => keyedBreakers(() => circuitBreaker(), { idleMS: 5 } as never), '(did you mean idleMs? options: '],
    ['exponentialBackoff', () => exponentialBackoff({ maxBackofMs: 1000 } as never), '(did you mean maxBackoffMs? options: '],
    ['fullJitterBackoff', () => fullJitterBackoff({ initialBackoff: 5 } as never), '(did you mean initialBackoffMs? options: '],
    ['hedge', () => hedge(() => 1, { maxAtempts: 2, delayMs: 10 } as never), 'hedge: maxAtempts is not a hedging option (did you mean maxAttempts? options: '],
    ['createHedger', () => createHedger({ delyMs: 10 } as never), 'createHedger: delyMs is not a hedging option (did you mean delayMs? options: '],
    ['backoffFromSpec', () => backoffFromSpec({ kind: 'exponential', initialBackofMs: 5 }), 'backoff.initialBackofMs is not an option of "exponential" (did you mean initialBackoffMs? options: '],
    ['withRetry', () => withRetry(fetch, { maxAtempts: 2 } as never), 'withRetry: maxAtempts is not an option of withRetry (did you mean maxAttempts? options: '],
    ['withRetry, HTTP option', () => withRetry(fetch, { retryStatus: [503] } as never), '(did you mean retryStatuses? options: '],
    ['retryInterceptor (undici)', () => retryInterceptor({ atemptHeader: false } as never), 'retryInterceptor: atemptHeader is not an option of retryInterceptor (did you mean attemptHeader? options: '],
    ['retryAdapter (axios)', () => retryAdapter({ retryMethod: ['GET'] } as never), 'retryAdapter: retryMethod is not an option of retryAdapter (did you mean retryMethods? options: '],
    ['retryAdapter (axios), its own adapter option', () => retryAdapter({ adaptor: () => Promise.reject(new Error('unused')) } as never), '(did you mean adapter? options: '],
    ['grpcRetryInterceptor', () => grpcRetryInterceptor({ maxRetryAtempts: 3 } as never), '(did you mean maxRetryAttempts? options: '],
    ['connectRetryInterceptor', () => connectRetryInterceptor({ retryBuferSize: 3 } as never), '(did you mean retryBufferSize? options: '],
  ];
  it.each(cases)('%s', (_name, make, message) => {
    expect(invalidOption(make).message).toContain(message);
  });

  it('with no option close, the message says to check the spelling and lists them all', () => {
    expect(invalidOption(() => circuitBreaker({ timeout: 5 } as never)).message).toMatch(/^circuitBreaker: timeout is not an option of circuitBreaker \(check the spelling; options: [a-zA-Z, ]+\), got 5$/);
  });

  it('fetchWithRetry refuses the typo before sending anything', async () => {
    await expect(fetchWithRetry('http://127.0.0.1:9/', undefined, { maxAttemps: 2 } as never)).rejects.toThrow(
      'fetchWithRetry: maxAttemps is not an option of fetchWithRetry (did you mean maxAttempts? options: ',
    );
  });
});
