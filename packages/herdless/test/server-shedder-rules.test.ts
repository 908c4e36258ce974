/**
 * herdless/server's rules without a socket: the attempt header as read, the shed answer's headers
 * and its whole-second rounding with scripted draws, the retry share with sources, the queue on a
 * ManualClock. The same rules on loopback are in server.test.ts and server-overload.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { ManualClock, markDoNotRetry, type Rng } from 'herdless';
import { LoadShedder, giveUpAnswer, type Admission } from 'herdless/server';
import { parseAttempt, requestSource, shedAnswer } from '../src/server/answers.js';

/** An Rng that returns `draws` in turn. */
function scripted(...draws: number[]): Rng {
  return {
    random: () => {
      const draw = draws.shift();
      if (draw === undefined) throw new Error('no draw left');
      return draw;
    },
  };
}

function admitted(admission: Admission | Promise<Admission>): Extract<Admission, { kind: 'admitted' }> {
  if (admission instanceof Promise || admission.kind !== 'admitted') throw new Error('not admitted at once');
  return admission;
}

describe('parseAttempt: the attempt header as read', () => {
  it.each([
    [undefined, 1],
    [null, 1],
    ['3', 3],
    [' 2 ', 2],
    ['\t7\t', 7],
    ['0', 1],
    ['999999999', 999_999_999],
    ['1234567890', 1], // more than 9 digits: unreadable, a first attempt
    ['-2', 1],
    ['2.5', 1],
    ['2x', 1],
    ['x2', 1],
    ['', 1],
    [['4', '5'], 4],
    [[], 1],
  ])('%j → %i', (value, attempt) => {
    expect(parseAttempt(value as never)).toBe(attempt);
  });
});

describe('requestSource', () => {
  it('without clientKey: unknown; with one: its string, anything else unknown; a throw is reported', () => {
    const plain = new LoadShedder({ maxInFlight: 1 }).config;
    expect(requestSource(plain, { ip: 'a' })).toBeUndefined();
    const reported: unknown[] = [];
    const keyed = new LoadShedder({
      maxInFlight: 1,
      clientKey: (req: { ip?: unknown }) => {
        if (req.ip === 'boom') throw new Error('no ip');
        return req.ip as string;
      },
      onHandlerError: (error) => reported.push(error),
    }).config;
    expect(requestSource(keyed, { ip: '10.0.0.1' })).toBe('10.0.0.1');
    expect(requestSource(keyed, { ip: 7 })).toBeUndefined();
    expect(requestSource(keyed, { ip: 'boom' })).toBeUndefined();
    expect(reported.map(String)).toEqual(['Error: no ip']);
  });
});

describe('shedAnswer', () => {
  const config = (retryAfterMs: number, random: Rng, jitter = true) => new LoadShedder({ maxInFlight: 1, retryAfterMs, random, retryAfterJitter: jitter }).config;

  it('without jitter: 503, retryAfterMs exactly, Retry-After its seconds rounded up; the mark only when asked', () => {
    expect(shedAnswer(config(1500, scripted(), false), false)).toEqual({
      status: 503,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '2', 'retry-after-ms': '1500' },
    });
    expect(shedAnswer(config(1500, scripted(), false), true).headers['x-herdless-retry']).toBe('no');
    expect(shedAnswer(config(0, scripted(), false), false).headers).toMatchObject({ 'retry-after': '0', 'retry-after-ms': '0' });
  });

  it('with jitter: retry-after-ms drawn in [retryAfterMs, 2 × retryAfterMs), rounded up to a whole ms', () => {
    expect(shedAnswer(config(1000, scripted(0.0005, 0.9)), false).headers['retry-after-ms']).toBe('1001'); // 1000.5
    expect(shedAnswer(config(1000, scripted(0, 0.9)), false).headers['retry-after-ms']).toBe('1000');
  });

  it('the seconds are rounded up with the probability of the fraction: 2.25 s is 3 below a draw of 0.25, 2 from it on', () => {
    // 1500 × (1 + 0.5) = 2250 ms: floor 2 s, fraction 0.25.
    expect(shedAnswer(config(1500, scripted(0.5, 0.2499)), false).headers).toMatchObject({ 'retry-after-ms': '2250', 'retry-after': '3' });
    expect(shedAnswer(config(1500, scripted(0.5, 0.25)), false).headers['retry-after']).toBe('2');
    expect(shedAnswer(config(1500, scripted(0.5, 0.9)), false).headers['retry-after']).toBe('2');
  });

  it('never below retryAfterMs rounded up: 1.5 s drawn as 1.5 s and rounded down is still 2', () => {
    expect(shedAnswer(config(1500, scripted(0, 0.9)), false).headers).toMatchObject({ 'retry-after-ms': '1500', 'retry-after': '2' });
  });
});

describe('the retry share', () => {
  it('is 0 before any request, then retries / requests over the window', () => {
    const shedder = new LoadShedder({ maxInFlight: 100, retryRatioWindow: 4 });
    expect(shedder.retryRatio()).toBe(0);
    admitted(shedder.admit(2));
    expect(shedder.retryRatio()).toBe(1);
    admitted(shedder.admit(1));
    admitted(shedder.admit(1));
    expect(shedder.retryRatio()).toBeCloseTo(1 / 3, 15);
    admitted(shedder.admit(3));
    admitted(shedder.admit(1)); // the first retry leaves the window
    expect(shedder.retryRatio()).toBe(0.25);
    expect(shedder.stats()).toMatchObject({ requests: 5, retriesSeen: 2 });
  });

  it('one source\'s retries count up to maxRetryRatio × the window; when it leaves the window, so does its count', () => {
    // Window 10, threshold 0.2: one source may count at most 2 retries.
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.2, retryRatioWindow: 10 });
    const held = admitted(shedder.admit(1));
    const shed = (attempt: number, source?: string) => shedder.admit(attempt, undefined, source) as Extract<Admission, { kind: 'shed' }>;
    for (let i = 0; i < 5; i++) shed(2, 'forger'); // 5 retries of one source
    for (let i = 0; i < 3; i++) shed(1, `client-${i}`);
    expect(shedder.retryRatio()).toBeCloseTo(5 / 9, 15);
    // With this request: 10 requests, 5 retries (0.5 > 0.2), but the forger counts 2 (0.2 × 10): 2 / 10 is not above 0.2.
    expect(shed(1, 'honest').doNotRetry).toBe(false);
    expect(shed(2, 'honest-a').doNotRetry).toBe(true); // a retry is always marked
    // An honest retry beside the forger's (capped at 2): 3 of 10 > 0.2.
    expect(shed(1, 'honest').doNotRetry).toBe(true);
    // The forger's retries slide out (10 newer first attempts): nothing left to cap.
    for (let i = 0; i < 10; i++) shed(1, 'late');
    expect(shedder.retryRatio()).toBe(0);
    for (let i = 0; i < 3; i++) shed(2, 'forger');
    // 3 forger retries in 10: capped at 2 → 0.2, not above.
    expect(shed(1, 'honest').doNotRetry).toBe(false);
    held.release();
  });

  it('a retry with no source counts in full', () => {
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.2, retryRatioWindow: 10 });
    admitted(shedder.admit(1));
    shedder.admit(2, undefined, 'forger');
    shedder.admit(2);
    // With this request: 4 requests, 2 retries; the forger's is capped at floor(0.2 × 4) = 0, the
    // unknown one counts in full: 1 / 4 = 0.25 > 0.2.
    expect((shedder.admit(1, undefined, 'x') as Extract<Admission, { kind: 'shed' }>).doNotRetry).toBe(true);
  });
});

describe('the queue (virtual time)', () => {
  it('a waiter that times out is shed with queue-timeout after maxQueueWaitMs, and leaves the queue', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 1, maxQueueWaitMs: 100, clock });
    const first = admitted(shedder.admit(1));
    const waiting = shedder.admit(2) as Promise<Admission>;
    expect(shedder.stats()).toMatchObject({ queued: 1, inFlight: 1 });
    await clock.advance(99);
    expect(shedder.stats().queued).toBe(1);
    await clock.advance(1);
    await expect(waiting).resolves.toEqual({ kind: 'shed', reason: 'queue-timeout', doNotRetry: true });
    expect(shedder.stats()).toMatchObject({ queued: 0, shed: 1, shedDoNotRetry: 1 });
    // The slot frees: nobody waits, nothing is admitted.
    first.release();
    first.release(); // a second release frees nothing more
    expect(shedder.stats()).toMatchObject({ inFlight: 0, admitted: 1 });
  });

  it('FIFO through many releases: the queue is compacted as it empties, and the order holds', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 50, maxQueueWaitMs: 1000, clock });
    let current = admitted(shedder.admit(1));
    const order: number[] = [];
    const waiters = Array.from({ length: 20 }, (_, i) => (shedder.admit(1) as Promise<Admission>).then((a) => (order.push(i), a)));
    for (let i = 0; i < 20; i++) {
      current.release();
      current = (await waiters[i]!) as Extract<Admission, { kind: 'admitted' }>;
      expect(shedder.stats()).toMatchObject({ inFlight: 1, queued: 19 - i });
    }
    expect(order).toEqual([...Array(20).keys()]);
    current.release();
    expect(shedder.stats()).toMatchObject({ inFlight: 0, queued: 0, admitted: 21, peakInFlight: 1 });
    expect(clock.pending).toBe(0);
  });

  it('a waiter abandoned in the middle of the queue: the ones after it keep their order', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 5, maxQueueWaitMs: 1000, clock });
    const first = admitted(shedder.admit(1));
    let leaveSecond: () => void = () => undefined;
    const a = shedder.admit(1) as Promise<Admission>;
    void shedder.admit(1, (gone) => (leaveSecond = gone));
    const c = shedder.admit(1) as Promise<Admission>;
    leaveSecond();
    leaveSecond(); // twice: counted once
    expect(shedder.stats()).toMatchObject({ queued: 2, abandoned: 1 });
    first.release();
    const second = admitted(await a);
    second.release();
    expect((await c).kind).toBe('admitted');
    expect(clock.pending).toBe(0); // every waiter's timer cleared
  });
});

describe('more of the shedder', () => {
  it('a queue whose head has moved on still takes maxQueue waiters', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 5, maxQueueWaitMs: 1000, clock });
    const first = admitted(shedder.admit(1));
    const waiters = Array.from({ length: 5 }, () => shedder.admit(1) as Promise<Admission>);
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', reason: 'queue-full' });
    first.release(); // the first waiter leaves the queue: 4 wait
    await waiters[0];
    expect(shedder.stats().queued).toBe(4);
    expect(shedder.admit(1)).toBeInstanceOf(Promise); // a 5th place is free
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', reason: 'queue-full' });
  });

  it('a waiter that timed out and whose client then leaves is not counted abandoned', async () => {
    const clock = new ManualClock();
    const shedder = new LoadShedder({ maxInFlight: 1, maxQueue: 1, maxQueueWaitMs: 50, clock });
    admitted(shedder.admit(1));
    let leave: () => void = () => undefined;
    const waiting = shedder.admit(1, (gone) => (leave = gone));
    await clock.advance(50);
    await expect(waiting).resolves.toMatchObject({ kind: 'shed', reason: 'queue-timeout' });
    leave();
    expect(shedder.stats()).toMatchObject({ abandoned: 0, shed: 1 });
  });

  it('peakInFlight is the most at once, not the latest', () => {
    const shedder = new LoadShedder({ maxInFlight: 5 });
    const held = [admitted(shedder.admit(1)), admitted(shedder.admit(1)), admitted(shedder.admit(1))];
    held[0]!.release();
    held[1]!.release();
    admitted(shedder.admit(1));
    expect(shedder.stats()).toMatchObject({ inFlight: 2, peakInFlight: 3 });
  });

  it('a source whose oldest retry leaves the window keeps its other retries capped', () => {
    // Window 10, threshold 0.2: a source counts at most 2 retries.
    const shedder = new LoadShedder({ maxInFlight: 1, maxRetryRatio: 0.2, retryRatioWindow: 10 });
    admitted(shedder.admit(1));
    const shed = (attempt: number, source?: string) => shedder.admit(attempt, undefined, source) as Extract<Admission, { kind: 'shed' }>;
    for (let i = 0; i < 4; i++) shed(2, 'forger');
    for (let i = 0; i < 5; i++) shed(1, 'first');
    expect(shed(1, 'honest').doNotRetry).toBe(false); // the held first attempt left: 4 forger retries, 2 counted
    expect(shed(1, 'honest').doNotRetry).toBe(false); // one forger retry left: 3, 2 counted
    expect(shedder.retryRatio()).toBe(0.3);
  });

  it('the adaptive limit: stats().limit follows it, and each release feeds it the latency on the clock', async () => {
    const clock = new ManualClock(1000);
    const shedder = new LoadShedder({ maxInFlight: 8, adaptiveLimit: { initialLimit: 2, windowSize: 2, smoothing: 1, queueSize: 1 }, clock });
    expect(shedder.stats().limit).toBe(2);
    const a = admitted(shedder.admit(1));
    const b = admitted(shedder.admit(1));
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed', reason: 'queue-full' });
    await clock.advance(10);
    a.release(); // 10 ms
    await clock.advance(20);
    b.release(); // 30 ms: mean 20 against the fastest 10 → gradient 0.5; 2 in use of 2 → + 1
    expect(shedder.stats().limit).toBe(2); // 2 × 0.5 + 1
    const c = admitted(shedder.admit(1));
    const d = admitted(shedder.admit(1));
    await clock.advance(10);
    c.release();
    d.release(); // 10 ms twice: gradient 1 → 2 + 1
    expect(shedder.stats().limit).toBe(3);
    expect([admitted(shedder.admit(1)), admitted(shedder.admit(1)), admitted(shedder.admit(1))]).toHaveLength(3);
    expect(shedder.admit(1)).toMatchObject({ kind: 'shed' });
  });

  it('a shed request without a telemetry observer reports nothing (no warning)', () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const shedder = new LoadShedder({ maxInFlight: 1 });
      admitted(shedder.admit(1));
      expect(shedder.admit(2)).toMatchObject({ kind: 'shed' });
      expect(emitWarning).not.toHaveBeenCalled();
    } finally {
      emitWarning.mockRestore();
    }
  });

  it('without adaptiveLimit the limit is maxInFlight', () => {
    expect(new LoadShedder({ maxInFlight: 7 }).stats().limit).toBe(7);
  });
});

describe('the event loop, as the shedder reads it', () => {
  const probe = (delayMs: number, utilization: number) => ({ delayMs: () => delayMs, utilization: () => utilization, close: () => {} });

  it('sheds above maxEventLoopDelayMs, not at it', () => {
    expect(new LoadShedder({ maxInFlight: 10, maxEventLoopDelayMs: 50, eventLoopDelay: probe(50, 0) }).admit(1)).toMatchObject({ kind: 'admitted' });
    expect(new LoadShedder({ maxInFlight: 10, maxEventLoopDelayMs: 50, eventLoopDelay: probe(50.5, 0) }).admit(2)).toEqual({ kind: 'shed', reason: 'event-loop-delay', doNotRetry: true });
  });

  it('sheds above maxEventLoopUtilization alone, not at it', () => {
    expect(new LoadShedder({ maxInFlight: 10, maxEventLoopUtilization: 0.8, eventLoopDelay: probe(1e6, 0.8) }).admit(1)).toMatchObject({ kind: 'admitted' });
    expect(new LoadShedder({ maxInFlight: 10, maxEventLoopUtilization: 0.8, eventLoopDelay: probe(0, 0.81) }).admit(1)).toMatchObject({ kind: 'shed', reason: 'event-loop-delay' });
  });

  it('a delay reading is not consulted when no threshold is set', () => {
    const shedder = new LoadShedder({ maxInFlight: 10, eventLoopDelay: probe(1e9, 1) });
    expect(shedder.admit(1)).toMatchObject({ kind: 'admitted' });
  });

  it('with a threshold and no reading of its own, the shedder makes a monitor and close() closes it; one passed in is the caller\'s', () => {
    const closed: string[] = [];
    const mine = new LoadShedder({ maxInFlight: 1, maxEventLoopDelayMs: 100, eventLoopDelay: { ...probe(0, 0), close: () => void closed.push('passed') } });
    mine.close();
    expect(closed).toEqual([]);
    const disabled: boolean[] = [];
    const real = process.getBuiltinModule.bind(process);
    const fakeHistogram = { enable() {}, disable: () => void disabled.push(true), reset() {}, count: 1, max: 500e6 };
    const fake = { monitorEventLoopDelay: () => fakeHistogram, performance: { now: () => 0, eventLoopUtilization: () => ({ utilization: 0, active: 0, idle: 0 }) } };
    const spy = vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => (id === 'node:perf_hooks' ? fake : real(id))) as never);
    try {
      const own = new LoadShedder({ maxInFlight: 1, maxEventLoopUtilization: 0.9 });
      expect(own.admit(1)).toMatchObject({ kind: 'admitted' }); // its own monitor: utilization 0
      own.close();
      own.close(); // idempotent
      expect(disabled.length).toBeGreaterThanOrEqual(1);
      new LoadShedder({ maxInFlight: 1 }).close(); // no monitor: nothing to close
    } finally {
      spy.mockRestore();
    }
  });
});

describe('giveUpAnswer: the downstream status', () => {
  const marked = (extra: object) => markDoNotRetry(Object.assign(new Error('gave up'), extra));
  it.each([
    [{ status: 400 }, 400],
    [{ status: 599 }, 599],
    [{ status: 399 }, 503],
    [{ status: 600 }, 503],
    [{ status: 429.5 }, 503],
    [{ status: '429' }, 503],
    [{ response: { status: 502 } }, 502],
    [{ cause: { status: 504 } }, 504],
    [{ response: null, cause: 7 }, 503],
    // The cause's response (a RetryError wrapping an HTTP client's error): the docs' fourth place.
    [{ cause: { response: { status: 429 } } }, 429],
    [{ cause: { cause: { status: 429 } } }, 429], // the cause's cause, read alike
    [{ cause: { cause: { cause: { status: 429 } } } }, 503], // no deeper: three levels
  ])('%j → %i', (extra, status) => {
    const answer = giveUpAnswer(marked(extra));
    expect(answer).toEqual({ status, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-herdless-retry': 'no' } });
  });
});
