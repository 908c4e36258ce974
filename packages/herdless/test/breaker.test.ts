import { describe, expect, it } from 'vitest';
import { markDoNotRetry, ManualClock as VirtualClock, CircuitOpenError, circuitBreaker, consecutiveFailures, failureRatio, isCircuitOpenError, isHerdlessError, isInvalidOptionError, type BreakerCallContext, type CircuitBreaker, type CircuitBreakerOptions } from 'herdless';
import { DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS } from 'herdless/core';

interface ManualClock {
  t: number;
  now(): number;
}
const manualClock = (t = 0): ManualClock => ({
  t,
  now() {
    return this.t;
  },
});

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every already-settled promise run its handlers. */
const flush = () => new Promise<void>((r) => setImmediate(r));

/** A failure the shared classification counts: the dependency answered 503. */
const unavailable = (message: string) => Object.assign(new Error(message), { status: 503 });
const failing = () => Promise.reject(unavailable('down'));

/** A breaker that opens on one failure, opened at t = 0, half-open from t = 1000. */
async function openBreaker(options: CircuitBreakerOptions = {}) {
  const clock = manualClock();
  const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000, clock, ...options });
  await expect(breaker.execute(failing)).rejects.toThrow('down');
  expect(breaker.state).toBe('open');
  return { clock, breaker };
}

/** Starts n calls in the same tick; returns how many reached the operation and every outcome. */
function stampede(breaker: CircuitBreaker, n: number, op: (ctx: BreakerCallContext) => Promise<unknown>) {
  let reached = 0;
  const outcomes = Array.from({ length: n }, () => {
    const p = breaker.execute((ctx) => {
      reached++;
      return op(ctx);
    });
    const settled = { error: undefined as unknown, done: false };
    p.then(
      () => (settled.done = true),
      (e: unknown) => {
        settled.done = true;
        settled.error = e;
      },
    );
    return settled;
  });
  return { reached: () => reached, outcomes };
}

describe('half-open under 1 000 concurrent calls', () => {
  it('exactly 1 reaches the operation, 999 are refused fast; the failed trial reopens with the timer restarted', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 1000;
    const trial = deferred();
    const s = stampede(breaker, 1000, () => trial.promise);
    expect(s.reached()).toBe(1);
    await flush();
    const refused = s.outcomes.filter((o) => o.done);
    expect(refused).toHaveLength(999);
    for (const o of refused) {
      expect(isCircuitOpenError(o.error)).toBe(true);
      expect(o.error).toMatchObject({ state: 'half-open', retryAfterMs: 1000, doNotRetry: true });
    }
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 1 });

    clock.t = 1005;
    trial.reject(unavailable('still down'));
    await flush();
    expect(s.outcomes.filter((o) => o.done)).toHaveLength(1000);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', remainingOpenMs: 1000, openings: 2 });

    clock.t = 2004;
    const early = stampede(breaker, 1000, () => Promise.resolve());
    expect(early.reached()).toBe(0);
    await flush();
    expect(early.outcomes.every((o) => isCircuitOpenError(o.error) && (o.error as CircuitOpenError).retryAfterMs === 1)).toBe(true);

    clock.t = 2005;
    const next = deferred();
    const again = stampede(breaker, 1000, () => next.promise);
    expect(again.reached()).toBe(1);
    next.resolve();
    await flush();
    expect(breaker.state).toBe('closed');
  });

  it('with halfOpenMaxCalls 3, exactly 3 reach it; 3 successes close it', async () => {
    const { clock, breaker } = await openBreaker({ halfOpenMaxCalls: 3 });
    clock.t = 1000;
    const trials: (() => void)[] = [];
    const s = stampede(breaker, 1000, () => new Promise<void>((r) => trials.push(r)));
    expect(s.reached()).toBe(3);
    await flush();
    expect(s.outcomes.filter((o) => isCircuitOpenError(o.error))).toHaveLength(997);
    trials[0]!();
    trials[1]!();
    await flush();
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 1, halfOpenSuccesses: 2 });
    trials[2]!();
    await flush();
    expect(breaker.state).toBe('closed');
  });
});

describe('abort', () => {
  it('a trial whose caller aborts frees its permit at once, counted neither way', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 1000;
    const controller = new AbortController();
    const hung = deferred();
    let seenSignal: AbortSignal | undefined;
    const call = breaker.execute(
      ({ signal, trial }) => {
        seenSignal = signal;
        expect(trial).toBe(true);
        return hung.promise; // ignores the signal
      },
      { signal: controller.signal },
    );
    expect(seenSignal).toBe(controller.signal);
    await expect(breaker.execute(() => 1)).rejects.toSatisfy(isCircuitOpenError);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, halfOpenSuccesses: 0 });
    // The hung operation finishing later changes nothing.
    hung.resolve();
    await flush();
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, halfOpenSuccesses: 0 });
    // The next caller gets the trial.
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('an operation that rejects with the abort reason is not counted either', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 1000;
    const controller = new AbortController();
    const call = breaker.execute(
      ({ signal }) =>
        new Promise((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason))),
      { signal: controller.signal },
    );
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, openings: 1 });
  });

  it('an already-aborted signal rejects without running or taking a permit', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 1000;
    const controller = new AbortController();
    controller.abort('stop');
    let ran = false;
    await expect(breaker.execute(() => (ran = true), { signal: controller.signal })).rejects.toBe('stop');
    expect(ran).toBe(false);
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 0 });
  });

  it('aborting after the call settled changes nothing', async () => {
    const clock = manualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock });
    const controller = new AbortController();
    await expect(breaker.execute(() => Promise.resolve(7), { signal: controller.signal })).resolves.toBe(7);
    controller.abort();
    expect(breaker.state).toBe('closed');
  });

  it('a closed-state call aborted while in flight is not counted as a failure', async () => {
    const clock = manualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock });
    const controller = new AbortController();
    const call = breaker.execute(() => new Promise(() => {}), { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toBeDefined();
    expect(breaker.state).toBe('closed');
  });
});

describe('classification', () => {
  it('by default it counts what retry() would retry, synchronous throws included; fatal errors are not failures', async () => {
    const clock = manualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), clock });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    await expect(
      breaker.execute(() => {
        throw reset;
      }),
    ).rejects.toBe(reset);
    expect(breaker.snapshot().counts).toMatchObject({ consecutiveFailures: 1 });
    // A bug (TypeError) and a 404: the dependency answered; they reset the streak.
    const bug = new TypeError('x is not a function');
    await expect(breaker.execute(() => Promise.reject(bug))).rejects.toBe(bug);
    await expect(breaker.execute(() => Promise.reject(Object.assign(new Error('404'), { status: 404 })))).rejects.toThrow('404');
    expect(breaker.snapshot().counts).toMatchObject({ consecutiveFailures: 0 });
    await expect(breaker.execute(failing)).rejects.toThrow('down');
    // "Overloaded; don't retry" is a failure of the dependency too.
    await expect(breaker.execute(() => Promise.reject(markDoNotRetry(new Error('overloaded'))))).rejects.toThrow('overloaded');
    expect(breaker.state).toBe('open');
  });

  it('errors isFailure rejects count as successes (the dependency answered)', async () => {
    const clock = manualClock();
    const notFound = Object.assign(new Error('404'), { status: 404 });
    const breaker = circuitBreaker({
      counting: consecutiveFailures({ threshold: 2 }),
      clock,
      isFailure: (e) => (e as { status?: number }).status !== 404,
    });
    await expect(breaker.execute(failing)).rejects.toThrow();
    await expect(breaker.execute(() => Promise.reject(notFound))).rejects.toBe(notFound);
    await expect(breaker.execute(failing)).rejects.toThrow();
    expect(breaker.state).toBe('closed');
  });

  it('a nested breaker’s refusal is never counted, whatever isFailure says', async () => {
    const inner = await openBreaker();
    const outer = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock: manualClock(), isFailure: () => true });
    for (let i = 0; i < 5; i++) await expect(outer.execute(() => inner.breaker.execute(() => 1))).rejects.toSatisfy(isCircuitOpenError);
    expect(outer.state).toBe('closed');
    expect(outer.snapshot().counts).toMatchObject({ consecutiveFailures: 0 });
  });

  it('isResultFailure counts returned values as failures and still returns them', async () => {
    const clock = manualClock();
    const breaker = circuitBreaker({
      counting: consecutiveFailures({ threshold: 2 }),
      clock,
      isResultFailure: (r) => (r as { status: number }).status >= 500,
    });
    await expect(breaker.execute(() => ({ status: 503 }))).resolves.toEqual({ status: 503 });
    await expect(breaker.execute(async () => ({ status: 200 }))).resolves.toEqual({ status: 200 });
    await breaker.execute(() => ({ status: 500 }));
    expect(breaker.state).toBe('closed');
    await breaker.execute(() => ({ status: 502 }));
    expect(breaker.state).toBe('open');
  });

  it('a classifier that throws rejects with its error and gives the permit back uncounted', async () => {
    let broken = false;
    const { clock, breaker } = await openBreaker({
      isFailure: () => {
        if (broken) throw new Error('classifier bug');
        return true;
      },
    });
    clock.t = 1000;
    broken = true;
    await expect(breaker.execute(failing)).rejects.toThrow('classifier bug');
    expect(breaker.snapshot()).toMatchObject({ state: 'half-open', halfOpenInFlight: 0, openings: 1 });
  });

  // Without a signal a call takes a lighter path (one .then(), shared contexts); with one, the
  // abortable path. Both must count the same outcomes, the same way.
  const paths: [string, () => { signal?: AbortSignal }][] = [
    ['without a signal', () => ({})],
    ['with a signal', () => ({ signal: new AbortController().signal })],
  ];
  describe.each(paths)('%s', (_path, callOptions) => {
    it('a plain value is counted before execute() returns; a thenable is adopted', async () => {
      const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock: manualClock(), isResultFailure: (r) => r === 'bad' });
      const pending = breaker.execute(() => 'bad', callOptions());
      expect(breaker.state).toBe('open');
      await expect(pending).resolves.toBe('bad');
      const other = circuitBreaker({ clock: manualClock() });
      const thenable = { then: (resolve: (v: string) => void) => resolve('adopted') };
      await expect(other.execute(() => thenable, callOptions())).resolves.toBe('adopted');
      const hostile = {
        get then(): never {
          throw new Error('then getter');
        },
      };
      await expect(other.execute(() => hostile, callOptions())).rejects.toThrow('then getter');
    });

    it('a synchronous throw is counted and rethrown as a rejection; a classifier error on a value or a throw rejects uncounted', async () => {
      const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), clock: manualClock() });
      const sync = breaker.execute(() => {
        throw unavailable('sync');
      }, callOptions());
      expect(breaker.snapshot()).toMatchObject({ state: 'closed' });
      await expect(sync).rejects.toThrow('sync');
      await expect(breaker.execute(failing, callOptions())).rejects.toThrow('down');
      expect(breaker.state).toBe('open');

      const broken = circuitBreaker({
        counting: consecutiveFailures({ threshold: 1 }),
        clock: manualClock(),
        isResultFailure: () => {
          throw new Error('result classifier bug');
        },
        isFailure: () => {
          throw new Error('error classifier bug');
        },
      });
      await expect(broken.execute(async () => 1, callOptions())).rejects.toThrow('result classifier bug');
      await expect(broken.execute(() => 1, callOptions())).rejects.toThrow('result classifier bug');
      await expect(broken.execute(failing, callOptions())).rejects.toThrow('error classifier bug');
      await expect(
        broken.execute(() => {
          throw unavailable('sync');
        }, callOptions()),
      ).rejects.toThrow('error classifier bug');
      expect(broken.snapshot()).toMatchObject({ state: 'closed', halfOpenInFlight: 0 });
    });

    it('the context says whether the call is a half-open trial', async () => {
      const { clock, breaker } = await openBreaker();
      clock.t = 1000;
      const seen: BreakerCallContext[] = [];
      await breaker.execute(async (ctx) => seen.push(ctx), callOptions());
      await breaker.execute(async (ctx) => seen.push(ctx), callOptions());
      expect(seen.map((ctx) => ctx.trial)).toEqual([true, false]);
      // Always a signal (fetch(url, { signal }) needs no check); without the caller's, one that never aborts.
      expect(seen.every((ctx) => ctx.signal instanceof AbortSignal && !ctx.signal.aborted)).toBe(true);
    });
  });

  it('reads the clock only when the time matters: not for closed-state calls a consecutive count records', async () => {
    let reads = 0;
    let t = 0;
    const clock = {
      now() {
        reads++;
        return t;
      },
    };
    const opened: number[] = [];
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 2 }), openDurationMs: 1000, clock });
    breaker.on('open', (e) => opened.push(e.at));
    await breaker.execute(async () => 1);
    await expect(breaker.execute(failing)).rejects.toThrow('down');
    expect(reads).toBe(0);
    t = 50;
    // The second failure opens it: the time is read then, and stamps the event and the open period.
    await expect(breaker.execute(failing)).rejects.toThrow('down');
    expect(opened).toEqual([50]);
    expect(reads).toBeGreaterThan(0);
    // Open: every admission reads the clock (has the open period ended?).
    reads = 0;
    t = 500;
    await expect(breaker.execute(async () => 1)).rejects.toSatisfy(isCircuitOpenError);
    expect(reads).toBe(1);
    t = 1050;
    await breaker.execute(async () => 1);
    expect(breaker.snapshot()).toMatchObject({ state: 'closed' });

    // A failure ratio needs the time of every outcome.
    reads = 0;
    const ratio = circuitBreaker({ counting: failureRatio({ ratio: 0.5, windowMs: 1000, minimumCalls: 10 }), clock });
    await ratio.execute(async () => 1);
    expect(reads).toBe(1);
  });

  it("a custom openDurationMs backoff's bad delay rejects the opening call with an InvalidOptionError whose cause is the failure", async () => {
    const breaker = circuitBreaker({
      counting: consecutiveFailures({ threshold: 1 }),
      openDurationMs: { name: 'broken', maxDelayMs: 1000, delay: () => Number.NaN, toJSON: () => ({ kind: 'constant', delayMs: 0 }) },
      clock: manualClock(),
    });
    const error = await breaker.execute(failing).catch((e: unknown) => e);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^circuitBreaker: backoff\.delay\(\) must return a number of ms/);
    expect(((error as Error).cause as Error).message).toBe('down');
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', openings: 0 });
  });

  it('a non-function operation is an InvalidOptionError, not a counted failure', async () => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), clock: manualClock() });
    await expect(breaker.execute(42 as never)).rejects.toSatisfy(isInvalidOptionError);
    expect(breaker.state).toBe('closed');
  });
});

describe('CircuitOpenError', () => {
  it('is coded, branded, marked doNotRetry and keeps the failure that opened the breaker as cause', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 400;
    const e = await breaker.execute(() => 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CircuitOpenError);
    expect(isHerdlessError(e, 'ERR_HERDLESS_CIRCUIT_OPEN')).toBe(true);
    expect(e).toMatchObject({ name: 'CircuitOpenError', code: 'ERR_HERDLESS_CIRCUIT_OPEN', state: 'open', retryAfterMs: 600, doNotRetry: true });
    expect(((e as Error).cause as Error).message).toBe('down');
    expect((e as Error).message).toBe('circuit breaker is open: next trial call in 600 ms');
  });

  it('retryAfterMs is whole ms, rounded up, on a clock with fractions of a ms (performance.now())', async () => {
    const { clock, breaker } = await openBreaker();
    clock.t = 400.25; // 599.75 ms to the trial
    const e = (await breaker.execute(() => 1).catch((x: unknown) => x)) as CircuitOpenError;
    expect(e.retryAfterMs).toBe(600);
    expect(e.message).toBe('circuit breaker is open: next trial call in 600 ms');
    clock.t = 999.999;
    expect(((await breaker.execute(() => 1).catch((x: unknown) => x)) as CircuitOpenError).retryAfterMs).toBe(1);
    clock.t += 1; // waited what it said: the trial is admitted
    await expect(breaker.execute(() => 'back')).resolves.toBe('back');
  });

  it('an error made from a fractional wait keeps whole ms (Infinity stays Infinity)', () => {
    expect(new CircuitOpenError('open', 10.0001).retryAfterMs).toBe(11);
    expect(new CircuitOpenError('half-open', 250).retryAfterMs).toBe(250);
    expect(new CircuitOpenError('open', Infinity, { isolated: true }).retryAfterMs).toBe(Infinity);
  });

  it('the guard recognises an error from another copy of herdless, and nothing else', () => {
    const foreign = Object.assign(new Error('x'), { code: 'ERR_HERDLESS_CIRCUIT_OPEN' });
    Object.defineProperty(foreign, Symbol.for('herdless.error'), { value: true });
    expect(isCircuitOpenError(foreign)).toBe(true);
    expect(isCircuitOpenError(Object.assign(new Error('x'), { code: 'ERR_HERDLESS_CIRCUIT_OPEN' }))).toBe(false);
    expect(isCircuitOpenError(new CircuitOpenError('open', 5))).toBe(true);
    expect(isCircuitOpenError(null)).toBe(false);
  });

  it('closing forgets the cause; a result failure leaves none', async () => {
    const { clock, breaker } = await openBreaker({ isResultFailure: (r) => r === 'bad' });
    clock.t = 1000;
    await breaker.execute(() => 'good');
    expect(breaker.state).toBe('closed');
    await expect(breaker.execute(() => 'bad')).resolves.toBe('bad');
    const e = await breaker.execute(() => 1).catch((x: unknown) => x);
    expect(isCircuitOpenError(e)).toBe(true);
    expect((e as Error).cause).toBeUndefined();
  });
});

describe('shell', () => {
  it('snapshot and JSON.stringify read the clock', async () => {
    const { clock, breaker } = await openBreaker();
    expect(JSON.parse(JSON.stringify(breaker))).toMatchObject({ state: 'open', remainingOpenMs: 1000 });
    clock.t = 1000;
    expect(breaker.toJSON().state).toBe('half-open');
  });

  it('events reach listeners; unsubscribe works', async () => {
    const clock = manualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 10, clock });
    const seen: string[] = [];
    const off = breaker.onStateChange((e) => seen.push(`${e.from}→${e.type}@${e.at}`));
    breaker.on('open', (e) => seen.push(`open until ${e.nextTrialAt}`));
    await breaker.execute(failing).catch(() => {});
    clock.t = 10;
    await breaker.execute(() => 1);
    off();
    await breaker.execute(failing).catch(() => {});
    expect(seen).toEqual(['open until 10', 'closed→open@0', 'open→half-open@10', 'half-open→close@10', 'open until 20']);
  });

  it.each([
    [null, 'circuitBreaker.execute: options must be an object, got null'],
    ['fast', 'circuitBreaker.execute: options must be an object, got "fast"'],
    [{ sigal: 1 }, 'circuitBreaker.execute: sigal is not an option of circuitBreaker.execute (did you mean signal? options: signal), got 1'],
    [{ signal: 5 }, 'circuitBreaker.execute: signal must be an AbortSignal, got 5'],
    [{ signal: {} }, 'circuitBreaker.execute: signal must be an AbortSignal, got an object (Object)'],
  ])('execute(fn, %j) rejects with an InvalidOptionError naming the field, fn not called, nothing counted', async (options, message) => {
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }) });
    let calls = 0;
    const error = await breaker.execute(() => ++calls, options as never).catch((e: unknown) => e);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe(message);
    expect(calls).toBe(0);
    expect(breaker.state).toBe('closed');
    await expect(breaker.execute(() => 'ok', {})).resolves.toBe('ok');
  });

  it('runs with the default clock and random source', async () => {
    const breaker = circuitBreaker();
    await expect(breaker.execute(() => 'x')).resolves.toBe('x');
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', counts: { consecutiveFailures: 0, threshold: 5 } });
  });
});

describe('a half-open trial that never settles', () => {
  const down = (): Error => Object.assign(new Error('down'), { code: 'ECONNRESET' });
  const hung = () => new Promise<never>(() => undefined);

  it('expires after halfOpenTrialTimeoutMs (default 60 000): counted as a failed trial, the breaker reopens then and half-opens one open duration later', async () => {
    const clock = new VirtualClock();
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 5000 });
    const events: string[] = [];
    breaker.onStateChange((e) => events.push(`${e.type}@${e.at}`));
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(5000);
    void breaker.execute(hung); // the trial, at 5 000: it never settles
    await expect(breaker.execute(() => 'refused')).rejects.toBeInstanceOf(CircuitOpenError);
    await clock.advance(59_999);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(() => 'still refused')).rejects.toBeInstanceOf(CircuitOpenError);
    await clock.advance(1); // 65 000: the trial expired; reopened at 65 000 for 5 000 ms
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', remainingOpenMs: 5000, openings: 2 });
    await clock.advance(5000);
    await expect(breaker.execute(() => 'a new trial')).resolves.toBe('a new trial');
    expect(breaker.state).toBe('closed');
    expect(events).toEqual(['open@0', 'half-open@5000', 'open@65000', 'half-open@70000', 'close@70000']);
  });

  it('an hour later: the first call is the new trial (the expiry is dated at the limit, not at the call)', async () => {
    const clock = new VirtualClock();
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 5000, halfOpenTrialTimeoutMs: 10_000 });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(5000);
    void breaker.execute(hung);
    await clock.advance(3_600_000);
    await expect(breaker.execute(() => 'admitted')).resolves.toBe('admitted');
    expect(breaker.state).toBe('closed');
  });

  it('a trial that settles after it expired is ignored (a late success does not close the breaker)', async () => {
    const clock = new VirtualClock();
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 5000, halfOpenTrialTimeoutMs: 1000 });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(5000);
    let finish!: (v: string) => void;
    const late = breaker.execute(() => new Promise<string>((r) => (finish = r)));
    await clock.advance(1500); // expired at 6 000: reopened until 11 000
    finish('late');
    await expect(late).resolves.toBe('late'); // the caller still gets its value
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot()).toMatchObject({ remainingOpenMs: 11_000 - 6500 });
  });

  it('halfOpenTrialTimeoutMs: Infinity keeps the old behaviour; invalid values are named', async () => {
    const clock = new VirtualClock();
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 5000, halfOpenTrialTimeoutMs: Infinity });
    await breaker.execute(() => Promise.reject(down())).catch(() => undefined);
    await clock.advance(5000);
    void breaker.execute(hung);
    await clock.advance(3_600_000);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(() => 'x')).rejects.toBeInstanceOf(CircuitOpenError);
    for (const bad of [0, -1, Number.NaN, '60s']) {
      expect(() => circuitBreaker({ halfOpenTrialTimeoutMs: bad as never })).toThrow(/^circuitBreaker: halfOpenTrialTimeoutMs must be /);
    }
    expect(DEFAULT_HALF_OPEN_TRIAL_TIMEOUT_MS).toBe(60_000);
  });
});
