import { describe, expect, it } from 'vitest';
import { BUDGET_POLICIES, budgetRow, budgetScenario, budgetTrace, type BudgetRow } from 'herdless/sim';

const seeds = [...Array(20).keys()];
const rows = new Map<string, BudgetRow>(BUDGET_POLICIES.map((p) => [p, budgetRow(budgetScenario(p), seeds)]));
const row = (p: (typeof BUDGET_POLICIES)[number]) => rows.get(p)!;

describe('budget experiment (seeds 0–19): the article’s figures within seed noise', () => {
  it('no retry: load 1.00x, no crash, normal at 15 s', () => {
    expect(row('no retry').load).toEqual({ mean: 1, min: 1, max: 1 });
    expect(row('no retry').crashesAfter.mean).toBe(0);
    expect(row('no retry').backToNormal).toEqual({ mean: 15, min: 15, max: 15 });
  });

  it('4 attempts, no budget: ~3.89x, 25 crashes after the outage, never back to normal', () => {
    const r = row('4 attempts');
    expect(r.load.min).toBeGreaterThanOrEqual(3.86);
    expect(r.load.max).toBeLessThanOrEqual(3.91);
    expect(r.crashesAfter).toEqual({ mean: 25, min: 25, max: 25 });
    expect(r.backToNormal).toEqual({ mean: 40, min: 40, max: 40 });
  });

  it('gRPC throttling: ≤ 1.02x, no crash, normal at 15 s', () => {
    const r = row('4 attempts + gRPC throttling');
    expect(r.load.max).toBeLessThanOrEqual(1.02);
    expect(r.crashesAfter.max).toBe(0);
    expect(r.backToNormal).toEqual({ mean: 15, min: 15, max: 15 });
  });

  it('10% ratio counted at send (the article’s lab): 1.23–1.27x and retries ~20% of arrivals', () => {
    const r = row('4 attempts + 10% retry ratio');
    expect(r.load.min).toBeGreaterThanOrEqual(1.23);
    expect(r.load.max).toBeLessThanOrEqual(1.27);
    expect(r.crashesAfter.max).toBe(0);
    expect(r.backToNormal.mean).toBe(15);
    expect(r.retryShare.min).toBeGreaterThanOrEqual(0.18);
    expect(r.retryShare.max).toBeLessThanOrEqual(0.22);
  });

  it('10% ratio counted at decision (ours): retries ≤ 11% of arrivals', () => {
    const r = row('4 attempts + 10% retry ratio (at decision)');
    expect(r.retryShare.max).toBeLessThanOrEqual(0.11);
    expect(r.load.max).toBeLessThan(row('4 attempts + 10% retry ratio').load.min);
    expect(r.backToNormal.mean).toBe(15);
  });

  it('Finagle and AWS budgets also keep the server up', () => {
    for (const p of ['4 attempts + Finagle budget', '4 attempts + AWS retry quota'] as const) {
      expect(row(p).crashesAfter.max).toBe(0);
      expect(row(p).backToNormal.mean).toBe(15);
    }
  });
});

describe('budget trace (seed 0)', () => {
  const trace = budgetTrace(0, ['no retry', '4 attempts']);
  it('client 0 starts full, is throttled during the outage and recovers slowly after it', () => {
    expect(trace.tokens[0]).toBeLessThanOrEqual(10);
    const during = Array.from(trace.tokens.slice(600, 1500));
    expect(Math.max(...during)).toBeLessThanOrEqual(5);
    // 0.1 per success: back above maxTokens / 2 only seconds after the outage ends.
    expect(trace.tokens[1500]).toBeLessThanOrEqual(5);
    expect(Math.max(...Array.from(trace.tokens.slice(3000)))).toBeGreaterThan(5);
  });
  it('per-second arrivals: equal to new requests without retries, ~4× with 4 attempts during the outage', () => {
    const [none, four] = trace.perSecond;
    expect(none!.arrivals).toEqual(none!.fresh);
    expect(four!.arrivals[10]! / four!.fresh[10]!).toBeGreaterThan(3.5);
  });
});
