import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoadShedder } from 'herdless/server';
import {
  ManualClock,
  circuitBreaker,
  consecutiveFailures,
  constantBackoff,
  createRetry,
  isInvalidOptionError,
  retry,
  retryThrottlingBudget,
  type TelemetryEvent,
  type TelemetryObserver,
} from 'herdless';

const transient = (): Error => Object.assign(new Error('reset'), { code: 'ECONNRESET' });

/** A compact trace of events: type, attempt and the interesting field. */
function trace(events: TelemetryEvent[]): string[] {
  return events.map((e) => {
    switch (e.type) {
      case 'attempt-start':
        return `start ${e.attempt}`;
      case 'attempt-end':
        return `end ${e.attempt} ${e.outcome} ${e.durationMs}ms`;
      case 'retry':
        return `retry ${e.attempt} ${e.delayMs}ms ${e.delaySource}`;
      case 'give-up':
        return `give-up ${e.reason} ${e.attempts}`;
      case 'budget-refusal':
        return `refused ${e.budget} ${e.attempt}`;
      case 'breaker-state':
        return `breaker ${e.breaker} ${e.from}→${e.to} @${e.at}`;
      case 'breaker-rejection':
        return `rejected ${e.breaker} ${e.state}`;
      case 'shed':
        return `shed ${e.reason}`;
    }
  });
}

let clock: ManualClock;
let events: TelemetryEvent[];
let observer: TelemetryObserver;
let unhandled: unknown[];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => {
  clock = new ManualClock();
  events = [];
  observer = { onEvent: (e) => void events.push(e) };
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await new Promise((r) => setImmediate(r));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** Runs the clock's timers until `promise` settles (bounded). */
async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 100 && !done; i++) await clock.runAll();
  return promise;
}

describe('retry() events', () => {
  it('fail, fail (server hint), succeed: starts, ends with durations on the clock, retries with their source', async () => {
    let n = 0;
    const op = async (): Promise<string> => {
      n++;
      await new Promise((resolve) => clock.setTimeout(resolve, 5));
      if (n === 1) throw transient();
      if (n === 2) throw Object.assign(transient(), { retryAfterMs: 40 });
      return 'ok';
    };
    const value = await settle(retry(op, { clock, backoff: constantBackoff({ delayMs: 10 }), telemetry: observer }));
    expect(value).toBe('ok');
    expect(trace(events)).toEqual([
      'start 1',
      'end 1 failure 5ms',
      'retry 1 10ms backoff',
      'start 2',
      'end 2 failure 5ms',
      'retry 2 40ms server-hint',
      'start 3',
      'end 3 success 5ms',
    ]);
    // One call object, shared by every event of the call.
    expect(new Set(events.map((e) => (e as { call: object }).call)).size).toBe(1);
    expect((events[0] as { call: object }).call).toEqual({ layer: 'retry' });
  });

  it('give-ups: exhausted, fatal, budget (with its refusal), and the errors they carry', async () => {
    await expect(settle(retry(() => Promise.reject(transient()), { clock, maxAttempts: 2, backoff: constantBackoff(), telemetry: observer }))).rejects.toMatchObject({
      reason: 'exhausted',
    });
    await expect(retry(() => Promise.reject(new TypeError('bug')), { clock, telemetry: observer })).rejects.toMatchObject({ reason: 'fatal' });
    const budget = retryThrottlingBudget({ maxTokens: 2, tokenRatio: 0.1 });
    const withBudget = createRetry({ clock, maxAttempts: 5, backoff: constantBackoff(), budget, telemetry: observer });
    await expect(settle(withBudget(() => Promise.reject(transient())))).rejects.toMatchObject({ reason: 'budget' });
    expect(trace(events)).toEqual([
      'start 1',
      'end 1 failure 0ms',
      'retry 1 0ms backoff',
      'start 2',
      'end 2 failure 0ms',
      'give-up exhausted 2',
      'start 1',
      'end 1 failure 0ms',
      'give-up fatal 1',
      'start 1',
      'end 1 failure 0ms',
      'refused retry throttling 1',
      'give-up budget 1',
    ]);
    const fatal = events.find((e) => e.type === 'give-up' && e.reason === 'fatal') as { error: unknown };
    expect(fatal.error).toBeInstanceOf(TypeError);
  });

  it('the guarded path: an attempt timeout is a timeout outcome; the caller’s abort is an aborted one and a give-up', async () => {
    let n = 0;
    const op = ({ signal }: { signal: AbortSignal }): Promise<string> =>
      ++n === 1 ? new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) : Promise.resolve('ok');
    await expect(settle(retry(op, { clock, attemptTimeoutMs: 100, backoff: constantBackoff(), telemetry: observer }))).resolves.toBe('ok');
    expect(trace(events)).toEqual(['start 1', 'end 1 timeout 100ms', 'retry 1 0ms backoff', 'start 2', 'end 2 success 0ms']);

    events.length = 0;
    const controller = new AbortController();
    const call = retry(() => new Promise<never>(() => undefined), { clock, signal: controller.signal, telemetry: observer });
    controller.abort(new Error('stop'));
    await expect(call).rejects.toThrow('stop');
    expect(trace(events)).toEqual(['start 1', 'end 1 aborted 0ms', 'give-up aborted 1']);
    events.length = 0;
    await expect(retry(() => 1, { signal: controller.signal, telemetry: observer })).rejects.toThrow('stop');
    expect(trace(events)).toEqual(['give-up aborted 0']);
  });

  it('an observer is an observer: a throw or a rejection goes to onHookError as telemetry, and changes nothing', async () => {
    const reported: Array<[string, string]> = [];
    const thrower: TelemetryObserver = {
      onEvent: (e) => {
        if (e.type === 'attempt-start') throw new Error('sync');
        return Promise.reject(new Error(`async ${e.type}`));
      },
    };
    const value = await settle(
      retry(() => 'ok', { clock, telemetry: thrower, onHookError: (error, hook) => void reported.push([hook, (error as Error).message]) }),
    );
    expect(value).toBe('ok');
    await new Promise((r) => setImmediate(r));
    expect(reported).toEqual([
      ['telemetry', 'sync'],
      ['telemetry', 'async attempt-end'],
    ]);
  });

  it('an observer with enabled: false is skipped; a bad telemetry option names the field and the value', async () => {
    await retry(() => 1, { telemetry: { enabled: false, onEvent: () => void events.push({} as never) } });
    expect(events).toEqual([]);
    for (const bad of [1, {}, { onEvent: 'x' }, () => undefined]) {
      let error: unknown;
      try {
        createRetry({ telemetry: bad as never });
      } catch (e) {
        error = e;
      }
      expect(isInvalidOptionError(error)).toBe(true);
      expect(error).toMatchObject({ field: 'telemetry', value: bad });
    }
    expect(() => retry(() => 1, { telemetry: 'x' as never })).toThrow(/telemetry/);
  });

  it('a reused options object picks up an observer added to it', async () => {
    const options: { clock: ManualClock; telemetry?: TelemetryObserver } = { clock };
    await retry(() => 1, options);
    await retry(() => 1, options);
    options.telemetry = observer;
    await retry(() => 1, options);
    expect(trace(events)).toEqual(['start 1', 'end 1 success 0ms']);
  });
});

describe('breaker events', () => {
  it('state changes and refusals, named', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 50, clock, telemetry: observer, name: 'db' });
    await expect(breaker.execute(() => Promise.reject(transient()))).rejects.toThrow('reset');
    await expect(breaker.execute(() => 1)).rejects.toMatchObject({ code: 'ERR_HERDLESS_CIRCUIT_OPEN' });
    await clock.advance(50);
    await expect(breaker.execute(() => 1)).resolves.toBe(1);
    expect(trace(events)).toEqual(['breaker db closed→open @0', 'rejected db open', 'breaker db open→half-open @50', 'breaker db half-open→closed @50']);
    expect(breaker.name).toBe('db');
    expect(circuitBreaker().name).toBe('default');
  });

  it('bad name or telemetry options name the field', () => {
    expect(() => circuitBreaker({ name: '' })).toThrow(expect.objectContaining({ field: 'name' }));
    expect(() => circuitBreaker({ telemetry: {} as never })).toThrow(expect.objectContaining({ field: 'telemetry' }));
  });
});

describe('server events', () => {
  it('a shed request: its reason, whether it was a retry, whether the answer says do not retry', async () => {
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 1, maxQueueWaitMs: 100, clock, telemetry: observer });
    expect(shedder.admit(1)).toMatchObject({ kind: 'admitted' });
    const queued = shedder.admit(1);
    expect(shedder.admit(2)).toMatchObject({ kind: 'shed', reason: 'queue-full', doNotRetry: true });
    await clock.advance(100);
    await expect(queued).resolves.toMatchObject({ kind: 'shed', reason: 'queue-timeout' });
    expect(events).toEqual([
      { type: 'shed', layer: 'server', reason: 'queue-full', retry: true, doNotRetry: true },
      { type: 'shed', layer: 'server', reason: 'queue-timeout', retry: false, doNotRetry: true },
    ]);
    expect(shedder.stats().shed).toBe(events.length);
  });
});
