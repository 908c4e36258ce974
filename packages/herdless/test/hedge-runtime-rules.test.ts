// The hedging runtime's rules that only a protocol layer or a long-lived process meets, stated
// without one, in virtual time: hedge timers unref'd on request, what a protocol layer adds to a
// hedged call (the call's description and each outcome's status on its telemetry, a trace context
// per attempt, failures that speak of load), and the loop turn between 0 ms waits where the runtime
// has no setImmediate.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, adaptiveThrottling, hedge, type AttemptContext, type HedgeContext, type Scheduler, type TelemetryEvent } from 'herdless';
import { HEDGE_LOAD_FAILURE, HEDGE_REPORT, type HedgeCallReport } from '../src/runtime/hedge.js';
import { nextMacrotask } from '../src/runtime/macrotask.js';
import { settle } from './support/settle.js';

const unavailable = (label: string) => Object.assign(new Error(label), { status: 503 });

/** A ManualClock whose handles are objects with `unref()`, counting the calls. */
function handleClock(): Scheduler & { unrefs: number; clock: ManualClock } {
  const clock = new ManualClock(0);
  const s = {
    clock,
    unrefs: 0,
    now: () => clock.now(),
    setTimeout: (fn: () => void, ms: number) => ({ id: clock.setTimeout(fn, ms), unref: () => void s.unrefs++ }),
    clearTimeout: (h: unknown) => clock.clearTimeout((h as { id: number }).id),
  };
  return s;
}

/** Attempt n answers after `latency` ms: failing with `failures[n - 1]` if there is one, else with `r<n>`. */
function slowOp(clock: ManualClock, latency: number, failures: readonly unknown[] = []) {
  return ({ attempt, signal }: HedgeContext): Promise<string> =>
    new Promise((resolve, reject) => {
      const handle = clock.setTimeout(() => (failures[attempt - 1] === undefined ? resolve(`r${attempt}`) : reject(failures[attempt - 1])), latency);
      signal.addEventListener('abort', () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
}

describe('hedge timers and unref', () => {
  it("are ref'd by default; unref: true unrefs every hedge timer", async () => {
    for (const unref of [false, true]) {
      const s = handleClock();
      const call = hedge(slowOp(s.clock, 100), { delayMs: 10, maxAttempts: 3, clock: s, unref });
      const out = await settle(s.clock, call);
      expect(out.value).toBe('r1');
      expect(s.clock.pending).toBe(0); // the losers' timers and the last hedge timer cleared
      expect(s.unrefs).toBe(unref ? 2 : 0); // the timers for hedges 2 and 3
    }
  });

  it('a handle that is a number (a browser timer id) is not unref’d, and nothing throws', async () => {
    const clock = new ManualClock(0);
    const out = await settle(clock, hedge(slowOp(clock, 100), { delayMs: 10, maxAttempts: 2, clock, unref: true }));
    expect(out.value).toBe('r1');
  });
});

describe('what a protocol layer adds to a hedged call', () => {
  const call = { layer: 'hedge', client: 'fetch', method: 'GET', url: 'https://api.example/x', name: 'api.example' } as const;

  it('the call it describes and the status of each outcome are on the telemetry', async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    const report: HedgeCallReport = { call, status: (outcome) => (outcome instanceof Error ? 503 : 200) };
    const options = { delayMs: 10, maxAttempts: 2, clock, telemetry: { onEvent: (e: TelemetryEvent) => void events.push(e) }, [HEDGE_REPORT]: report };
    const out = await settle(clock, hedge(slowOp(clock, 15, [unavailable('first')]), options));
    expect(out.value).toBe('r2');
    expect(events.every((e) => (e as { call?: unknown }).call === call)).toBe(true);
    expect(events.filter((e) => e.type === 'attempt-end').map((e) => [e.attempt, e.outcome, e.status])).toEqual([
      [1, 'failure', 503],
      [2, 'success', 200],
    ]);
  });

  it('a give-up carries the status of the last failure; an abort, none', async () => {
    const clock = new ManualClock(0);
    const events: TelemetryEvent[] = [];
    const report: HedgeCallReport = { call, status: () => 503 };
    const telemetry = { onEvent: (e: TelemetryEvent) => void events.push(e) };
    const out = await settle(clock, hedge(slowOp(clock, 5, [unavailable('a')]), { delayMs: 10, maxAttempts: 1, clock, telemetry, [HEDGE_REPORT]: report }));
    expect((out.error as { reason: string }).reason).toBe('exhausted');
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'exhausted', status: 503 });

    events.length = 0;
    const controller = new AbortController();
    const pending = hedge(slowOp(clock, 50), { delayMs: 10, clock, telemetry, signal: controller.signal, [HEDGE_REPORT]: report });
    controller.abort(new Error('caller left'));
    await expect(pending).rejects.toThrow('caller left');
    const giveUp = events.at(-1)!;
    expect(giveUp).toMatchObject({ type: 'give-up', reason: 'aborted' });
    expect('status' in giveUp).toBe(false);
  });

  it("each attempt of a protocol layer's call gets the observer's trace context; a bare hedge() gets none", async () => {
    const clock = new ManualClock(0);
    const contexts: unknown[] = [];
    const asked: number[] = [];
    const telemetry = {
      onEvent: () => undefined,
      attemptContext: (event: { attempt: number }): AttemptContext => {
        asked.push(event.attempt);
        return { inject: () => undefined, run: (send) => send(), attempt: event.attempt } as AttemptContext;
      },
    };
    const op = (context: HedgeContext, trace?: unknown): Promise<string> => {
      contexts.push(trace);
      return slowOp(clock, 15)(context);
    };
    await settle(clock, hedge(op as never, { delayMs: 10, maxAttempts: 2, clock, telemetry, [HEDGE_REPORT]: { call, status: () => undefined } }));
    expect(asked).toEqual([1, 2]);
    expect(contexts).toMatchObject([{ attempt: 1 }, { attempt: 2 }]);

    contexts.length = 0;
    asked.length = 0;
    await settle(clock, hedge(op as never, { delayMs: 10, maxAttempts: 2, clock, telemetry }));
    expect(asked).toEqual([]);
    expect(contexts).toEqual([undefined, undefined]);
  });

  it('an observer whose attemptContext throws or returns null: the attempt goes without one, the throw reported', async () => {
    const clock = new ManualClock(0);
    const reported: [unknown, string][] = [];
    const contexts: unknown[] = [];
    const op = (context: HedgeContext, trace?: unknown): Promise<string> => {
      contexts.push(trace);
      return slowOp(clock, 1)(context);
    };
    const boom = new Error('no tracer');
    for (const attemptContext of [() => { throw boom; }, () => null]) {
      const telemetry = { onEvent: () => undefined, attemptContext };
      const out = await settle(clock, hedge(op as never, { delayMs: 10, clock, telemetry, onHookError: (e, hook) => void reported.push([e, hook]), [HEDGE_REPORT]: { call, status: () => undefined } }));
      expect(out.value).toBe('r1');
    }
    expect(contexts).toEqual([undefined, undefined]);
    expect(reported).toEqual([[boom, 'telemetry']]);
  });

  it("a fatal failure the layer calls about load is a rejection for the throttle; without the test, the backend's accept", async () => {
    const deadline = Object.assign(new Error('DEADLINE_EXCEEDED'), { code: 'DEADLINE' });
    for (const [loadFailure, accepted] of [[(e: unknown) => e === deadline, false], [undefined, true]] as const) {
      const clock = new ManualClock(0);
      const answers: boolean[] = [];
      const inner = adaptiveThrottling();
      const throttle = { name: inner.name, admit: inner.admit.bind(inner), onAnswer: (_now: number, ok: boolean) => void answers.push(ok) };
      const options = { delayMs: 10, clock, throttle, retryable: () => false, ...(loadFailure === undefined ? {} : { [HEDGE_LOAD_FAILURE]: loadFailure }) };
      const out = await settle(clock, hedge(slowOp(clock, 5, [deadline]), options));
      expect((out.error as { reason: string }).reason).toBe('fatal');
      expect(answers).toEqual([accepted]);
    }
  });
});

describe('one turn of the event loop', () => {
  const g = globalThis as { setImmediate?: unknown };
  const saved = g.setImmediate;
  afterEach(() => {
    g.setImmediate = saved;
  });

  it('settles after every queued promise callback, with setImmediate', async () => {
    const order: string[] = [];
    const turn = nextMacrotask().then(() => order.push('turn'));
    void Promise.resolve().then(() => order.push('microtask'));
    await turn;
    expect(order).toEqual(['microtask', 'turn']);
  });

  it('without setImmediate (a browser), a 0 ms timer does it', async () => {
    g.setImmediate = undefined;
    const order: string[] = [];
    const turn = nextMacrotask().then(() => order.push('turn'));
    void Promise.resolve().then(() => order.push('microtask'));
    await turn;
    expect(order).toEqual(['microtask', 'turn']);
  });
});
