// What the runtime tells the ports it is given — a throttle, a budget that confirms asynchronously,
// a telemetry observer, a breaker's classifiers — and when, stated with recording fakes in virtual
// time: the clock reading a throttle sees, whether an attempt is a retry, which answers count as
// accepted, budgets kept outside the process (herdless/redis) for retry() and hedge(), and the
// breaker's refusals and errors without an observer.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AttemptTimeoutError,
  CircuitOpenError,
  ManualClock,
  circuitBreaker,
  consecutiveFailures,
  constantBackoff,
  createHedger,
  hedge,
  retry,
  type AttemptThrottle,
  type RetryBudget,
  type Scheduler,
  type TelemetryEvent,
} from 'herdless';
import { HEDGE_POLICY_KEYS } from '../src/core/hedge/policy.js';
import { HEDGE_LOAD_FAILURE, HEDGE_RUNTIME_KEYS } from '../src/runtime/hedge.js';
import { readRetryOptions } from '../src/runtime/retry-options.js';
import { retryWithSettings } from '../src/runtime/retry.js';
import { invalidOption } from './support/invalid-option.js';
import { settle } from './support/settle.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const unavailable = (label = 'unavailable'): Error => Object.assign(new Error(label), { status: 503 });
const notFound = (): Error => Object.assign(new Error('not found'), { status: 404 });

/** A throttle that admits everything and logs what it is asked and told. */
function recordingThrottle(admit: (isRetry: boolean) => boolean = () => true) {
  const log: string[] = [];
  const throttle: AttemptThrottle = {
    name: 'recording',
    admit: (now, _rng, isRetry) => (log.push(`admit@${now}${isRetry ? ' retry' : ''}`), admit(isRetry)),
    onAnswer: (now, accepted) => void log.push(`answer@${now} ${accepted}`),
  };
  return { throttle, log };
}

/** A budget that allows every retry, confirms with `confirm`, and logs what it is told. */
function confirmingBudget(confirm: (now: number) => boolean | PromiseLike<boolean>) {
  const log: string[] = [];
  const budget: RetryBudget = {
    name: 'remote',
    onAttempt: (now, isRetry) => void log.push(`attempt@${now}${isRetry ? '+' : ''}`),
    onSuccess: (now, isRetry) => void log.push(`success@${now}${isRetry ? '+' : ''}`),
    onFailure: (now, isTimeout) => void log.push(`failure@${now}${isTimeout ? ' timeout' : ''}`),
    allowRetry: () => true,
    confirmRetry: (now) => (log.push(`confirm@${now}`), confirm(now)),
  };
  return { budget, log };
}

describe('retry() and a throttle', () => {
  it('on a plain call, the throttle is asked at the clock’s time, the first try not as a retry and the next as one', async () => {
    const clock = new ManualClock(7000);
    const { throttle, log } = recordingThrottle();
    let calls = 0;
    const call = retry(() => (++calls === 1 ? Promise.reject(unavailable()) : Promise.resolve('ok')), { clock, throttle, backoff: constantBackoff({ delayMs: 10 }) });
    expect((await settle(clock, call)).value).toBe('ok');
    expect(log).toEqual(['admit@7000', 'answer@7000 false', 'admit@7010 retry', 'answer@7010 true']);
  });

  it('a 404 is the backend answering (accepted); a 503 to a POST it may not retry is still a refusal (rejected)', async () => {
    const clock = new ManualClock(0);
    const { throttle, log } = recordingThrottle();
    await retry(() => Promise.reject(notFound()), { clock, throttle }).catch(() => undefined);
    await retry(() => Promise.reject(unavailable()), { clock, throttle, retryable: () => false }).catch(() => undefined);
    expect(log).toEqual(['admit@0', 'answer@0 true', 'admit@0', 'answer@0 false']);
  });

  it('an open circuit says nothing about the backend: the throttle is not told', async () => {
    const clock = new ManualClock(0);
    const { throttle, log } = recordingThrottle();
    await retry(() => Promise.reject(new CircuitOpenError('open', 1000)), { clock, throttle }).catch(() => undefined);
    expect(log).toEqual(['admit@0']);
  });
});

describe('retry() and a budget that confirms asynchronously', () => {
  it('a retry waits for the answer: true retries, false gives up (budget) after that attempt', async () => {
    for (const allowed of [true, false]) {
      const clock = new ManualClock(0);
      const { budget, log } = confirmingBudget(() => Promise.resolve(allowed));
      let calls = 0;
      const call = retry(() => (++calls === 1 ? Promise.reject(unavailable()) : Promise.resolve('ok')), { clock, budget, backoff: constantBackoff({ delayMs: 10 }) });
      const out = await settle(clock, call);
      if (allowed) {
        expect(out.value).toBe('ok');
        expect(log).toEqual(['attempt@0', 'failure@0', 'confirm@0', 'attempt@10+', 'success@10+']);
      } else {
        expect(out.error).toMatchObject({ reason: 'budget', attempts: 1 });
        expect((out.error as Error).message).toContain('the retry budget "remote" refused');
        expect(log).toEqual(['attempt@0', 'failure@0', 'confirm@0']);
      }
    }
  });

  it('a synchronous true is taken at once', async () => {
    const clock = new ManualClock(0);
    const { budget, log } = confirmingBudget(() => true);
    let calls = 0;
    const call = retry(() => (++calls === 1 ? Promise.reject(unavailable()) : Promise.resolve('ok')), { clock, budget, backoff: constantBackoff({ delayMs: 0 }) });
    expect((await settle(clock, call)).value).toBe('ok');
    expect(log).toEqual(['attempt@0', 'failure@0', 'confirm@0', 'attempt@0+', 'success@0+']);
  });
});

describe('retry(): the deadline and the attempt loop, at their edges', () => {
  it('a plain call on a clock far from 0 gets its full deadline', async () => {
    const clock = new ManualClock(5000);
    let calls = 0;
    const call = retry(() => (++calls < 3 ? Promise.reject(unavailable()) : Promise.resolve('ok')), { clock, deadlineMs: 1000, backoff: constantBackoff({ delayMs: 10 }) });
    expect(await settle(clock, call)).toEqual({ value: 'ok', at: 5020 });
  });

  it('the deadline timer firing a hair early (the clock reads 1 ms short) still ends the call: no attempt in the last ms', async () => {
    const clock = new ManualClock(0);
    const early: Scheduler = {
      now: () => clock.now(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms - 1),
      clearTimeout: (h) => clock.clearTimeout(h),
    };
    let calls = 0;
    const call = retry(() => (calls++, new Promise(() => undefined)), { clock: early, deadlineMs: 100, backoff: constantBackoff({ delayMs: 0 }), maxAttempts: 5 });
    const out = await settle(clock, call);
    expect(calls).toBe(1);
    expect(out.error).toMatchObject({ reason: 'deadline', attempts: 1 });
  });

  it('a hook that aborts the call: it ends with the reason, the give-up counting the attempts made', async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    const giveUps: unknown[] = [];
    const call = retry(() => Promise.reject(unavailable()), {
      clock,
      signal: controller.signal,
      backoff: constantBackoff({ delayMs: 0 }),
      onRetry: ({ attempt }) => {
        if (attempt === 2) controller.abort('enough');
      },
      onGiveUp: (e) => void giveUps.push(e),
    });
    const out = await settle(clock, call);
    expect(out.error).toBe('enough');
    expect(giveUps).toMatchObject([{ reason: 'aborted', attempts: 2, error: 'enough' }]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('attempts 1 to 15 with zero waits run without yielding to the event loop; the 16th waits for one turn', async () => {
    let calls = 0;
    let turned = false;
    setImmediate(() => (turned = true));
    const seen: boolean[] = [];
    await retry(
      () => {
        seen.push(turned);
        return ++calls < 17 ? Promise.reject(unavailable()) : Promise.resolve('ok');
      },
      { maxAttempts: 20, backoff: constantBackoff({ delayMs: 0 }) },
    );
    expect(seen.slice(0, 15)).toEqual(new Array(15).fill(false));
    expect(seen[15]).toBe(true);
  });
});

describe('retry(): telemetry outcomes', () => {
  it("on a plain call, an inner layer's AttemptTimeoutError is this attempt's failure; with a deadline, a rejection is a failure", async () => {
    const events: TelemetryEvent[] = [];
    const telemetry = { onEvent: (e: TelemetryEvent) => void events.push(e) };
    await retry(() => Promise.reject(new AttemptTimeoutError(1, 50, false)), { telemetry, maxAttempts: 1 }).catch(() => undefined);
    const clock = new ManualClock(0);
    await retry(() => Promise.reject(unavailable()), { clock, telemetry, maxAttempts: 1, deadlineMs: 1000 }).catch(() => undefined);
    expect(events.filter((e) => e.type === 'attempt-end').map((e) => e.outcome)).toEqual(['failure', 'failure']);
  });

  it('attempt-end carries the error on a failure, none on a success', async () => {
    const events: TelemetryEvent[] = [];
    let calls = 0;
    const failure = unavailable();
    await retry(() => (++calls === 1 ? Promise.reject(failure) : 'ok'), { telemetry: { onEvent: (e) => void events.push(e) }, backoff: constantBackoff({ delayMs: 0 }) });
    const ends = events.filter((e) => e.type === 'attempt-end');
    expect(ends[0]).toMatchObject({ outcome: 'failure', error: failure });
    expect('error' in ends[1]!).toBe(false);
    expect('status' in ends[0]!).toBe(false);
  });

  it.each([
    ['null', null, 'null'],
    ['an object without onEvent', {}, 'an object (Object)'],
    ['a function', () => undefined, 'a function'],
    ['a function with an onEvent method', Object.assign(() => undefined, { onEvent: () => undefined }), 'a function'],
  ])('refuses a telemetry option that is %s', (_name, telemetry, shown) => {
    expect(invalidOption(() => retry(() => 1, { telemetry: telemetry as never })).message).toBe(
      `retry: telemetry must be an observer object with an onEvent(event) method, got ${shown}`,
    );
  });
});

describe('retryWithSettings (the HTTP adapters’ entry)', () => {
  it('makes a late signal only once the first attempt has failed, and the retries run under it', async () => {
    for (const sync of [false, true]) {
      const clock = new ManualClock(0);
      const settings = readRetryOptions({ clock, backoff: constantBackoff({ delayMs: 10 }) }, 'withRetry', false);
      const controller = new AbortController();
      let made = 0;
      const late = (): AbortSignal => (made++, controller.signal);
      let calls = 0;
      const call = retryWithSettings(
        () => {
          calls++;
          if (sync) throw unavailable();
          return Promise.reject(unavailable());
        },
        settings,
        undefined,
        late,
      );
      await clock.advance(0);
      expect(made).toBe(1);
      controller.abort('client left');
      expect((await settle(clock, call)).error).toBe('client left');
      expect(calls).toBe(1);
    }
  });

  it('a success makes no signal; with a signal given, the call runs under it from the start', async () => {
    const clock = new ManualClock(0);
    const settings = readRetryOptions({ clock }, 'withRetry', false);
    let made = 0;
    expect(await retryWithSettings(() => 'ok', settings, undefined, () => (made++, undefined))).toBe('ok');
    expect(made).toBe(0);
    const controller = new AbortController();
    controller.abort('gone');
    await expect(retryWithSettings(() => 'ok', settings, controller.signal)).rejects.toBe('gone');
  });
});

describe('hedge() and its ports', () => {
  it('an asynchronous budget confirms each hedge: yes sends it, no stops hedging and the call gives up once nothing is in flight', async () => {
    for (const allowed of [true, false]) {
      const clock = new ManualClock(0);
      const { budget, log } = confirmingBudget(() => Promise.resolve(allowed));
      const op = ({ attempt }: { attempt: number }): Promise<string> =>
        new Promise((resolve, reject) => clock.setTimeout(() => (attempt === 1 ? reject(unavailable('slow')) : resolve(`r${attempt}`)), attempt === 1 ? 30 : 5));
      const out = await settle(clock, hedge(op, { clock, delayMs: 10, maxAttempts: 2, budget }));
      if (allowed) {
        expect(out).toEqual({ value: 'r2', at: 15 });
        expect(log).toEqual(['attempt@0', 'confirm@10', 'attempt@10+', 'success@15+']);
      } else {
        expect(out.error).toMatchObject({ reason: 'budget', attempts: 1 });
        expect(log).toEqual(['attempt@0', 'confirm@10', 'failure@30']);
      }
    }
  });

  it('while a confirmation is pending no second hedge is asked for; an answer after the call ended sends nothing', async () => {
    const clock = new ManualClock(0);
    let answer!: (ok: boolean) => void;
    const { budget, log } = confirmingBudget(() => new Promise<boolean>((r) => (answer = r)));
    let sent = 0;
    const op = (): Promise<string> => (sent++, new Promise((resolve) => clock.setTimeout(() => resolve('r1'), 50)));
    const call = hedge(op, { clock, delayMs: 10, maxAttempts: 3, budget });
    await clock.advance(30);
    expect(log).toEqual(['attempt@0', 'confirm@10']);
    await clock.advance(20);
    expect(await call).toBe('r1');
    answer(true);
    await clock.advance(100);
    expect(sent).toBe(1);
  });

  it('a confirmation that rejects ends the call with its reason', async () => {
    const clock = new ManualClock(0);
    const boom = new Error('redis down');
    const { budget } = confirmingBudget(() => Promise.reject(boom));
    const out = await settle(clock, hedge(() => new Promise(() => undefined), { clock, delayMs: 10, maxAttempts: 2, budget }));
    expect(out).toEqual({ error: boom, at: 10 });
  });

  it('a timed-out attempt is reported to the budget as a timeout; another failure not', async () => {
    const clock = new ManualClock(0);
    const { budget, log } = confirmingBudget(() => true);
    const failures = [new AttemptTimeoutError(1, 5, false), unavailable()];
    const op = ({ attempt }: { attempt: number }): Promise<string> => Promise.reject(failures[attempt - 1]);
    const out = await settle(clock, hedge(op, { clock, delayMs: 10, maxAttempts: 2, budget }));
    expect(out.error).toMatchObject({ reason: 'exhausted', attempts: 2 });
    expect(log.filter((l) => l.startsWith('failure'))).toEqual(['failure@0 timeout', 'failure@0']);
  });

  it('a load-failure test that is not a function is ignored even when a fatal failure reaches the throttle', async () => {
    const clock = new ManualClock(0);
    const { throttle, log } = recordingThrottle();
    const options = { clock, delayMs: 10, throttle, [HEDGE_LOAD_FAILURE]: 'not a function' } as never;
    const out = await settle(clock, hedge(() => Promise.reject(notFound()), options));
    expect(out.error).toMatchObject({ reason: 'fatal' });
    expect(log).toEqual(['admit@0', 'answer@0 true']);
  });

  it("unref is off by default: the hedge timers are ref'd", async () => {
    const clock = new ManualClock(0);
    let unrefs = 0;
    const handles: Scheduler = {
      now: () => clock.now(),
      setTimeout: (fn, ms) => ({ id: clock.setTimeout(fn, ms), unref: () => void unrefs++ }),
      clearTimeout: (h) => clock.clearTimeout((h as { id: number }).id),
    };
    await settle(clock, hedge(() => new Promise((r) => clock.setTimeout(() => r('ok'), 30)), { clock: handles, delayMs: 10, maxAttempts: 2 }));
    expect(unrefs).toBe(0);
  });

  it('a misspelt option lists every option of hedge() (signal included) and of createHedger() (no signal)', () => {
    const listed = (message: string): string[] => message.slice(message.indexOf('options: ') + 9, message.lastIndexOf('), got')).split(', ');
    expect(listed(invalidOption(() => hedge(() => 1, { delayMs: 5, sginal: 1 } as never)).message)).toEqual([...HEDGE_POLICY_KEYS, ...HEDGE_RUNTIME_KEYS, 'signal']);
    expect(invalidOption(() => hedge(() => 1, { delayMs: 5, sginal: 1 } as never)).message).toContain('did you mean signal?');
    expect(listed(invalidOption(() => createHedger({ delayMs: 5, sginal: 1 } as never)).message)).toEqual([...HEDGE_POLICY_KEYS, ...HEDGE_RUNTIME_KEYS]);
  });
});

describe("the breaker's refusals and errors", () => {
  it('without a telemetry observer, a refusal or a state change warns nobody', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }) });
    await breaker.execute(() => Promise.reject(unavailable())).catch(() => undefined);
    await breaker.execute(() => 1).catch(() => undefined);
    breaker.tryAcquire();
    expect(warn).not.toHaveBeenCalled();
  });

  it('the cause of a refusal is the failure that opened the breaker, not a later one from a call already in flight', async () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    const opening = unavailable('opening');
    let failLate!: () => void;
    const inFlight = breaker.execute(() => new Promise((_, reject) => (failLate = () => reject(unavailable('late')))));
    await breaker.execute(() => Promise.reject(opening)).catch(() => undefined);
    failLate();
    await inFlight.catch(() => undefined);
    const refused = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect((refused as Error).cause).toBe(opening);
  });

  it('a value that is no thenable (null included) is counted before execute() returns', () => {
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), isResultFailure: (v) => v === null });
    void breaker.execute(() => null);
    expect(breaker.state).toBe('open');
  });

  it('a call with a signal leaves no listener once it settles', async () => {
    const breaker = circuitBreaker({ clock: new ManualClock(0) });
    const controller = new AbortController();
    await breaker.execute(() => Promise.resolve(1), { signal: controller.signal });
    await breaker.execute(() => Promise.reject(unavailable()), { signal: controller.signal }).catch(() => undefined);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a bad open duration from a result failure (no error) leaves the InvalidOptionError without a cause; from an error, the cause is writable and configurable', async () => {
    const badBackoff = { delay: () => Number.NaN, reset: () => undefined } as never;
    const byResult = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), openDurationMs: badBackoff, isResultFailure: () => true });
    const e1 = await byResult.execute(() => 'bad').catch((e: unknown) => e);
    expect((e1 as Error).name).toBe('InvalidOptionError');
    expect('cause' in (e1 as object)).toBe(false);
    const failure = unavailable();
    const byError = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), openDurationMs: badBackoff });
    const e2 = await byError.execute(() => Promise.reject(failure)).catch((e: unknown) => e);
    expect(Object.getOwnPropertyDescriptor(e2, 'cause')).toEqual({ value: failure, writable: true, configurable: true, enumerable: false });
  });

  it.each([
    ['a function with a now()', Object.assign(() => 0, { now: () => 0 })],
  ])('refuses a clock that is %s', (_name, clock) => {
    expect(invalidOption(() => circuitBreaker({ clock: clock as never })).field).toBe('clock');
    expect(invalidOption(() => circuitBreaker({ clock: clock as never })).message).toBe('circuitBreaker: clock must be an object with a now() method, got a function');
  });

  it.each([
    ['null', null, 'null'],
    ['without aborted', { addEventListener: () => undefined }, 'an object (Object)'],
    ['a function with the methods', Object.assign(() => undefined, { addEventListener: () => undefined, aborted: false }), 'a function'],
  ])('execute() refuses a signal that is %s', async (_name, signal, shown) => {
    const breaker = circuitBreaker();
    const error = await breaker.execute(() => 1, { signal: signal as never }).catch((e: unknown) => e);
    expect(invalidOption(() => {
      throw error;
    }).message).toBe(`circuitBreaker.execute: signal must be an AbortSignal, got ${shown}`);
  });

  it("the wall clock option's words: not a function, and a reading that is no number", () => {
    expect(invalidOption(() => circuitBreaker({ now: 5 as never })).message).toBe('circuitBreaker: now must be a function, got 5');
    const breaker = circuitBreaker({ now: () => Number.NaN });
    expect(invalidOption(() => breaker.snapshot()).message).toBe('circuitBreaker: now() must return a finite number of ms since the epoch, as Date.now() does, got NaN');
    expect(invalidOption(() => circuitBreaker({ clock: { now: () => Number.NaN }, initialState: {} as never })).message).toMatch(/^circuitBreaker: clock\.now\(\) must return a finite number/);
    expect(invalidOption(() => circuitBreaker({ telemetry: {} as never })).message).toBe('circuitBreaker: telemetry must be an observer object with an onEvent(event) method, got an object (Object)');
  });

  it('the breaker-state events carry a cause only for isolate, reset and a release', async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 100, telemetry: { onEvent: (e) => void events.push(e) } });
    await breaker.execute(() => Promise.reject(unavailable())).catch(() => undefined);
    await clock.advance(100);
    await breaker.execute(() => 1);
    breaker.isolate().release();
    breaker.reset();
    const states = events.filter((e) => e.type === 'breaker-state').map((e) => [(e as { to: string }).to, (e as { cause?: string }).cause]);
    expect(states).toEqual([
      ['open', undefined],
      ['half-open', undefined],
      ['closed', undefined],
      ['open', 'isolate'],
      ['half-open', 'release'],
      ['closed', 'reset'],
    ]);
  });

  it('endIsolation() ends an isolation no handle holds, and says whether there was one', () => {
    const clock = new ManualClock(0);
    const breaker = circuitBreaker({ clock });
    expect(breaker.endIsolation()).toBe(false);
    breaker.isolate();
    expect(breaker.endIsolation()).toBe(true);
    expect(breaker.isolated).toBe(false);
    expect(breaker.state).toBe('half-open');
    expect(invalidOption(() => circuitBreaker({ clock: { now: () => Number.NaN } }).endIsolation()).message).toMatch(/^circuitBreaker: clock\.now\(\)/);
  });
});

describe('more of what the ports hear', () => {
  it('a call that exhausts its attempts with a budget: no refusal event of any kind before the give-up', async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    const { budget } = confirmingBudget(() => true);
    await settle(clock, retry(() => Promise.reject(unavailable()), { clock, budget, maxAttempts: 2, backoff: constantBackoff({ delayMs: 0 }), telemetry: { onEvent: (e) => void events.push(e) } }));
    expect(events.map((e) => e.type)).toEqual(['attempt-start', 'attempt-end', 'retry', 'attempt-start', 'attempt-end', 'give-up']);
  });

  it("a named retry's telemetry call says its layer and its name", async () => {
    const events: TelemetryEvent[] = [];
    await retry(() => 1, { name: 'payments', telemetry: { onEvent: (e) => void events.push(e) } });
    expect((events[0] as { call: object }).call).toEqual({ layer: 'retry', name: 'payments' });
  });

  it('with a signal too, a value that is no thenable (null included) is counted before execute() returns', () => {
    const breaker = circuitBreaker({ clock: new ManualClock(0), counting: consecutiveFailures({ threshold: 1 }), isResultFailure: (v) => v === null });
    void breaker.execute(() => null, { signal: new AbortController().signal });
    expect(breaker.state).toBe('open');
  });
});
