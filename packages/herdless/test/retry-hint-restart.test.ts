// retry() end to end in virtual time: a server hint (gRFC A6 pushback, RFC 9110 Retry-After)
// replaces one wait and restarts the backoff, as grpc-js does — 50 then 100 ms, not 50 then 200.
import { ManualClock, exponentialBackoff, retry } from 'herdless';
import { describe, expect, it } from 'vitest';

describe('retry(): a hinted wait restarts the backoff', () => {
  it('hint 50, then plain failures: waits 50, 100, 200 (starts at 0, 50, 150, 350)', async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    const hints = [50, undefined, undefined];
    const done = retry(
      ({ attempt }) => {
        starts.push(clock.now());
        const hint = hints[attempt - 1];
        if (attempt <= hints.length) throw Object.assign(new Error('down'), hint === undefined ? {} : { retryAfterMs: hint });
        return 'ok';
      },
      { maxAttempts: 4, backoff: exponentialBackoff({ initialBackoffMs: 100 }), clock, retryable: () => true },
    );
    await clock.runAll();
    expect(await done).toBe('ok');
    expect(starts).toEqual([0, 50, 150, 350]);
  });
});
