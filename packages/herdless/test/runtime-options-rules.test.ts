// The runtime's options at their edges, word for word: the `name` label's bounds, the per-call
// options of a retrier and a hedger, hedge()'s own options, and what createRetry() exposes as its
// policy.
import { describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, createHedger, createRetry, hedge, retry, retryRatioBudget, type TelemetryEvent } from 'herdless';
import { HEDGE_LOAD_FAILURE } from '../src/runtime/hedge.js';
import { invalidOption } from './support/invalid-option.js';

const NAME_RULE = 'must be a string of 1 to 128 characters without control characters';

describe('the name option', () => {
  it.each([
    ['one character', 'a'],
    ['128 characters', 'x'.repeat(128)],
    ['spaces and non-ASCII', 'payments API — eu-west'],
    ['U+0080 (not a C0 control, nor DEL)', 'a\u0080b'],
  ])('accepts %s, and reports it on every event', async (_name, name) => {
    const events: TelemetryEvent[] = [];
    await retry(() => 1, { name, telemetry: { onEvent: (e) => void events.push(e) } });
    expect(events.map((e) => (e as { call: { name?: string } }).call.name)).toEqual([name, name]);
  });

  it.each([
    ['the empty string', ''],
    ['129 characters', 'x'.repeat(129)],
    ['NUL', 'a\u0000b'],
    ['a newline', 'a\nb'],
    ['U+001F', 'a\u001fb'],
    ['DEL', 'a\u007fb'],
    ['a number', 5],
    ['null', null],
  ])('refuses %s, naming the field', (_name, name) => {
    const error = invalidOption(() => retry(() => 1, { name: name as never }));
    expect(error.field).toBe('name');
    expect(error.message).toContain(`retry: name ${NAME_RULE}, got `);
  });

  it('without a name, the call on the telemetry has none', async () => {
    const events: TelemetryEvent[] = [];
    await retry(() => 1, { telemetry: { onEvent: (e) => void events.push(e) } });
    expect(events[0]).toMatchObject({ call: { layer: 'retry' } });
    expect('name' in (events[0] as { call: object }).call).toBe(false);
  });
});

describe("a retrier's per-call options", () => {
  const r = createRetry({ backoff: constantBackoff({ delayMs: 0 }) });

  it.each([
    ['null', null, 'null'],
    ['an array', [], 'an array of length 0'],
    ['a string', 'signal', '"signal"'],
  ])('refuses %s as the per-call options', (_name, callOptions, shown) => {
    const error = invalidOption(() => r(() => 1, callOptions as never));
    expect(error.message).toBe(`createRetry: callOptions must be an object: the per-call options ({ signal }), got ${shown}`);
  });

  it('an option set to undefined is no option; { signal: undefined } is no signal', async () => {
    await expect(r(() => 'ok', { maxAttempts: undefined } as never)).resolves.toBe('ok');
    await expect(r(() => 'ok', { signal: undefined })).resolves.toBe('ok');
  });

  it('a per-call signal that is not an AbortSignal names createRetry', () => {
    expect(invalidOption(() => r(() => 1, { signal: 5 as never })).message).toBe('createRetry: signal must be an AbortSignal, got 5');
  });

  it('the policy it exposes is frozen and holds the options as read', () => {
    const budget = retryRatioBudget({ ratio: 0.1 });
    const backoff = constantBackoff({ delayMs: 7 });
    const retrier = createRetry({ maxAttempts: 4, backoff, deadlineMs: 900, attemptTimeoutMs: 300, maxRetryAfterMs: 5000, ignoreHints: true, budget });
    expect(Object.isFrozen(retrier.policy)).toBe(true);
    expect(retrier.policy).toMatchObject({ maxAttempts: 4, backoff, deadlineMs: 900, attemptTimeoutMs: 300, maxRetryAfterMs: 5000, ignoreHints: true, budget });
    expect(Object.keys(retrier)).toEqual(['policy']);
  });

  it('a retrier made with telemetry runs its first attempt in the loop: the events are there', async () => {
    const events: string[] = [];
    const traced = createRetry({ telemetry: { onEvent: (e) => void events.push(e.type) } });
    await traced(() => 1);
    expect(events).toEqual(['attempt-start', 'attempt-end']);
  });
});

describe("a hedger's per-call options and hedge()'s own", () => {
  const clock = new ManualClock(0);
  const hedged = createHedger({ delayMs: 10, clock });

  it.each([
    ['null', null, 'null'],
    ['a number', 5, '5'],
  ])('refuses %s as the per-call options', (_name, callOptions, shown) => {
    expect(invalidOption(() => hedged(() => 1, callOptions as never)).message).toBe(
      `createHedger: callOptions must be an object: the per-call options ({ signal }), got ${shown}`,
    );
  });

  it('a per-call option other than signal is refused; one set to undefined is no option', async () => {
    expect(invalidOption(() => hedged(() => 1, { delayMs: 5 } as never)).message).toBe('createHedger: delayMs is not a per-call option (only signal is), got 5');
    await expect(hedged(() => 'ok', { delayMs: undefined } as never)).resolves.toBe('ok');
    await expect(hedged(() => 'ok', {})).resolves.toBe('ok');
  });

  it('refuses an operation that is not a function, and a signal in createHedger()', () => {
    expect(invalidOption(() => hedged('op' as never)).message).toBe('createHedger: operation must be a function, got "op"');
    expect(invalidOption(() => hedge('op' as never, { delayMs: 5 })).message).toBe('hedge: operation must be a function, got "op"');
    expect(invalidOption(() => createHedger({ delayMs: 5, signal: new AbortController().signal } as never)).message).toMatch(/^createHedger: signal is a per-call option: pass it with each call, got /);
    expect(() => createHedger({ delayMs: 5, signal: undefined } as never)).not.toThrow();
  });

  it.each([
    ['unref not a boolean', { unref: 1 }, 'hedge: unref must be a boolean, got 1'],
    ['onHedge not a function', { onHedge: 'log' }, 'hedge: onHedge must be a function, got "log"'],
    ['onGiveUp not a function', { onGiveUp: 1 }, 'hedge: onGiveUp must be a function, got 1'],
    ['onHookError not a function', { onHookError: {} }, 'hedge: onHookError must be a function, got an object (Object)'],
    ['options that are an array', [], 'hedge: options must be an object, got an array of length 0'],
    ['options that are null', null, 'hedge: options must be an object, got null'],
  ])('refuses %s', (_name, options, message) => {
    const o = Array.isArray(options) || options === null ? options : { delayMs: 5, ...options };
    expect(invalidOption(() => hedge(() => 1, o as never)).message).toBe(message);
  });

  it('an option set to undefined keeps its default', async () => {
    const c = new ManualClock(0);
    await expect(hedge(() => 'ok', { delayMs: 5, clock: c, unref: undefined, random: undefined, onHedge: undefined, signal: undefined })).resolves.toBe('ok');
    expect(c.pending).toBe(0);
  });

  it("a load-failure test that is not a function is left out (it is the protocol layer's, not an option)", async () => {
    const c = new ManualClock(0);
    await expect(hedge(() => 'ok', { delayMs: 5, clock: c, [HEDGE_LOAD_FAILURE]: 'no' } as never)).resolves.toBe('ok');
  });

  it("the hedger's policy is frozen", () => {
    expect(Object.isFrozen(createHedger({ delayMs: 5 }).policy)).toBe(true);
    expect(Object.keys(createHedger({ delayMs: 5 }))).toEqual(['policy']);
  });
});

describe("retry()'s options object", () => {
  it.each([
    ['null', null, 'null'],
    ['an array', [], 'an array of length 0'],
    ['a string', 'fast', '"fast"'],
  ])('refuses %s, before anything runs', (_name, options, shown) => {
    let calls = 0;
    expect(invalidOption(() => retry(() => calls++, options as never)).message).toBe(`retry: options must be an object, got ${shown}`);
    expect(invalidOption(() => createRetry(options as never)).message).toBe(`createRetry: options must be an object, got ${shown}`);
    expect(calls).toBe(0);
  });

  it("unref is off by default: a retry's timers are ref'd", async () => {
    const clock = new ManualClock(0);
    let unrefs = 0;
    const handles = {
      now: () => clock.now(),
      setTimeout: (fn: () => void, ms: number) => ({ id: clock.setTimeout(fn, ms), unref: () => void unrefs++ }),
      clearTimeout: (h: unknown) => clock.clearTimeout((h as { id: number }).id),
    };
    const call = retry(() => Promise.reject(Object.assign(new Error('x'), { status: 503 })), { clock: handles, attemptTimeoutMs: 100, backoff: constantBackoff({ delayMs: 5 }) }).catch(() => undefined);
    await clock.runAll();
    await call;
    expect(unrefs).toBe(0);
  });
});

describe("hedge()'s signal and clock options", () => {
  it('a signal that is not an AbortSignal names hedge() or createHedger()', () => {
    expect(invalidOption(() => hedge(() => 1, { delayMs: 5, signal: 5 as never })).message).toBe('hedge: signal must be an AbortSignal, got 5');
    expect(invalidOption(() => createHedger({ delayMs: 5 })(() => 1, { signal: 5 as never })).message).toBe('createHedger: signal must be an AbortSignal, got 5');
  });

  it('clock: undefined is the system clock; a clock without the Scheduler methods is refused', async () => {
    await expect(hedge(() => 'ok', { delayMs: 5, clock: undefined })).resolves.toBe('ok');
    expect(invalidOption(() => hedge(() => 1, { delayMs: 5, clock: { now: () => 0 } as never })).message).toBe(
      'hedge: clock must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock, got an object (Object)',
    );
  });
});
