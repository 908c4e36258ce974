// One budget shared by nested herdless layers counts each logical call once.
import { describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, createRetry, finagleRetryBudget, retry, type RetryBudget } from 'herdless';
import { withRetry } from 'herdless/http';

const transient = (): Error => Object.assign(new Error('blip'), { code: 'ECONNRESET' });

/** A budget that records what it hears and allows every retry. */
function recording(): RetryBudget & { log: string[] } {
  const log: string[] = [];
  return {
    name: 'recording',
    log,
    onAttempt: (_now, isRetry) => void log.push(isRetry ? 'retry sent' : 'first sent'),
    onSuccess: (_now, isRetry) => void log.push(isRetry === true ? 'retry ok' : 'first ok'),
    onFailure: () => void log.push('failed'),
    allowRetry: () => {
      log.push('retry?');
      return true;
    },
  };
}

describe('a budget shared by nested layers', () => {
  it('Finagle budget given to createRetry and to an inner withRetry: balance 101 after 10 requests (one deposit each), not 102', async () => {
    const clock = new ManualClock();
    const budget = finagleRetryBudget({ percentCanRetry: 0.1 });
    const fakeFetch = (): Promise<Response> => Promise.resolve(new Response('ok'));
    const api = withRetry(fakeFetch, { clock, budget });
    const outer = createRetry({ clock, budget });
    for (let i = 0; i < 10; i++) await outer(() => api('http://127.0.0.1:9/'));
    expect(budget.balance(clock.now())).toBeCloseTo(101, 9);
    // A single layer counts the same.
    const single = finagleRetryBudget({ percentCanRetry: 0.1 });
    const alone = createRetry({ clock, budget: single });
    for (let i = 0; i < 10; i++) await alone(() => 'ok');
    expect(single.balance(clock.now())).toBeCloseTo(101, 9);
  });

  it.each([
    ['plain', {}],
    ['guarded (deadline)', { deadlineMs: 1_000_000 }],
  ])('the inner layer retries (%s): one first send, each retry once, each outcome once', async (_path, extra) => {
    const clock = new ManualClock();
    const budget = recording();
    const inner = createRetry({ clock, budget, backoff: constantBackoff(), maxAttempts: 3, ...extra });
    const outer = createRetry({ clock, budget, backoff: constantBackoff(), maxAttempts: 3, ...extra });
    let sends = 0;
    const value = await outer(() =>
      inner(() => {
        sends++;
        return sends < 3 ? Promise.reject(transient()) : 'ok';
      }),
    );
    expect([value, sends]).toEqual(['ok', 3]);
    // What one layer alone would report for the same three sends.
    expect(budget.log).toEqual(['first sent', 'failed', 'retry?', 'retry sent', 'failed', 'retry?', 'retry sent', 'retry ok']);
  });

  it('the inner layer gives up: its failures are counted once; the outer layer (stopped by the do-not-retry mark) adds nothing', async () => {
    const budget = recording();
    const inner = createRetry({ budget, backoff: constantBackoff(), maxAttempts: 2 });
    const outer = createRetry({ budget, backoff: constantBackoff(), maxAttempts: 3 });
    await outer(() => inner(() => Promise.reject(transient()))).catch(() => undefined);
    expect(budget.log).toEqual(['first sent', 'failed', 'retry?', 'retry sent', 'failed']);
  });

  it('the outer layer retries after the inner succeeded with a value it rejects: the retry is counted, the inner\'s first send is not counted twice', async () => {
    const budget = recording();
    const inner = createRetry({ budget, backoff: constantBackoff() });
    const outer = createRetry({ budget, backoff: constantBackoff(), maxAttempts: 2 });
    let calls = 0;
    await outer(async () => {
      const v = await inner(() => ++calls);
      if (v === 1) throw transient();
      return v;
    });
    expect(budget.log).toEqual(['first sent', 'first ok', 'retry?', 'retry sent', 'first ok']);
  });

  it('different budgets in nested layers each count as before', async () => {
    const a = recording();
    const b = recording();
    await retry(() => retry(() => 'ok', { budget: b }), { budget: a });
    expect([a.log, b.log]).toEqual([
      ['first sent', 'first ok'],
      ['first sent', 'first ok'],
    ]);
  });
});
