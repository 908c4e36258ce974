import { describe, expect, it } from 'vitest';
import { finagleRetryBudget, ManualClock, retry, retryRatioBudget, type RetryBudget, type RetryError } from 'herdless';
import { parseHttpDate } from 'herdless/http';

// Boundaries that a single-character change to the code would move, each stated as the rule it
// protects. They were found by mutation testing (docs/testing.md): the suite passed with the
// boundary moved.

describe('RFC 850 dates: a two-digit year is the year with those digits within 50 years of now', () => {
  const at = (year: number) => Date.UTC(year, 5, 1);
  const yearOf = (value: string, nowYear: number) => new Date(parseHttpDate(value, at(nowYear))!).getUTCFullYear();
  it('future side: exactly 50 years ahead stays ahead; 51 years ahead is the past century (RFC 9110 §5.6.7)', () => {
    expect(yearOf('Sunday, 06-Nov-76 08:49:37 GMT', 2026)).toBe(2076);
    expect(yearOf('Sunday, 06-Nov-77 08:49:37 GMT', 2026)).toBe(1977);
  });
  it('past side: a year that would be 50 or more years back moves to the next century', () => {
    // In 2080, "30" is 2130 (exactly 50 ahead) and "31" is 2031 (49 back).
    expect(yearOf('Sunday, 06-Nov-30 08:49:37 GMT', 2080)).toBe(2130);
    expect(yearOf('Sunday, 06-Nov-31 08:49:37 GMT', 2080)).toBe(2031);
    expect(yearOf('Sunday, 06-Nov-79 08:49:37 GMT', 2080)).toBe(2079);
  });
});

describe('sliding windows: a clock reading that goes backwards, or NaN, changes nothing', () => {
  // 20 requests at 5 s, then failures until the budget refuses; then readings at NaN and 4.5 s must
  // neither reset the window (which would grant a retry: 1 ≤ 0 × ratio + minimum) nor stall it.
  const drive = (budget: RetryBudget) => {
    for (let i = 0; i < 20; i++) budget.onAttempt(5000, false);
    const grants: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      budget.onFailure(5000);
      grants.push(budget.allowRetry(5000));
    }
    const odd = [budget.allowRetry(Number.NaN), budget.allowRetry(4500), budget.allowRetry(5000)];
    // Much later the window has moved on: fresh requests earn a retry again.
    for (let i = 0; i < 20; i++) budget.onAttempt(9000, false);
    return { grants, odd, later: budget.allowRetry(9000) };
  };
  it.each([
    ['retryRatioBudget', () => retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 1, windowMs: 1000, buckets: 10 })],
    ['finagleRetryBudget', () => finagleRetryBudget({ ttlMs: 1000, minRetriesPerSec: 1, percentCanRetry: 0.1 })],
  ])('%s', (_name, make) => {
    expect(drive(make())).toEqual({ grants: [true, true, true, false, false], odd: [false, false, false], later: true });
  });
});

describe('attemptTimeoutMs equal to the time left: the deadline is what cuts the attempt', () => {
  it('deadlineMs 1000 and attemptTimeoutMs 1000: the timeout error says byDeadline', async () => {
    const clock = new ManualClock();
    let error: unknown;
    const call = retry(() => new Promise<never>(() => undefined), { clock, deadlineMs: 1000, attemptTimeoutMs: 1000 }).catch((e: unknown) => {
      error = e;
    });
    await clock.runAll();
    await call;
    expect(error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect((error as RetryError).cause).toMatchObject({ byDeadline: true, timeoutMs: 1000 });
    expect(clock.now()).toBe(1000);
  });
  it('one ms more of deadline: the attempt timeout cuts it (byDeadline false)', async () => {
    const clock = new ManualClock();
    let error: unknown;
    // A fixed draw: full jitter's first wait is then 50 ms (with Math.random, 1 run in 100 drew a wait
    // under 1 ms, which fits in the 1 ms left and starts a second attempt).
    const random = { random: () => 0.5 };
    const call = retry(() => new Promise<never>(() => undefined), { clock, random, deadlineMs: 1001, attemptTimeoutMs: 1000 }).catch((e: unknown) => {
      error = e;
    });
    await clock.runAll();
    await call;
    // The attempt timed out at 1000 ms; the 50 ms wait does not fit in the 1 ms left, so the call ends there.
    expect((error as RetryError).cause).toMatchObject({ byDeadline: false, timeoutMs: 1000 });
  });
});
