import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constantBackoff, createRetry, decorrelatedJitterBackoff, exponentialBackoff, fullJitterBackoff, isInvalidOptionError, type RetryBudget, type RetryPolicy, type Rng, type Verdict } from 'herdless';
import { DEFAULT_BACKOFF, DEFAULT_THROTTLING_BACKOFF, MAX_DELAY_MS, classify, parseRetryPolicy, retryAfter } from 'herdless/core';
import { DO_NOT_RETRY_VERDICT, FATAL, PyRandom, RETRYABLE, RETRYABLE_THROTTLED, decide, describeGiveUp, startRetry, type RetryCommand } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

const fixed = (x: number): Rng => ({ random: () => x });
const half = fixed(0.5);

/** A budget that logs every call and answers allowRetry from a list. */
function fakeBudget(answers: boolean[] = []): RetryBudget & { log: string[] } {
  const log: string[] = [];
  return {
    name: 'fake',
    log,
    onAttempt: (now, isRetry) => void log.push(`attempt@${now}${isRetry ? ' retry' : ''}`),
    onSuccess: (now) => void log.push(`success@${now}`),
    onFailure: (now) => void log.push(`failure@${now}`),
    allowRetry: (now) => {
      log.push(`allow?@${now}`);
      return answers.shift() ?? true;
    },
  };
}

describe('parseRetryPolicy: defaults', () => {
  it('are documented values, frozen', () => {
    const p = parseRetryPolicy(undefined);
    expect(p).toEqual({
      maxAttempts: 3,
      backoff: DEFAULT_BACKOFF,
      throttlingBackoff: DEFAULT_THROTTLING_BACKOFF,
      ignoreHints: false,
      retryable: undefined,
      maxRetryAfterMs: 60_000,
      deadlineMs: Infinity,
      attemptTimeoutMs: Infinity,
      budget: undefined,
    });
    expect(DEFAULT_THROTTLING_BACKOFF.toJSON()).toEqual({ kind: 'full jitter', initialBackoffMs: 500, backoffMultiplier: 2, maxBackoffMs: 10_000 });
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(parseRetryPolicy({ maxAttempts: 5 }))).toBe(true);
    expect(DEFAULT_BACKOFF.toJSON()).toEqual({ kind: 'full jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 10_000 });
  });
});

describe('parseRetryPolicy: validation names the field and the value', () => {
  const cases: { input: unknown; error: string }[] = [
    { input: { maxAttempts: 0 }, error: 'retry: maxAttempts must be ≥ 1, got 0' },
    { input: { maxAttempts: 2.5 }, error: 'retry: maxAttempts must be an integer, got 2.5' },
    { input: { maxAttempts: Infinity }, error: 'retry: maxAttempts must be finite, got Infinity' },
    { input: { maxAttempts: '3' }, error: 'retry: maxAttempts must be a number, got "3"' },
    { input: { backoff: 100 }, error: 'retry: backoff must be a Backoff (e.g. fullJitterBackoff()), got 100' },
    { input: { backoff: {} }, error: 'retry: backoff must be a Backoff' },
    { input: { retryable: true }, error: 'retry: retryable must be a function' },
    { input: { maxRetryAfterMs: -1 }, error: 'retry: maxRetryAfterMs must be ≥ 0, got -1' },
    { input: { maxRetryAfterMs: 2 ** 31 }, error: 'retry: maxRetryAfterMs must be ≤ 2147483647, got 2147483648' },
    { input: { deadlineMs: 0 }, error: 'retry: deadlineMs must be > 0, got 0' },
    { input: { deadlineMs: 2 ** 31 }, error: 'retry: deadlineMs must be ≤ 2147483647' },
    { input: { deadlineMs: Number.NaN }, error: 'retry: deadlineMs must be a number, got NaN' },
    { input: { attemptTimeoutMs: -5 }, error: 'retry: attemptTimeoutMs must be > 0, got -5' },
    { input: { budget: { name: 'x' } }, error: 'retry: budget must be a RetryBudget (onAttempt, onSuccess, onFailure, allowRetry)' },
    { input: 7, error: 'retry: options must be an object, got 7' },
  ];
  it.each(cases)('$input → $error', ({ input, error }) => {
    let thrown: unknown;
    try {
      parseRetryPolicy(input as never);
    } catch (e) {
      thrown = e;
    }
    expect(isInvalidOptionError(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(error);
  });

  it('accepts Infinity as "no deadline" / "no attempt timeout"', () => {
    const p = parseRetryPolicy({ deadlineMs: Infinity, attemptTimeoutMs: Infinity });
    expect([p.deadlineMs, p.attemptTimeoutMs]).toEqual([Infinity, Infinity]);
  });
});

describe('decide(): the step, with fixed values', () => {
  const policy = parseRetryPolicy({ maxAttempts: 3, backoff: exponentialBackoff({ initialBackoffMs: 100 }) });

  it('retries with the backoff, then is exhausted at maxAttempts (the first try counted)', () => {
    let state = startRetry(policy, 0);
    const delays: number[] = [];
    let command: RetryCommand;
    for (;;) {
      command = decide(policy, state, RETRYABLE, 0, half);
      if (command.kind === 'give-up') break;
      delays.push(command.delayMs);
      state = command.next;
    }
    expect(delays).toEqual([100, 200]);
    expect(state.attempt).toBe(3);
    expect(command).toEqual({ kind: 'give-up', reason: 'exhausted' });
    expect(describeGiveUp(policy, command)).toBe('all 3 attempts failed (maxAttempts 3)');
  });

  it('describeGiveUp names a malformed retryAfterMs behind a do-not-retry, and only then', () => {
    const policy = parseRetryPolicy({});
    const dnr = { kind: 'give-up', reason: 'do-not-retry' } as const;
    expect(describeGiveUp(policy, dnr, { retryAfterMs: -3 })).toBe(
      `the failure's retryAfterMs is not a number of ms ≥ 0 (got -3): a malformed hint means "do not retry" (gRFC A6)`,
    );
    expect(describeGiveUp(policy, dnr)).toBe('the failure says not to retry');
    expect(describeGiveUp(policy, dnr, new Error('overloaded'))).toBe('the failure says not to retry');
  });

  it('maxAttempts 1 never retries', () => {
    const one = parseRetryPolicy({ maxAttempts: 1 });
    expect(decide(one, startRetry(one, 0), RETRYABLE, 0, half)).toEqual({ kind: 'give-up', reason: 'exhausted' });
  });

  it('fatal and do-not-retry end the call', () => {
    const s = startRetry(policy, 0);
    expect(decide(policy, s, FATAL, 0, half)).toEqual({ kind: 'give-up', reason: 'fatal' });
    expect(decide(policy, s, DO_NOT_RETRY_VERDICT, 0, half)).toEqual({ kind: 'give-up', reason: 'do-not-retry' });
  });

  it('the default backoff is full jitter 100 ms × 2^(n−1), cap 10 s', () => {
    const p = parseRetryPolicy({ maxAttempts: 20 });
    let state = startRetry(p, 0);
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const c = decide(p, state, RETRYABLE, 0, half);
      if (c.kind !== 'retry') throw new Error('expected a retry');
      delays.push(c.delayMs);
      state = c.next;
    }
    expect(delays).toEqual([50, 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it('a hint replaces the backoff for that wait, exactly (never sooner)', () => {
    const c = decide(policy, startRetry(policy, 0), retryAfter(2500), 0, half);
    expect(c).toEqual({
      kind: 'retry',
      delayMs: 2500,
      delaySource: 'server-hint',
      next: { attempt: 2, previousDelayMs: 0, deadlineAt: Infinity, backoffRestartedAt: 1 },
    });
    const zero = decide(policy, startRetry(policy, 0), retryAfter(0), 0, half);
    expect(zero).toMatchObject({ kind: 'retry', delayMs: 0, delaySource: 'server-hint' });
  });

  it('a hint restarts the backoff from its first step (gRFC A6 pushback): 50 then 100, not 50 then 200', () => {
    const p = parseRetryPolicy({ maxAttempts: 5, backoff: exponentialBackoff({ initialBackoffMs: 100 }) });
    const waits: number[] = [];
    let state = startRetry(p, 0);
    for (const verdict of [retryAfter(50), RETRYABLE, RETRYABLE, retryAfter(2000)]) {
      const c = decide(p, state, verdict, 0, half);
      if (c.kind !== 'retry') throw new Error('expected a retry');
      waits.push(c.delayMs);
      state = c.next;
    }
    expect(waits).toEqual([50, 100, 200, 2000]);
    expect(state).toEqual({ attempt: 5, previousDelayMs: 0, deadlineAt: Infinity, backoffRestartedAt: 4 });
    // Without a hint the state keeps its old shape (no backoffRestartedAt field).
    const plain = decide(p, startRetry(p, 0), RETRYABLE, 0, half);
    expect(plain).toEqual({ kind: 'retry', delayMs: 100, delaySource: 'backoff', next: { attempt: 2, previousDelayMs: 100, deadlineAt: Infinity } });
  });

  it('after a hint, decorrelated jitter starts again from its base', () => {
    const p = parseRetryPolicy({ maxAttempts: 4, backoff: decorrelatedJitterBackoff({ baseMs: 100, maxBackoffMs: 10_000 }) });
    const top = fixed(0.999_999);
    const first = decide(p, startRetry(p, 0), RETRYABLE, 0, top) as Extract<RetryCommand, { kind: 'retry' }>;
    const hinted = decide(p, first.next, retryAfter(10), 0, top) as Extract<RetryCommand, { kind: 'retry' }>;
    const after = decide(p, hinted.next, RETRYABLE, 0, top) as Extract<RetryCommand, { kind: 'retry' }>;
    // uniform(100, 300) at the top of the range, as the very first wait: not uniform(100, 3 × 300).
    expect(after.delayMs).toBeCloseTo(first.delayMs, 6);
    expect(first.delayMs).toBeCloseTo(300, 3);
  });

  it('a hint longer than maxRetryAfterMs ends the call: hint-too-long, no clamp', () => {
    const c = decide(policy, startRetry(policy, 0), retryAfter(60_001), 0, half);
    expect(c).toEqual({ kind: 'give-up', reason: 'hint-too-long', delayMs: 60_001, limitMs: 60_000 });
    expect(describeGiveUp(policy, c as never)).toBe('the server asked to wait 60001 ms, more than maxRetryAfterMs (60000 ms)');
    expect(decide(policy, startRetry(policy, 0), retryAfter(60_000), 0, half)).toMatchObject({ kind: 'retry', delayMs: 60_000 });
  });

  it('deadline: a wait that would cross it is not started; a hint that would is hint-too-long', () => {
    const p = parseRetryPolicy({ maxAttempts: 10, deadlineMs: 1000, backoff: constantBackoff({ delayMs: 300 }) });
    const s = startRetry(p, 500); // deadline at 1500
    expect(s.deadlineAt).toBe(1500);
    expect(decide(p, s, RETRYABLE, 1100, half)).toMatchObject({ kind: 'retry', delayMs: 300 });
    const crossing = decide(p, s, RETRYABLE, 1200, half); // 1200 + 300 = 1500: would end at the deadline
    expect(crossing).toEqual({ kind: 'give-up', reason: 'deadline', delayMs: 300, limitMs: 300 });
    expect(describeGiveUp(p, crossing as never)).toBe('the next wait (300 ms) would cross the deadline (300 ms left)');
    const hinted = decide(p, s, retryAfter(400), 1200, half);
    expect(hinted).toEqual({ kind: 'give-up', reason: 'hint-too-long', delayMs: 400, limitMs: 300 });
    expect(describeGiveUp(p, hinted as never)).toBe('the server asked to wait 400 ms, more than the 300 ms left before the deadline');
    expect(decide(p, s, RETRYABLE, 1500, half)).toEqual({ kind: 'give-up', reason: 'deadline' });
  });

  it('the budget: onFailure for retryable and do-not-retry failures only; allowRetry asked last', () => {
    const budget = fakeBudget([true, false]);
    const p = parseRetryPolicy({ maxAttempts: 3, budget, backoff: constantBackoff({ delayMs: 10 }) });
    let s = startRetry(p, 0);
    expect(decide(p, s, FATAL, 1, half)).toMatchObject({ reason: 'fatal' });
    expect(budget.log).toEqual([]);
    expect(decide(p, s, DO_NOT_RETRY_VERDICT, 2, half)).toMatchObject({ reason: 'do-not-retry' });
    expect(budget.log).toEqual(['failure@2']);
    const c = decide(p, s, RETRYABLE, 3, half);
    expect(c.kind).toBe('retry');
    s = (c as Extract<RetryCommand, { kind: 'retry' }>).next;
    expect(decide(p, s, RETRYABLE, 20, half)).toEqual({ kind: 'give-up', reason: 'budget' });
    expect(describeGiveUp(p, { kind: 'give-up', reason: 'budget' })).toBe('the retry budget "fake" refused the retry');
    // An exhausted call reports its failure but asks for no retry.
    const last = { ...s, attempt: 3 };
    expect(decide(p, last, RETRYABLE, 30, half)).toMatchObject({ reason: 'exhausted' });
    expect(budget.log).toEqual(['failure@2', 'failure@3', 'allow?@3', 'failure@20', 'allow?@20', 'failure@30']);
  });

  it('a custom backoff returning garbage is reported (InvalidOptionError naming delay() and the value); the edges pass', () => {
    const bad = (d: unknown) => parseRetryPolicy({ maxAttempts: 2, backoff: { name: 'bad', maxDelayMs: 0, delay: () => d as number, toJSON: () => ({ kind: 'constant', delayMs: 0 }) } });
    const delayOf = (d: unknown) => (decide(bad(d), startRetry(bad(d), 0), RETRYABLE, 0, half) as { delayMs: number }).delayMs;
    expect([delayOf(0), delayOf(MAX_DELAY_MS)]).toEqual([0, MAX_DELAY_MS]);
    for (const value of [-5, Number.NaN, Infinity, 2 ** 40, '100', undefined]) {
      expect(invalidOption(() => delayOf(value)).message).toMatch(/^retry: backoff\.delay\(\) must return a number of ms in \[0, 2147483647\] \(a bug in a custom Backoff\), got /);
    }
  });

  it('backoff edges: no cap at retry 25 stays ≤ 2^31 − 1; multiplier 100, cap 5 s at retry 200 is 5000', () => {
    const noCap = parseRetryPolicy({ maxAttempts: 1000, backoff: exponentialBackoff({ initialBackoffMs: 100, maxBackoffMs: Infinity }) });
    expect(decide(noCap, { attempt: 25, previousDelayMs: 0, deadlineAt: Infinity }, RETRYABLE, 0, half)).toMatchObject({ delayMs: 1_677_721_600 });
    expect(decide(noCap, { attempt: 26, previousDelayMs: 0, deadlineAt: Infinity }, RETRYABLE, 0, half)).toMatchObject({ delayMs: MAX_DELAY_MS });
    const steep = parseRetryPolicy({ maxAttempts: 1000, backoff: exponentialBackoff({ initialBackoffMs: 100, backoffMultiplier: 100, maxBackoffMs: 5000 }) });
    expect(decide(steep, { attempt: 200, previousDelayMs: 0, deadlineAt: Infinity }, RETRYABLE, 0, half)).toMatchObject({ delayMs: 5000 });
  });
});

describe('decide(): invariants (property)', () => {
  const verdict: fc.Arbitrary<Verdict> = fc.oneof(
    { weight: 6, arbitrary: fc.constant(RETRYABLE) },
    { weight: 1, arbitrary: fc.constant(FATAL) },
    { weight: 1, arbitrary: fc.constant(DO_NOT_RETRY_VERDICT) },
    { weight: 2, arbitrary: fc.double({ min: 0, max: 200_000, noNaN: true }).map(retryAfter) },
  );
  const setup = fc.record({
    maxAttempts: fc.integer({ min: 1, max: 12 }),
    deadlineMs: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 100_000 })),
    initial: fc.integer({ min: 0, max: 5000 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    verdicts: fc.array(verdict, { minLength: 12, maxLength: 12 }),
    attemptMs: fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 12, maxLength: 12 }),
  });

  it('attempts ≤ maxAttempts; waits finite, in [0, cap or hint ≤ maxRetryAfterMs]; a hint is honoured exactly; no wait crosses the deadline', () => {
    fc.assert(
      fc.property(setup, (s) => {
        const policy: RetryPolicy = parseRetryPolicy({
          maxAttempts: s.maxAttempts,
          deadlineMs: s.deadlineMs,
          backoff: fullJitterBackoff({ initialBackoffMs: s.initial, maxBackoffMs: Math.max(s.initial, 10_000) }),
        });
        const rng = new PyRandom(s.seed);
        let now = 1000;
        let state = startRetry(policy, now);
        for (let i = 0; ; i++) {
          now += s.attemptMs[i]!;
          const v = s.verdicts[i]!;
          const c = decide(policy, state, v, now, rng);
          if (c.kind === 'give-up') {
            if (v.kind === 'fatal') expect(c.reason).toBe('fatal');
            else if (v.kind === 'do-not-retry') expect(c.reason).toBe('do-not-retry');
            else if (state.attempt === s.maxAttempts) expect(c.reason).toBe('exhausted');
            else expect(['deadline', 'hint-too-long']).toContain(c.reason);
            break;
          }
          expect(v.kind).toBe('retryable');
          expect(Number.isFinite(c.delayMs)).toBe(true);
          expect(c.delayMs).toBeGreaterThanOrEqual(0);
          if (v.kind === 'retryable' && v.retryAfterMs !== undefined) {
            expect(c.delayMs).toBe(v.retryAfterMs);
            expect(c.delayMs).toBeLessThanOrEqual(policy.maxRetryAfterMs);
          } else {
            expect(c.delayMs).toBeLessThanOrEqual(Math.max(s.initial, 10_000));
          }
          expect(now + c.delayMs).toBeLessThan(state.deadlineAt);
          expect(c.next.attempt).toBe(state.attempt + 1);
          expect(c.next.attempt).toBeLessThanOrEqual(s.maxAttempts);
          state = c.next;
          now += c.delayMs;
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('throttling and ignored hints', () => {
  const rng = fixed(0.05);
  const waits = (policy: RetryPolicy, verdict: Verdict, retries: number): number[] => {
    let state = startRetry(policy, 0);
    const out: number[] = [];
    for (let i = 0; i < retries; i++) {
      const c = decide(policy, state, verdict, 0, rng);
      if (c.kind !== 'retry') throw new Error(`gave up: ${c.reason}`);
      out.push(c.delayMs);
      state = c.next;
    }
    return out;
  };

  it.each([
    ['HTTP 429 (status)', { status: 429 }],
    ['HTTP 429 (statusCode)', { statusCode: 429 }],
    ['HTTP 429 (response.status)', { response: { status: 429 } }],
    ['gRPC RESOURCE_EXHAUSTED by name', { code: 'RESOURCE_EXHAUSTED' }],
    ['gRPC code 8 with details', { code: 8, details: 'quota' }],
  ])('%s without a hint is a throttled verdict (when retryable)', (_name, fields) => {
    const error = Object.assign(new Error('slow down'), fields);
    expect(classify(error, () => true)).toBe(RETRYABLE_THROTTLED);
    // With a hint, the hint decides.
    expect(classify(Object.assign(error, { retryAfterMs: 1500 }), () => true)).toEqual(retryAfter(1500));
  });

  it('a plain code 8 (not gRPC-shaped) and a 503 are not throttling', () => {
    expect(classify(Object.assign(new Error('x'), { code: 8 }), () => true)).toBe(RETRYABLE);
    expect(classify(Object.assign(new Error('x'), { status: 503 }))).toBe(RETRYABLE);
  });

  it('8 retries after throttling with draws of 0.05: 2 275 ms of waits from the 500 ms base (1 135 ms for other failures)', () => {
    const policy = parseRetryPolicy({ maxAttempts: 9 });
    const throttled = waits(policy, RETRYABLE_THROTTLED, 8);
    const other = waits(policy, RETRYABLE, 8);
    expect(throttled).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000].map((v) => v * 0.05));
    expect(throttled.reduce((a, b) => a + b)).toBeCloseTo(2275, 9);
    expect(other.reduce((a, b) => a + b)).toBeCloseTo(1135, 9);
  });

  it('throttlingBackoff is configurable: the same object as backoff treats throttling like any failure', () => {
    const backoff = constantBackoff({ delayMs: 40 });
    expect(waits(parseRetryPolicy({ maxAttempts: 4, backoff, throttlingBackoff: backoff }), RETRYABLE_THROTTLED, 3)).toEqual([40, 40, 40]);
    expect(waits(parseRetryPolicy({ maxAttempts: 4, throttlingBackoff: constantBackoff({ delayMs: 900 }) }), RETRYABLE_THROTTLED, 3)).toEqual([900, 900, 900]);
    // A backoff set without a throttlingBackoff serves throttling too (the caller chose the waits).
    expect(parseRetryPolicy({ backoff }).throttlingBackoff).toBe(backoff);
    expect(waits(parseRetryPolicy({ maxAttempts: 4, backoff }), RETRYABLE_THROTTLED, 3)).toEqual([40, 40, 40]);
    expect(parseRetryPolicy({}).throttlingBackoff).toBe(DEFAULT_THROTTLING_BACKOFF);
    expect(createRetry({ backoff }).policy.throttlingBackoff).toBe(backoff);
    expect(createRetry({}).policy.throttlingBackoff).toBe(DEFAULT_THROTTLING_BACKOFF);
    expect(invalidOption(() => parseRetryPolicy({ throttlingBackoff: 5 as never })).message).toBe(
      'retry: throttlingBackoff must be a Backoff (e.g. fullJitterBackoff()), got 5',
    );
  });

  it('ignoreHints: a hint is not read (the backoff applies), nor is a malformed one; the do-not-retry mark still ends the call', () => {
    const policy = parseRetryPolicy({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 25 }), ignoreHints: true });
    expect(waits(policy, retryAfter(86_400_000), 2)).toEqual([25, 25]);
    const malformed = Object.assign(new Error('x'), { status: 503, retryAfterMs: -1 });
    expect(classify(malformed, undefined, 1, false)).toBe(RETRYABLE);
    expect(classify(malformed)).toBe(DO_NOT_RETRY_VERDICT);
    expect(classify(Object.assign(new Error('x'), { status: 503, retryAfterMs: 5000 }), undefined, 1, false)).toBe(RETRYABLE);
    expect(decide(policy, startRetry(policy, 0), DO_NOT_RETRY_VERDICT, 0, rng)).toMatchObject({ kind: 'give-up', reason: 'do-not-retry' });
    expect(invalidOption(() => parseRetryPolicy({ ignoreHints: 'yes' as never })).message).toBe('retry: ignoreHints must be a boolean, got "yes"');
  });
});
