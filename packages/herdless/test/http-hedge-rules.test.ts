/**
 * The hedging fetch, one rule at a time against a scripted fetch (no socket; hedge delays on a
 * ManualClock): which response wins and which are let go (a loser that answers late included), what
 * telemetry hears of a hedged request and of one sent once, what the throttle and the breaker count
 * for a request sent once, the retryable override, and the options' words.
 */
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  adaptiveThrottling,
  circuitBreaker,
  consecutiveFailures,
  isCircuitOpenError,
  isHedgeError,
  isInvalidOptionError,
  type HedgeError,
  type TelemetryEvent,
} from 'herdless';
import { HttpStatusError, retryInfo, withHedging, type HttpHedgingOptions } from 'herdless/http';
import { connectionReset, fetchDouble, trackedResponse, type FetchStep } from './support/fetch-double.js';
import { invalidOption } from './support/invalid-option.js';
import { settle } from './support/settle.js';

const URL_A = 'http://127.0.0.1:8080/a';

function hedged(steps: readonly FetchStep[], options: Partial<HttpHedgingOptions> = {}, fallback?: FetchStep) {
  const clock = new ManualClock();
  const double = fetchDouble(steps, fallback);
  const call = withHedging(double.fetch as never, { delayMs: 50, maxAttempts: 3, clock, ...options });
  return { clock, double, call };
}

/** An attempt that never answers: it rejects with its signal's reason when aborted. */
const hang: FetchStep = (init) =>
  new Promise<Response>((_resolve, reject) => {
    const signal = init!.signal!;
    signal.addEventListener('abort', () => reject(signal.reason));
  });

const observe = () => {
  const events: TelemetryEvent[] = [];
  return { events, telemetry: { onEvent: (e: TelemetryEvent) => void events.push(e) } };
};

describe('which response wins, which are let go', () => {
  it('a first attempt that hangs: the hedge at 50 ms wins; the first is aborted; the hedge carries its number', async () => {
    const { clock, double, call } = hedged([hang, 200]);
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    expect(out.at).toBe(50);
    expect(double.calls.map((c) => c.init!.signal!.aborted)).toEqual([true, false]);
    expect(double.header('x-herdless-attempt')).toEqual([null, '2']);
    expect(retryInfo(out.value as Response)).toMatchObject({ attempts: 2, reason: undefined });
    expect(await (out.value as Response).text()).toBe('body');
  });

  it('a 503 is a failed attempt: the next goes at once; the 503 is let go when the 200 wins', async () => {
    const { clock, double, call } = hedged([503, 200]);
    const out = await settle(clock, call(URL_A));
    expect(out.at).toBe(0);
    expect((out.value as Response).status).toBe(200);
    expect(double.cancelled()).toEqual([true, false]);
  });

  it('every attempt a 503: the last one is returned with its retryInfo, the others let go', async () => {
    const { clock, double, call } = hedged([], {}, 503);
    const out = await settle(clock, call(URL_A));
    const res = out.value as Response;
    expect(res).toBe(double.calls[2]!.response);
    expect(double.cancelled()).toEqual([true, true, false]);
    expect(retryInfo(res)).toMatchObject({ attempts: 3, reason: 'exhausted' });
  });

  it('a loser that answers after the winner: its response is let go as it comes', async () => {
    let answer!: (r: Response) => void;
    const late = trackedResponse(200);
    const deaf: FetchStep = () => new Promise<Response>((resolve) => (answer = resolve));
    const { clock, call } = hedged([deaf, 200]);
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    answer(late);
    await new Promise((r) => setTimeout(r, 0));
    expect(late.wasCancelled()).toBe(true);
    expect(out.value).not.toBe(late);
  });

  it('a network failure everywhere: the call rejects, nothing is left open', async () => {
    const { clock, double, call } = hedged([], {}, { reject: connectionReset() });
    const out = await settle(clock, call(URL_A));
    expect(isHedgeError(out.error)).toBe(true);
    expect(double.calls).toHaveLength(3);
  });

  it('with a caller’s signal: the returned body follows it once the call has returned', async () => {
    const controller = new AbortController();
    const steps: FetchStep[] = [
      (init) => {
        const signal = init!.signal!;
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('part'));
            signal.addEventListener('abort', () => c.error(signal.reason));
          },
        });
        return new Response(body, { status: 200 });
      },
    ];
    const { clock, call } = hedged(steps);
    const out = await settle(clock, call(URL_A, { signal: controller.signal }));
    const reason = new Error('caller gone');
    controller.abort(reason);
    await expect((out.value as Response).text()).rejects.toBe(reason);
  });
});

describe('telemetry of a hedged request', () => {
  it('the call (layer hedge, client fetch, method, URL, host as the name) and each attempt’s status, a 503’s included', async () => {
    const { events, telemetry } = observe();
    const { clock, call } = hedged([503, 200], { telemetry });
    await settle(clock, call(URL_A, { method: 'put', body: 'x' }));
    expect(events[0]!.call).toEqual({ layer: 'hedge', client: 'fetch', method: 'PUT', url: URL_A, name: '127.0.0.1:8080' });
    const ends = events.filter((e) => e.type === 'attempt-end').map((e) => [e.attempt, (e as { outcome: string }).outcome, (e as { status?: number }).status]);
    expect(ends).toEqual([
      [1, 'failure', 503],
      [2, 'success', 200],
    ]);
  });

  it('the name option wins over the host; a failure without a numeric status reports none', async () => {
    const { events, telemetry } = observe();
    const { clock, call } = hedged([{ reject: Object.assign(connectionReset(), { status: '502' }) }, 200], { telemetry, name: 'inventory' });
    await settle(clock, call(URL_A));
    expect(events[0]!.call.name).toBe('inventory');
    const first = events.find((e) => e.type === 'attempt-end' && e.attempt === 1) as { status?: number; outcome: string };
    expect(first.outcome).toBe('failure');
    expect(first).not.toHaveProperty('status');
  });
});

describe('a request sent once (a POST without a key)', () => {
  it('without telemetry, throttle or breaker: sent as is, its 503 returned', async () => {
    const { clock, double, call } = hedged([503]);
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect((out.value as Response).status).toBe(503);
    expect(double.calls).toHaveLength(1);
    expect(retryInfo(out.value as Response)).toMatchObject({ attempts: 1 });
  });

  it('telemetry: its attempt, and for a retried status the give-up (fatal, saying why it was not hedged)', async () => {
    const { events, telemetry } = observe();
    const { clock, call } = hedged([503], { telemetry });
    await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect(events.map((e) => e.type)).toEqual(['attempt-start', 'attempt-end', 'give-up']);
    const end = events[1] as { outcome: string; status?: number; error?: unknown };
    expect([end.outcome, end.status, end.error instanceof HttpStatusError && end.error.status]).toEqual(['failure', 503, 503]);
    const giveUp = events[2] as { reason: string; attempts: number; status?: number; error?: unknown };
    expect([giveUp.reason, giveUp.attempts, giveUp.status]).toEqual(['fatal', 1, 503]);
    expect(giveUp.error).toBe('POST is not idempotent: it is retried only with an Idempotency-Key header (send one, or set idempotencyKey: true)');
    expect(events[0]!.call).toMatchObject({ layer: 'hedge', method: 'POST', url: URL_A });
  });

  it('telemetry: a 200 is a success and no give-up; a network failure a failure; the caller’s abort an abort', async () => {
    const ok = observe();
    const a = hedged([200], { telemetry: ok.telemetry });
    await settle(a.clock, a.call(URL_A, { method: 'POST', body: 'x' }));
    expect(ok.events.map((e) => [e.type, (e as { outcome?: string }).outcome, (e as { status?: number }).status])).toEqual([
      ['attempt-start', undefined, undefined],
      ['attempt-end', 'success', 200],
    ]);
    const failed = observe();
    const reset = connectionReset();
    const b = hedged([{ reject: reset }], { telemetry: failed.telemetry });
    const outB = await settle(b.clock, b.call(URL_A, { method: 'POST', body: 'x' }));
    expect(outB.error).toBe(reset);
    expect(failed.events.filter((e) => e.type === 'attempt-end').map((e) => [(e as { outcome: string }).outcome, (e as { error?: unknown }).error])).toEqual([['failure', reset]]);
    const aborted = observe();
    const controller = new AbortController();
    const steps: FetchStep[] = [
      (init) =>
        new Promise<Response>((_resolve, reject) => {
          init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
          controller.abort(new Error('left'));
        }),
    ];
    const c = hedged(steps, { telemetry: aborted.telemetry });
    const outC = await settle(c.clock, c.call(URL_A, { method: 'POST', body: 'x', signal: controller.signal }));
    expect((outC.error as Error).message).toBe('left');
    expect(aborted.events.filter((e) => e.type === 'attempt-end').map((e) => (e as { outcome: string }).outcome)).toEqual(['aborted']);
  });

  it('its telemetry is timed on the hedger’s clock, and an observer that throws is reported to onHookError', async () => {
    const hookErrors: unknown[] = [];
    const durations: number[] = [];
    const clock = new ManualClock();
    const double = fetchDouble([() => new Promise<Response>((resolve) => clock.setTimeout(() => resolve(trackedResponse(200)), 30))]);
    const call = withHedging(double.fetch as never, {
      delayMs: 50,
      clock,
      onHookError: (e) => void hookErrors.push(e),
      telemetry: {
        onEvent: (e) => {
          if (e.type === 'attempt-end') durations.push(e.durationMs);
          throw new Error('observer broke');
        },
      },
    });
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect((out.value as Response).status).toBe(200);
    expect(durations).toEqual([30]);
    expect(hookErrors.map((e) => (e as Error).message)).toEqual(['observer broke', 'observer broke']);
  });

  it('the throttle hears its answer: a 503 is a refusal, a 200 an accept, a network failure a refusal, another failure an accept; an aborted attempt is a request without an answer', async () => {
    const throttle = adaptiveThrottling({ k: 100 });
    const refuseAborted: FetchStep = (init) => {
      throw init!.signal!.reason;
    };
    const script: FetchStep[] = [503, 200, { reject: connectionReset() }, { reject: new Error('tls') }, refuseAborted];
    const { clock, call } = hedged(script, { throttle, random: { random: () => 0.999 } });
    for (let i = 0; i < 4; i++) await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect([throttle.requestsInWindow(clock.now()), throttle.acceptsInWindow(clock.now())]).toEqual([4, 2]);
    const controller = new AbortController();
    controller.abort(new Error('before'));
    await settle(clock, call(URL_A, { method: 'POST', body: 'x', signal: controller.signal }));
    expect([throttle.requestsInWindow(clock.now()), throttle.acceptsInWindow(clock.now())]).toEqual([5, 2]);
  });

  it('a throttle that refuses: a HedgeError (throttled), nothing sent, its rejection and give-up reported', async () => {
    const throttle = adaptiveThrottling({ k: 1 });
    const { events, telemetry } = observe();
    const { clock, double, call } = hedged([503], { throttle, telemetry, random: { random: () => 0 } });
    await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    events.length = 0;
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect(isHedgeError(out.error)).toBe(true);
    expect([(out.error as HedgeError).reason, (out.error as HedgeError).attempts]).toEqual(['throttled', 0]);
    expect((out.error as Error).message).toContain('adaptive throttling rejected the call locally: no attempt was sent');
    expect(double.calls).toHaveLength(1);
    expect(events.map((e) => [e.type, (e as { attempt?: number }).attempt, (e as { reason?: string }).reason])).toEqual([
      ['throttle-rejection', 1, undefined],
      ['give-up', undefined, 'throttled'],
    ]);
  });

  it('a breaker counts its 503 (the 503 is still the answer); once open, it is not sent: a HedgeError (circuit-open) with the CircuitOpenError as cause', async () => {
    const clockForBreaker = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock: clockForBreaker });
    const { events, telemetry } = observe();
    const { clock, double, call } = hedged([503, 200], { breaker, telemetry });
    const first = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect((first.value as Response).status).toBe(503);
    expect(breaker.state).toBe('open');
    events.length = 0;
    const second = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }));
    expect([(second.error as HedgeError).reason, (second.error as HedgeError).attempts]).toEqual(['circuit-open', 0]);
    expect((second.error as Error).message).toContain('the circuit is open: the request was not sent');
    expect(isCircuitOpenError((second.error as Error).cause)).toBe(true);
    expect(double.calls).toHaveLength(1);
    expect(events.filter((e) => e.type === 'give-up').map((e) => (e as { reason: string }).reason)).toEqual(['circuit-open']);
  });

  it('through a breaker, a 200 is a success and a network failure rejects as itself', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), clock: new ManualClock() });
    const reset = connectionReset();
    const { clock, call } = hedged([200, { reject: reset }], { breaker });
    expect(((await settle(clock, call(URL_A, { method: 'POST', body: 'x' }))).value as Response).status).toBe(200);
    expect((await settle(clock, call(URL_A, { method: 'POST', body: 'x' }))).error).toBe(reset);
    expect(breaker.state).toBe('closed');
  });
});

describe('the retryable override', () => {
  it('is told the attempt and that a 503 is transient; false makes it final (the 503 is returned)', async () => {
    const seen: unknown[] = [];
    const { clock, double, call } = hedged([503], {
      retryable: (error, info) => {
        seen.push([error instanceof HttpStatusError, info]);
        return false;
      },
    });
    const out = await settle(clock, call(URL_A));
    expect(seen).toEqual([[true, { attempt: 1, transient: true }]]);
    expect((out.value as Response).status).toBe(503);
    expect(double.calls).toHaveLength(1);
  });

  it('a listed status the classification does not know (404 in retryStatuses) is non-fatal: the next attempt goes at once', async () => {
    const seen: unknown[] = [];
    const { clock, double, call } = hedged([404, 200], { retryStatuses: [404], retryable: (_e, info) => void seen.push(info) });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    expect(seen).toEqual([{ attempt: 1, transient: true }]);
    expect(double.calls).toHaveLength(2);
  });

  it('undefined keeps the classification: a failure that is not transient ends the call', async () => {
    const seen: unknown[] = [];
    const tls = new Error('tls');
    const { clock, double, call } = hedged([{ reject: tls }], { retryable: (_e, info) => void seen.push(info) });
    const out = await settle(clock, call(URL_A));
    expect(seen).toEqual([{ attempt: 1, transient: false }]);
    expect((out.error as HedgeError).cause).toBe(tls);
    expect(double.calls).toHaveLength(1);
  });

  it('true hedges a failure the classification calls fatal', async () => {
    const { clock, double, call } = hedged([{ reject: new Error('tls') }, 200], { retryable: () => true });
    const out = await settle(clock, call(URL_A));
    expect((out.value as Response).status).toBe(200);
    expect(double.calls).toHaveLength(2);
  });

  it('one that is not a function is refused by name', () => {
    expect(invalidOption(() => withHedging(fetch, { delayMs: 10, retryable: 5 as never })).message).toBe('withHedging: retryable must be a function (error, { attempt, transient }) => boolean | undefined, got 5');
  });
});

describe('the hedging fetch’s options', () => {
  it('options that are not an object, and a misspelt option, with their words', () => {
    expect(invalidOption(() => withHedging(fetch, null as never)).message).toBe('withHedging: options must be an object, got null');
    expect(invalidOption(() => withHedging(fetch, [] as never)).message).toBe('withHedging: options must be an object, got an array of length 0');
    expect(invalidOption(() => withHedging('f' as never, { delayMs: 1 })).message).toBe('withHedging: fetch must be a function (e.g. fetch), got "f"');
    const typo = invalidOption(() => withHedging(fetch, { delayMs: 1, retryStatus: [503] } as never)).message;
    expect(typo).toMatch(/^withHedging: retryStatus is not a hedging option of withHedging \(did you mean retryStatuses\? options: /);
    // The hedger's options, then the HTTP rules', and nothing after them.
    expect(typo).toMatch(/, retryMethods, retryStatuses, idempotencyKey, now, attemptHeader, name, breaker\), got an array of length 1$/);
  });

  it('a request’s options: only idempotencyKey; others are named', async () => {
    const { call } = hedged([]);
    const reject = async (options: unknown) => ((await call(URL_A, undefined, options as never).catch((e: unknown) => e)) as Error).message;
    expect(await reject({ bodyFactory: () => 'x' })).toBe('withHedging: bodyFactory is not supported by the hedging fetch: hedge requests whose body can be sent again, got a function');
    expect(await reject({ maxAttempts: 2 })).toBe('withHedging: maxAttempts is not a per-request option of the hedging fetch (idempotencyKey), got 2');
    expect(await reject('ab')).toBe('withHedging: options must be an object, got "ab"');
    expect(await reject(['x'])).toBe('withHedging: options must be an object, got an array of length 1');
    expect(await reject(null)).toBe('withHedging: options must be an object, got null');
  });

  it('a request’s idempotencyKey makes a POST hedged, with the same key on every attempt', async () => {
    const { clock, double, call } = hedged([503, 200]);
    const out = await settle(clock, call(URL_A, { method: 'POST', body: 'x' }, { idempotencyKey: () => '"hk"' }));
    expect((out.value as Response).status).toBe(200);
    expect(double.header('idempotency-key')).toEqual(['"hk"', '"hk"']);
  });

  it('an error the call raises is an InvalidOptionError as a rejection, never a throw', async () => {
    const { call } = hedged([]);
    let promise: Promise<Response> | undefined;
    expect(() => (promise = call(URL_A, 'bad' as never))).not.toThrow();
    expect(isInvalidOptionError(await promise!.catch((e: unknown) => e))).toBe(true);
  });
});
