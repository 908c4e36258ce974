import { describe, expect, it } from 'vitest';
import { createRetry, retry } from 'herdless';
import { fetchWithRetry, withRetry } from 'herdless/http';
import { invalidOption } from './support/invalid-option.js';

// A misspelt option is refused with the list of the options that entry point takes, as the backoffs'
// and circuitBreaker's refusals already were: the user sees the right spelling in the message.
const POLICY = 'maxAttempts, backoff, throttlingBackoff, ignoreHints, retryable, maxRetryAfterMs, deadlineMs, attemptTimeoutMs, budget, throttle, random, clock, unref, onHookError';
const HTTP = 'retryMethods, retryStatuses, idempotencyKey, now, attemptHeader, breaker, beforeAttempt, refreshStatuses, onRetry, onGiveUp, telemetry, name';

describe('a misspelt option names every option of its entry point', () => {
  it('retry() lists the policy, the observers and the per-call signal', () => {
    expect(invalidOption(() => retry(() => 1, { maxAtempts: 3 } as never)).message).toBe(
      `retry: maxAtempts is not a retry option (did you mean maxAttempts? options: ${POLICY}, onRetry, onGiveUp, telemetry, name, signal), got 3`,
    );
  });

  it('createRetry() lists the same but signal, which it takes per call', () => {
    expect(invalidOption(() => createRetry({ maxAtempts: 3 } as never)).message).toBe(
      `createRetry: maxAtempts is not a retry option (did you mean maxAttempts? options: ${POLICY}, onRetry, onGiveUp, telemetry, name), got 3`,
    );
  });

  it('withRetry() lists the policy and the HTTP options, each once (not bodyFactory, which is per request)', () => {
    expect(invalidOption(() => withRetry(fetch, { retryAfterMax: 1 } as never)).message).toBe(
      `withRetry: retryAfterMax is not an option of withRetry (check the spelling; options: ${POLICY}, ${HTTP}), got 1`,
    );
  });

  it('fetchWithRetry() adds its per-request bodyFactory (idempotencyKey listed once)', async () => {
    await expect(fetchWithRetry('http://127.0.0.1:9/', undefined, { maxAttemps: 2 } as never)).rejects.toThrow(
      `fetchWithRetry: maxAttemps is not an option of fetchWithRetry (did you mean maxAttempts? options: ${POLICY}, ${HTTP}, bodyFactory), got 2`,
    );
  });
});
