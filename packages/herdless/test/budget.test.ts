import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { awsRetryQuota, finagleRetryBudget, keyedBudgets, retryRatioBudget, retryThrottlingBudget, type BudgetSpec, type RetryBudget } from 'herdless';
import { budgetFromSpec } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';


describe('retryThrottlingBudget (gRFC A6)', () => {
  it('starts full; a failure takes 1, a success adds tokenRatio; retries while tokens > maxTokens / 2', () => {
    const b = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    expect(b.name).toBe('retry throttling');
    expect(b.tokens).toBe(10);
    const allowed: boolean[] = [];
    const tokens: number[] = [];
    for (let i = 0; i < 6; i++) {
      b.onFailure(0);
      tokens.push(b.tokens);
      allowed.push(b.allowRetry(0));
    }
    expect(tokens).toEqual([9, 8, 7, 6, 5, 4]);
    expect(allowed).toEqual([true, true, true, true, false, false]);
    b.onSuccess(0);
    expect(b.tokens).toBe(4.1);
  });

  it('after 1,000,000 successes the tokens are capped, and the 5th failure in a row throttles', () => {
    const b = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    for (let i = 0; i < 1_000_000; i++) b.onSuccess(i);
    expect(b.tokens).toBe(10);
    let failures = 0;
    for (;;) {
      b.onFailure(0);
      failures++;
      if (!b.allowRetry(0)) break;
    }
    expect(failures).toBe(5);
    expect(b.tokens).toBe(5);
  });

  it('keeps exact thousandths: 50 successes from 0 give exactly 5 tokens (no retry), 51 give 5.1', () => {
    const b = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    for (let i = 0; i < 20; i++) b.onFailure(0);
    expect(b.tokens).toBe(0);
    for (let i = 0; i < 50; i++) b.onSuccess(0);
    expect(b.tokens).toBe(5);
    expect(b.allowRetry(0)).toBe(false);
    b.onSuccess(0);
    expect(b.tokens).toBe(5.1);
    expect(b.allowRetry(0)).toBe(true);
    // Floating-point sums drift: fifty times 0.1 is not 5.
    let float = 0;
    for (let i = 0; i < 50; i++) float += 0.1;
    expect(float).toBe(4.999999999999998);
  });

  it('truncates maxTokens and tokenRatio to 3 decimal places', () => {
    expect(retryThrottlingBudget({ tokenRatio: 0.1239 }).tokenRatio).toBe(0.123);
    expect(retryThrottlingBudget({ tokenRatio: 1.005 }).tokenRatio).toBe(1.005);
    expect(retryThrottlingBudget({ tokenRatio: 1e25 }).tokenRatio).toBe(1e25);
    expect(retryThrottlingBudget({ maxTokens: 10.0009 }).maxTokens).toBe(10);
    expect(retryThrottlingBudget({ maxTokens: 0.001 }).maxTokens).toBe(0.001);
    expect(retryThrottlingBudget().toJSON()).toEqual({ kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 });
  });

  it.each([
    { input: { maxTokens: 0 }, field: 'maxTokens', says: 'must be > 0' },
    { input: { maxTokens: -1 }, field: 'maxTokens', says: 'must be > 0' },
    { input: { maxTokens: 1000.5 }, field: 'maxTokens', says: 'must be ≤ 1000' },
    { input: { maxTokens: Number.NaN }, field: 'maxTokens', says: 'must be a number' },
    { input: { maxTokens: '10' }, field: 'maxTokens', says: 'must be a number' },
    { input: { maxTokens: 0.0009 }, field: 'maxTokens', says: 'must be ≥ 0.001' },
    { input: { tokenRatio: 0 }, field: 'tokenRatio', says: 'must be > 0' },
    { input: { tokenRatio: -0.1 }, field: 'tokenRatio', says: 'must be > 0' },
    { input: { tokenRatio: 0.0004 }, field: 'tokenRatio', says: 'must be ≥ 0.001' },
    { input: { tokenRatio: Infinity }, field: 'tokenRatio', says: 'must be finite' },
    { input: 'fast', field: 'options', says: 'must be an object' },
  ])('rejects $input', ({ input, field, says }) => {
    const r = invalidOption(() => retryThrottlingBudget(input as never));
    expect(r.field).toBe(field);
    expect(r.message).toContain(says);
    expect(r.message).toMatch(/^retryThrottlingBudget: /);
  });

  it('property: tokens stay in [0, maxTokens] and match exact integer arithmetic', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }), // maxTokens in thousandths
        fc.integer({ min: 1, max: 5000 }), // tokenRatio in thousandths
        fc.array(fc.boolean(), { maxLength: 400 }),
        (maxMilli, ratioMilli, outcomes) => {
          const b = retryThrottlingBudget({ maxTokens: maxMilli / 1000, tokenRatio: ratioMilli / 1000 });
          let ref = maxMilli;
          for (const ok of outcomes) {
            if (ok) {
              b.onSuccess(0);
              ref = Math.min(maxMilli, ref + ratioMilli);
            } else {
              b.onFailure(0);
              ref = Math.max(0, ref - 1000);
            }
            expect(b.tokens).toBeGreaterThanOrEqual(0);
            expect(b.tokens).toBeLessThanOrEqual(b.maxTokens);
            expect(b.tokens).toBe(ref / 1000);
            expect(b.allowRetry(0)).toBe(2 * ref > maxMilli);
          }
        },
      ),
    );
  });
});

describe('finagleRetryBudget', () => {
  it('has a reserve of minRetriesPerSec × ttl, then 20% of first tries, expiring after ttl', () => {
    const b = finagleRetryBudget();
    expect(b.balance(0)).toBe(100);
    let granted = 0;
    while (b.allowRetry(0)) granted++;
    expect(granted).toBe(100);
    for (let i = 0; i < 1000; i++) b.onAttempt(1000, false);
    b.onAttempt(1000, true); // retries are withdrawn when granted, not when sent
    expect(b.balance(1000)).toBe(200);
    granted = 0;
    while (b.allowRetry(2000)) granted++;
    expect(granted).toBe(200);
    // 10 s later the withdrawals at t = 0 have expired, the deposits at t = 1000 still count…
    expect(b.balance(10_500)).toBe(100 + 200 - 200);
    // …and past 11 s everything from t ≤ 2000 has gone: the reserve is back.
    expect(b.balance(13_000)).toBe(100);
  });

  it('rejects out-of-range options, naming the field', () => {
    const table = [
      { input: { ttlMs: 999 }, field: 'ttlMs' },
      { input: { ttlMs: 60_001 }, field: 'ttlMs' },
      { input: { minRetriesPerSec: -1 }, field: 'minRetriesPerSec' },
      { input: { percentCanRetry: 1000.1 }, field: 'percentCanRetry' },
      { input: { percentCanRetry: -0.1 }, field: 'percentCanRetry' },
    ];
    for (const { input, field } of table) expect(invalidOption(() => finagleRetryBudget(input)).field).toBe(field);
  });
});

describe('awsRetryQuota', () => {
  it('500 capacity: 100 retries at 5, or 50 after timeouts; refused when short', () => {
    const q = awsRetryQuota();
    let granted = 0;
    for (;;) {
      q.onFailure(0);
      if (!q.allowRetry(0)) break;
      granted++;
    }
    expect(granted).toBe(100);
    expect(q.available).toBe(0);
    const t = awsRetryQuota();
    granted = 0;
    for (;;) {
      t.onFailure(0, true);
      if (!t.allowRetry(0)) break;
      granted++;
    }
    expect(granted).toBe(50);
  });

  it('a first-try success adds 1, a successful retry refunds retryCost, never above capacity', () => {
    const q = awsRetryQuota({ capacity: 20 });
    q.onFailure(0, true);
    q.allowRetry(0);
    q.onFailure(0);
    q.allowRetry(0);
    expect(q.available).toBe(5);
    q.onSuccess(0, true);
    expect(q.available).toBe(10);
    q.onSuccess(0);
    expect(q.available).toBe(11);
    for (let i = 0; i < 100; i++) q.onSuccess(0, true);
    expect(q.available).toBe(20);
    // the timeout flag is per failure: an ordinary failure after a timeout costs retryCost again
    q.onFailure(0, true);
    q.onFailure(0, false);
    q.allowRetry(0);
    expect(q.available).toBe(15);
    expect(invalidOption(() => awsRetryQuota({ retryCost: -5 })).field).toBe('retryCost');
    expect(invalidOption(() => awsRetryQuota({ capacity: Infinity })).field).toBe('capacity');
  });
});

describe('keyedBudgets', () => {
  it('one budget per key, made on first use; shared by later calls', () => {
    const made: string[] = [];
    const keyed = keyedBudgets((key) => {
      made.push(key);
      return retryThrottlingBudget();
    });
    const a = keyed.get('a.example:443');
    a.onFailure(0);
    expect(keyed.get('a.example:443')).toBe(a);
    expect(keyed.get('b.example:443')).not.toBe(a);
    expect(keyed.get('b.example:443').tokens).toBe(10);
    expect(made).toEqual(['a.example:443', 'b.example:443']);
  });

  it('drops the least recently used key past maxKeys; a returning key starts afresh', () => {
    const keyed = keyedBudgets(() => retryThrottlingBudget(), { maxKeys: 2 });
    keyed.get('a').onFailure(0);
    keyed.get('b');
    keyed.get('a'); // a is now the most recent
    keyed.get('c'); // evicts b
    expect([...keyed.keys()]).toEqual(['a', 'c']);
    expect(keyed.has('b')).toBe(false);
    expect(keyed.get('a').tokens).toBe(9);
    keyed.get('b'); // evicts c
    keyed.get('b');
    expect([...keyed.keys()]).toEqual(['a', 'b']);
    keyed.get('d'); // evicts a
    expect(keyed.get('a').tokens).toBe(10);
    expect(keyed.delete('a')).toBe(true);
    expect(keyed.size).toBe(1);
    keyed.clear();
    expect(keyed.size).toBe(0);
  });

  it('keeps at most maxKeys budgets over 100,000 distinct keys', () => {
    const keyed = keyedBudgets(() => retryRatioBudget(), { maxKeys: 64 });
    for (let i = 0; i < 100_000; i++) keyed.get(`host-${i}`).onAttempt(i, false);
    expect(keyed.size).toBe(64);
    expect(keyed.maxKeys).toBe(64);
  });

  it('rejects a missing factory and a bad maxKeys', () => {
    expect(invalidOption(() => keyedBudgets(undefined as never)).field).toBe('factory');
    expect(invalidOption(() => keyedBudgets(() => retryRatioBudget(), { maxKeys: 0 })).field).toBe('maxKeys');
    expect(invalidOption(() => keyedBudgets(() => retryRatioBudget(), { maxKeys: 2.5 })).field).toBe('maxKeys');
  });
});

describe('budgetFromSpec', () => {
  it('round-trips every kind through toJSON', () => {
    const budgets = [
      retryThrottlingBudget({ maxTokens: 20, tokenRatio: 0.5 }),
      retryRatioBudget({ ratio: 0.2, countAt: 'send', buckets: 100 }),
      finagleRetryBudget({ ttlMs: 5000 }),
      awsRetryQuota({ capacity: 100 }),
    ];
    for (const b of budgets) {
      const spec = b.toJSON();
      const again = budgetFromSpec(JSON.parse(JSON.stringify(spec)));
      expect(again.name).toBe(spec.kind);
      expect((again as unknown as { toJSON(): BudgetSpec }).toJSON()).toEqual(spec);
      expect(again).not.toBe(b);
    }
  });

  it.each([
    { input: null, field: 'policy.budget' },
    { input: { kind: 'leaky' }, field: 'policy.budget.kind' },
    { input: { kind: 'retry throttling', maxToken: 10 }, field: 'policy.budget.maxToken' },
    { input: { kind: 'retry throttling', maxTokens: 2000 }, field: 'policy.budget.maxTokens' },
    { input: { kind: 'retry ratio', countAt: 'later' }, field: 'policy.budget.countAt' },
  ])('rejects $input naming $field', ({ input, field }) => {
    expect(invalidOption(() => budgetFromSpec(input, 'policy.budget')).field).toBe(field);
  });
});

/** Counts the elements an object holds, recursively: own keys, array and typed-array slots, map entries. */
function footprint(root: unknown): number {
  const seen = new Set<unknown>();
  const walk = (v: unknown): number => {
    if (typeof v !== 'object' || v === null || seen.has(v)) return 0;
    seen.add(v);
    if (ArrayBuffer.isView(v)) return (v as Float64Array).length;
    if (v instanceof Map) {
      let n = v.size;
      for (const x of v.values()) n += walk(x);
      return n;
    }
    let n = 0;
    for (const x of Object.values(v)) n += 1 + walk(x);
    return n;
  };
  return walk(root);
}

describe('memory does not grow with the call count', () => {
  const kinds: [string, () => RetryBudget][] = [
    ['retry throttling', () => retryThrottlingBudget()],
    ['retry ratio', () => retryRatioBudget({ buckets: 100 })],
    ['retry ratio (send)', () => retryRatioBudget({ countAt: 'send' })],
    ['finagle', () => finagleRetryBudget()],
    ['aws retry quota', () => awsRetryQuota()],
  ];
  it.each(kinds)('%s: the same footprint after 10 and after 1,000,000 calls', (_name, make) => {
    const b = make();
    const drive = (from: number, to: number): void => {
      for (let i = from; i < to; i++) {
        const now = i * 0.37; // about 2,700 calls per ms-window bucket: dense traffic
        b.onAttempt(now, i % 3 === 0);
        if (i % 2 === 0) b.onSuccess(now, false);
        else {
          b.onFailure(now, false);
          b.allowRetry(now);
        }
      }
    };
    drive(0, 10);
    const small = footprint(b);
    drive(10, 1_000_000);
    expect(footprint(b)).toBe(small);
    expect(small).toBeLessThan(300);
  });
});
