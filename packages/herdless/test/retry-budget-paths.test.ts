import { describe, expect, it } from 'vitest';
import { awsRetryQuota, constantBackoff, createRetry, ManualClock, retry, type AwsRetryQuota, type RetrierOptions } from 'herdless';

// retry() runs one attempt loop whether or not anything can cut an attempt short; the budget must
// hear the same thing on every way into it. The AWS retry quota tells a first-try success (+1,
// `successIncrement`) from a successful retry (+5, the refunded `retryCost`), so it shows what the
// loop reported: each case starts one retry below capacity (495 of 500).
function quota(): AwsRetryQuota {
  const q = awsRetryQuota();
  q.onFailure(0);
  expect(q.allowRetry(0)).toBe(true);
  expect(q.available).toBe(495);
  return q;
}

const transient = (): Error => Object.assign(new Error('reset'), { code: 'ECONNRESET' });

/** Each way into the loop: what the call is given besides the budget. */
const paths: ReadonlyArray<[string, (clock: ManualClock) => Omit<RetrierOptions, 'budget'> & { signal?: AbortSignal }]> = [
  ['no guard (nothing can cut an attempt short)', (clock) => ({ clock })],
  ['a deadline', (clock) => ({ clock, deadlineMs: 10_000 })],
  ['an attempt timeout', (clock) => ({ clock, attemptTimeoutMs: 1000 })],
  ['the caller\'s signal', (clock) => ({ clock, signal: new AbortController().signal })],
  ['a deadline, an attempt timeout and a signal', (clock) => ({ clock, deadlineMs: 10_000, attemptTimeoutMs: 1000, signal: new AbortController().signal })],
];

describe('the budget hears a first-try success as one, on every path of the loop', () => {
  for (const [name, options] of paths) {
    it(`retry() with ${name}: a first-try success adds successIncrement (1), not the retry refund`, async () => {
      const q = quota();
      await expect(retry(() => 'ok', { ...options(new ManualClock()), budget: q })).resolves.toBe('ok');
      expect(q.available).toBe(496);
    });

    it(`retry() with ${name}: a success after one retry refunds retryCost (5) after paying it`, async () => {
      const q = quota();
      const clock = new ManualClock();
      let calls = 0;
      const call = retry(
        () => {
          calls++;
          if (calls === 1) throw transient();
          return 'ok';
        },
        { ...options(clock), budget: q, backoff: constantBackoff({ delayMs: 10 }) },
      );
      await clock.runAll();
      await expect(call).resolves.toBe('ok');
      // 495 − 5 (the retry) + 5 (the successful retry's refund).
      expect(q.available).toBe(495);
      expect(calls).toBe(2);
    });

    it(`createRetry() with ${name}: a first-try success adds 1`, async () => {
      const q = quota();
      const { signal, ...fixed } = options(new ManualClock());
      const withRetry = createRetry({ ...fixed, budget: q });
      await expect(withRetry(async () => 'ok', signal === undefined ? undefined : { signal })).resolves.toBe('ok');
      expect(q.available).toBe(496);
    });
  }
});
