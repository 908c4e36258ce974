// One hedged call's state machine, rule by rule, in virtual time: a call that starts aborted, a
// throttle that throws, what the telemetry and the hooks hear when the caller aborts or a hedge is
// sent, hedges sent at once after a failure (or after the server's hint), and timers and listeners
// left behind.
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { CircuitOpenError, ManualClock, hedge, type AttemptThrottle, type HedgeContext, type RetryBudget, type TelemetryEvent } from 'herdless';
import { HEDGE_REPORT } from '../src/runtime/hedge.js';
import { nextMacrotask } from '../src/runtime/macrotask.js';
import { settle } from './support/settle.js';

const unavailable = (label = 'unavailable', retryAfterMs?: number): Error => Object.assign(new Error(label), { status: 503 }, retryAfterMs === undefined ? {} : { retryAfterMs });

/** Attempt n answers after `latency[n - 1]` ms with `r<n>`, or fails with `failures[n - 1]` if there is one. */
function op(clock: ManualClock, latency: readonly number[], failures: readonly unknown[] = []) {
  let sent = 0;
  const fn = ({ attempt, signal }: HedgeContext): Promise<string> => {
    sent++;
    return new Promise((resolve, reject) => {
      const handle = clock.setTimeout(() => (failures[attempt - 1] === undefined ? resolve(`r${attempt}`) : reject(failures[attempt - 1])), latency[attempt - 1] ?? 1_000_000);
      signal.addEventListener('abort', () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
  };
  return Object.assign(fn, { sent: () => sent });
}

function recordingBudget(confirm?: () => boolean | PromiseLike<boolean>) {
  const log: string[] = [];
  const budget: RetryBudget = {
    name: 'b',
    onAttempt: (now, isRetry) => void log.push(`attempt@${now}${isRetry ? '+' : ''}`),
    onSuccess: (now, isRetry) => void log.push(`success@${now}${isRetry ? '+' : ''}`),
    onFailure: (now) => void log.push(`failure@${now}`),
    allowRetry: () => true,
    ...(confirm === undefined ? {} : { confirmRetry: () => (log.push('confirm'), confirm()) }),
  };
  return { budget, log };
}

describe('a hedged call that cannot start', () => {
  it('an already-aborted signal: rejects with its reason, sends nothing, gives up after 0 attempts', async () => {
    const clock = new ManualClock(0);
    const send = op(clock, [5]);
    const giveUps: unknown[] = [];
    const controller = new AbortController();
    controller.abort('gone');
    await expect(hedge(send, { clock, delayMs: 10, signal: controller.signal, onGiveUp: (e) => void giveUps.push(e) })).rejects.toBe('gone');
    expect(send.sent()).toBe(0);
    expect(giveUps).toEqual([{ reason: 'aborted', attempts: 0, error: 'gone' }]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a throttle that throws: the call rejects with what it threw, nothing is sent, the give-up is fatal', async () => {
    const clock = new ManualClock(0);
    const send = op(clock, [5]);
    const boom = new Error('throttle bug');
    const throttle: AttemptThrottle = { name: 't', admit: () => { throw boom; }, onAnswer: () => undefined };
    const giveUps: unknown[] = [];
    const out = await settle(clock, hedge(send, { clock, delayMs: 10, throttle, onGiveUp: (e) => void giveUps.push(e) }));
    expect(out.error).toBe(boom);
    expect(send.sent()).toBe(0);
    expect(giveUps).toEqual([{ reason: 'fatal', attempts: 0, error: boom }]);
  });
});

describe('what the telemetry and the hooks hear', () => {
  it("the caller's abort: every attempt in flight ends 'aborted' with the reason, then the give-up", async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    const controller = new AbortController();
    const call = hedge(op(clock, [100, 100]), { clock, delayMs: 10, maxAttempts: 2, signal: controller.signal, telemetry: { onEvent: (e) => void events.push(e) } });
    await clock.advance(20);
    controller.abort('stop');
    await expect(call).rejects.toBe('stop');
    const ends = events.filter((e) => e.type === 'attempt-end').map((e) => [e.attempt, e.outcome, e.error]);
    expect(ends).toEqual([
      [1, 'aborted', 'stop'],
      [2, 'aborted', 'stop'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'aborted', attempts: 2 });
  });

  it("the loser of a race ends 'aborted' on the telemetry", async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    await settle(clock, hedge(op(clock, [100, 5]), { clock, delayMs: 10, maxAttempts: 2, telemetry: { onEvent: (e) => void events.push(e) } }));
    expect(events.filter((e) => e.type === 'attempt-end').map((e) => [e.attempt, e.outcome])).toEqual([
      [2, 'success'],
      [1, 'aborted'],
    ]);
  });

  it('onHedge hears the time since the call started, on a clock far from 0', async () => {
    const clock = new ManualClock(1000);
    const hedges: unknown[] = [];
    await settle(clock, hedge(op(clock, [100, 5]), { clock, delayMs: 10, maxAttempts: 2, onHedge: (e) => void hedges.push(e) }));
    expect(hedges).toEqual([{ attempt: 2, trigger: 'delay', afterMs: 10 }]);
  });

  it('an onHedge that aborts the call: the hedge is not sent', async () => {
    const clock = new ManualClock(0);
    const send = op(clock, [100, 100]);
    const controller = new AbortController();
    const out = await settle(clock, hedge(send, { clock, delayMs: 10, maxAttempts: 2, signal: controller.signal, onHedge: () => controller.abort('from the hook') }));
    expect(out.error).toBe('from the hook');
    expect(send.sent()).toBe(1);
  });

  it('a throwing onGiveUp is reported as the onGiveUp hook', async () => {
    const clock = new ManualClock(0);
    const reported: unknown[] = [];
    const boom = new Error('logger down');
    await settle(
      clock,
      hedge(op(clock, [5], [unavailable()]), { clock, delayMs: 10, maxAttempts: 1, onGiveUp: () => { throw boom; }, onHookError: (e, hook) => void reported.push([hook, e]) }),
    );
    expect(reported).toEqual([['onGiveUp', boom]]);
  });
});

describe('hedges after a failure', () => {
  it('a non-fatal failure sends the next hedge at once, before the clock moves (trigger: failure)', async () => {
    const clock = new ManualClock(0);
    const hedges: unknown[] = [];
    let sent = 0;
    const call = hedge(
      ({ attempt }) => {
        sent++;
        return attempt === 1 ? Promise.reject(unavailable()) : new Promise(() => undefined);
      },
      { clock, delayMs: 100, maxAttempts: 2, onHedge: (e) => void hedges.push(e) },
    );
    void call.catch(() => undefined);
    await nextMacrotask();
    expect(sent).toBe(2);
    expect(clock.now()).toBe(0);
    expect(hedges).toEqual([{ attempt: 2, trigger: 'failure', afterMs: 0 }]);
  });

  it("a failure with the server's hint sends the next hedge after the hint (trigger: failure)", async () => {
    const clock = new ManualClock(0);
    const hedges: unknown[] = [];
    const out = await settle(clock, hedge(op(clock, [5, 5], [unavailable('busy', 30)]), { clock, delayMs: 100, maxAttempts: 2, onHedge: (e) => void hedges.push(e) }));
    expect(out).toEqual({ value: 'r2', at: 40 });
    expect(hedges).toEqual([{ attempt: 2, trigger: 'failure', afterMs: 35 }]);
  });

  it("the last attempt's failure with a hint still ends the call: nothing more may be sent", async () => {
    const clock = new ManualClock(0);
    const out = await settle(clock, hedge(op(clock, [5, 5], [unavailable('a'), unavailable('b', 30)]), { clock, delayMs: 100, maxAttempts: 2 }));
    expect(out.error).toMatchObject({ reason: 'exhausted', attempts: 2 });
    expect(out.at).toBe(10);
    expect(clock.pending).toBe(0);
  });

  it('a fatal failure is not reported to the budget as a failure; a non-fatal one is', async () => {
    const clock = new ManualClock(0);
    const { budget, log } = recordingBudget();
    await settle(clock, hedge(op(clock, [5], [Object.assign(new Error('nope'), { status: 404 })]), { clock, delayMs: 10, budget }));
    expect(log).toEqual(['attempt@0']);
    await settle(clock, hedge(op(clock, [5], [unavailable()]), { clock, delayMs: 10, budget, maxAttempts: 1 }));
    expect(log.slice(1)).toEqual([`attempt@${clock.now() - 5}`, `failure@${clock.now()}`]);
  });

  it('an open circuit says nothing to the throttle', async () => {
    const clock = new ManualClock(0);
    const answers: boolean[] = [];
    const throttle: AttemptThrottle = { name: 't', admit: () => true, onAnswer: (_now, ok) => void answers.push(ok) };
    const out = await settle(clock, hedge(op(clock, [5], [new CircuitOpenError('open', 1000)]), { clock, delayMs: 10, throttle }));
    expect(out.error).toMatchObject({ reason: 'circuit-open' });
    expect(answers).toEqual([]);
  });

  it('while a budget confirms a hedge, a failure asks for no second one; the first attempt winning is no retry', async () => {
    const clock = new ManualClock(0);
    let answer!: (ok: boolean) => void;
    const { budget, log } = recordingBudget(() => new Promise<boolean>((r) => (answer = r)));
    // Attempt 1 fails at 20, while the hedge asked for at 10 is being confirmed.
    const send = op(clock, [20, 5, 5], [unavailable()]);
    const call = hedge(send, { clock, delayMs: 10, maxAttempts: 3, budget });
    await clock.advance(50);
    expect(log).toEqual(['attempt@0', 'confirm', 'failure@20']);
    answer(true);
    const out = await settle(clock, call);
    expect(out.value).toBe('r2');
    expect(log).toEqual(['attempt@0', 'confirm', 'failure@20', 'attempt@50+', 'success@55+']);

    const first = recordingBudget();
    await settle(clock, hedge(op(clock, [5]), { clock, delayMs: 10, budget: first.budget }));
    expect(first.log).toEqual([`attempt@${clock.now() - 5}`, `success@${clock.now()}`]);
  });
});

describe('nothing left behind', () => {
  it('with maxAttempts 1 no hedge timer is set', async () => {
    const clock = new ManualClock(0);
    const call = hedge(() => new Promise(() => undefined), { clock, delayMs: 10, maxAttempts: 1 });
    void call;
    await clock.advance(0);
    expect(clock.pending).toBe(0);
  });

  it("the caller's signal has no listener once the call has settled", async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    await settle(clock, hedge(op(clock, [5]), { clock, delayMs: 10, signal: controller.signal }));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

it('a scheduler whose handles are null or objects without unref: unref: true leaves them be', async () => {
  for (const shape of ['null', 'no unref'] as const) {
    const clock = new ManualClock(0);
    const s = {
      now: () => clock.now(),
      setTimeout: (fn: () => void, ms: number) => {
        const id = clock.setTimeout(fn, ms);
        return shape === 'null' ? null : { id };
      },
      clearTimeout: () => undefined,
    };
    const out = await settle(clock, hedge(op(clock, [100, 5]), { clock: s, unref: true, delayMs: 10, maxAttempts: 2 }));
    expect(out.value).toBe('r2');
  }
});

describe('words and silences', () => {
  it("a loser is aborted with the hedge's own reason", async () => {
    const clock = new ManualClock(0);
    const reasons: unknown[] = [];
    const out = await settle(
      clock,
      hedge(
        ({ attempt, signal }) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => reasons.push(signal.reason));
            clock.setTimeout(() => resolve(`r${attempt}`), attempt === 1 ? 100 : 5);
          }),
        { clock, delayMs: 10, maxAttempts: 2 },
      ),
    );
    expect(out.value).toBe('r2');
    expect(reasons).toMatchObject([{ code: 'ERR_HERDLESS_HEDGE_LOST', message: 'hedged call: another attempt answered first, or the call ended' }]);
  });

  it('one attempt in all: "all 1 hedged attempt failed"', async () => {
    const clock = new ManualClock(0);
    const out = await settle(clock, hedge(op(clock, [5], [unavailable()]), { clock, delayMs: 10, maxAttempts: 1 }));
    expect((out.error as Error).message).toContain('all 1 hedged attempt failed (maxAttempts 1)');
  });

  it('without onHedge or onGiveUp, hedging and giving up warn nobody', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const clock = new ManualClock(0);
      await settle(clock, hedge(op(clock, [100, 100], [unavailable(), unavailable()]), { clock, delayMs: 10, maxAttempts: 2 }));
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("an observer without attemptContext on a protocol layer's call: nothing to report", async () => {
    const clock = new ManualClock(0);
    const reported: unknown[] = [];
    const report = { call: { layer: 'hedge', client: 'fetch' } as const, status: () => undefined };
    const out = await settle(clock, hedge(op(clock, [5]), { clock, delayMs: 10, telemetry: { onEvent: () => undefined }, onHookError: (e) => void reported.push(e), [HEDGE_REPORT]: report }));
    expect(out.value).toBe('r1');
    expect(reported).toEqual([]);
  });
});
