// Every option type says `field?: T | undefined`, for projects with `exactOptionalPropertyTypes`:
// an option explicitly set to `undefined` must then mean exactly what leaving it out means.
import { describe, expect, it } from 'vitest';
import { awsRetryQuota, circuitBreaker, consecutiveFailures, constantBackoff, createRetry, decorrelatedJitterBackoff, equalJitterBackoff, exponentialBackoff, failureRatio, finagleRetryBudget, fullJitterBackoff, keyedBudgets, proportionalJitterBackoff, retry, retryRatioBudget, retryThrottlingBudget } from 'herdless';
import { parseGrpcServiceConfig } from 'herdless/grpc';
import { parseRetryPolicy } from 'herdless/core';
import { circuitBreakerMachine } from 'herdless/sim';
import { withRetry } from 'herdless/http';
import { budgetScenario, herdScenario } from 'herdless/sim';

/** `{ a: undefined, b: undefined, … }` for the given keys. */
const allUndefined = (keys: readonly string[]): Record<string, undefined> => Object.fromEntries(keys.map((k) => [k, undefined]));

/** [name, factory, its option keys, how to compare what it made] */
const factories: [string, (options: never) => unknown, readonly string[], (made: unknown) => unknown][] = [
  ['constantBackoff', constantBackoff, ['delayMs'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['exponentialBackoff', exponentialBackoff, ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['fullJitterBackoff', fullJitterBackoff, ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['equalJitterBackoff', equalJitterBackoff, ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['proportionalJitterBackoff', proportionalJitterBackoff, ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs', 'jitter'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['decorrelatedJitterBackoff', decorrelatedJitterBackoff, ['baseMs', 'maxBackoffMs'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['retryThrottlingBudget', retryThrottlingBudget, ['maxTokens', 'tokenRatio'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['retryRatioBudget', retryRatioBudget, ['ratio', 'minRetriesPerWindow', 'windowMs', 'buckets', 'countAt'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['finagleRetryBudget', finagleRetryBudget, ['ttlMs', 'minRetriesPerSec', 'percentCanRetry'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['awsRetryQuota', awsRetryQuota, ['capacity', 'retryCost', 'timeoutCost', 'successIncrement'], (b) => (b as { toJSON(): unknown }).toJSON()],
  ['consecutiveFailures', consecutiveFailures, ['threshold'], (c) => (c as { toJSON(): unknown }).toJSON()],
  ['failureRatio', failureRatio, ['ratio', 'windowMs', 'minimumCalls', 'buckets'], (c) => (c as { toJSON(): unknown }).toJSON()],
  ['circuitBreakerMachine', circuitBreakerMachine, ['counting', 'openDurationMs', 'halfOpenMaxCalls', 'successThreshold', 'random', 'onListenerError'], (m) => (m as { snapshot(now: number): unknown }).snapshot(0)],
  ['parseRetryPolicy', parseRetryPolicy, ['maxAttempts', 'backoff', 'retryable', 'maxRetryAfterMs', 'deadlineMs', 'attemptTimeoutMs', 'budget'], (p) => p],
  ['createRetry', createRetry, ['maxAttempts', 'backoff', 'retryable', 'maxRetryAfterMs', 'deadlineMs', 'attemptTimeoutMs', 'budget', 'random', 'clock', 'unref', 'onRetry', 'onGiveUp', 'onHookError'], (r) => (r as { policy: unknown }).policy],
  ['herdScenario', (o: never) => herdScenario('full jitter', o), ['clients', 'spreadMs', 'horizonMs', 'server'], (s) => JSON.stringify(s)],
  ['budgetScenario', (o: never) => budgetScenario('4 attempts', o), ['clients', 'ratePerSecond', 'outage', 'horizonMs'], (s) => JSON.stringify(s)],
];

describe('an option set to undefined is the default', () => {
  it.each(factories)('%s', (_name, make, keys, view) => {
    expect(view(make(allUndefined(keys) as never))).toEqual(view(make({} as never)));
  });

  it('circuitBreaker, keyedBudgets, parseGrpcServiceConfig, withRetry and retry accept them too', async () => {
    const breaker = circuitBreaker(allUndefined(['clock', 'isFailure', 'isResultFailure', 'random', 'counting', 'openDurationMs', 'halfOpenMaxCalls', 'successThreshold', 'onListenerError']));
    await expect(breaker.execute(() => 1, { signal: undefined })).resolves.toBe(1);
    // takenAt is the wall clock at each snapshot: two snapshots a millisecond apart differ there.
    expect({ ...breaker.snapshot(), takenAt: 0 }).toEqual({ ...circuitBreaker().snapshot(), takenAt: 0 });
    expect(keyedBudgets(() => retryThrottlingBudget(), { maxKeys: undefined }).get('a')).toBeDefined();
    const config = { methodConfig: [{ name: [{ service: 's' }], retryPolicy: { maxAttempts: 3, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }] };
    const keys = ['service', 'method', 'jitter', 'budget'];
    expect(JSON.stringify(parseGrpcServiceConfig(config, allUndefined(keys) as never))).toBe(JSON.stringify(parseGrpcServiceConfig(config)));
    const fetchLike = async () => new Response('ok');
    const retrying = withRetry(fetchLike, allUndefined(['maxAttempts', 'retryMethods', 'retryStatuses', 'idempotencyKey', 'now', 'onRetry', 'onGiveUp']) as never);
    expect(await (await retrying('http://127.0.0.1/', undefined, { idempotencyKey: undefined, bodyFactory: undefined })).text()).toBe('ok');
    await expect(retry(() => 2, allUndefined(['maxAttempts', 'signal', 'deadlineMs', 'onRetry']) as never)).resolves.toBe(2);
  });
});
