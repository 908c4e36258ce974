// The interceptors' shared per-call core, in virtual time (ManualClock, a fixed Rng): the gRFC A6
// table without a server — the real-server tests repeat it through grpc-js and Connect.
import { ManualClock, retryThrottlingBudget, type Rng } from 'herdless';
import { describe, expect, it } from 'vitest';
import { GrpcCallRetry, grpcVerdict } from '../src/grpc/call-retry.js';
import { grpcRetryPlanner } from '../src/grpc/interceptor-options.js';
import { a6ServiceConfig } from './support/grpc-server.js';

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;
const mid: Rng = { random: () => 0.5 };
const PATH = '/test.Flaky/Unary';

function setup(options: Record<string, unknown> = {}) {
  const clock = new ManualClock();
  const planner = grpcRetryPlanner('test', { serviceConfig: a6ServiceConfig(), clock, random: mid, ...options });
  return { clock, planner, call: (remainingMs = Infinity, server = 'virtual.test:1') => new GrpcCallRetry(planner, planner.planFor(PATH, server), PATH, remainingMs) };
}

describe('GrpcCallRetry (gRFC A6, virtual time)', () => {
  it("A6's example: waits 100, 200, 400 ms (the middle of ±20%), then exhausted at 4 attempts", () => {
    const { call } = setup();
    const c = call();
    const commands = [1, 2, 3, 4].map(() => c.failed(UNAVAILABLE, undefined));
    expect(commands.map((k) => (k.kind === 'retry' ? k.delayMs : k.reason))).toEqual([100, 200, 400, 'exhausted']);
  });

  it('pushback 2000 replaces the wait, then the backoff restarts: 2000, 100, 200', () => {
    const { call } = setup();
    const c = call();
    const waits = [c.failed(UNAVAILABLE, ['2000']), c.failed(UNAVAILABLE, undefined), c.failed(UNAVAILABLE, undefined)];
    expect(waits.map((k) => (k.kind === 'retry' ? [k.delayMs, k.delaySource] : k.reason))).toEqual([
      [2000, 'server-hint'],
      [100, 'backoff'],
      [200, 'backoff'],
    ]);
  });

  it('a pushback above maxRetryAfterMs ends the call: hint-too-long', () => {
    const { call } = setup({ maxRetryAfterMs: 1000 });
    expect(call().failed(UNAVAILABLE, '2000')).toEqual({ kind: 'give-up', reason: 'hint-too-long', delayMs: 2000, limitMs: 1000 });
    expect(call().failed(UNAVAILABLE, '99999999999999')).toMatchObject({ kind: 'give-up', reason: 'hint-too-long' });
  });

  it('the deadline: a wait that would end at or after it is not started', async () => {
    const { call, clock } = setup();
    const c = call(250);
    expect(c.failed(UNAVAILABLE, undefined)).toMatchObject({ kind: 'retry', delayMs: 100 });
    await clock.advance(100);
    expect(c.failed(UNAVAILABLE, undefined)).toMatchObject({ kind: 'give-up', reason: 'deadline', delayMs: 200, limitMs: 150 });
  });

  it('verdicts: a non-retryable status is fatal and leaves the throttle alone; pushback on it changes nothing', () => {
    const { planner } = setup();
    const plan = planner.planFor(PATH, undefined);
    expect(grpcVerdict(plan, INVALID_ARGUMENT, '10')).toEqual({ kind: 'fatal' });
    expect(grpcVerdict(plan, UNAVAILABLE, '-1')).toEqual({ kind: 'do-not-retry' });
    expect(grpcVerdict(plan, UNAVAILABLE, '10')).toEqual({ kind: 'retryable', retryAfterMs: 10 });
    expect(grpcVerdict(plan, UNAVAILABLE, undefined)).toEqual({ kind: 'retryable' });
  });

  it('throttling: a do-not-retry pushback still costs a token; successes refill', () => {
    const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    const { call } = setup({ serviceConfig: undefined, maxAttempts: 4, retryableStatusCodes: ['UNAVAILABLE'], budget });
    expect(call().failed(UNAVAILABLE, 'abc')).toEqual({ kind: 'give-up', reason: 'do-not-retry' });
    expect(budget.tokens).toBe(9);
    expect(call().failed(INVALID_ARGUMENT, undefined)).toEqual({ kind: 'give-up', reason: 'fatal' });
    expect(budget.tokens).toBe(9);
    const ok = call();
    ok.started();
    ok.succeeded();
    expect(budget.tokens).toBe(9.1);
  });

  it('a method the service config gives no retryPolicy: one attempt', () => {
    const { planner } = setup();
    const plan = planner.planFor('/test.Other/Call', undefined);
    expect(plan.policy.maxAttempts).toBe(1);
    expect(new GrpcCallRetry(planner, plan, '/test.Other/Call', Infinity).failed(UNAVAILABLE, undefined)).toMatchObject({ kind: 'give-up', reason: 'fatal' });
  });
});
