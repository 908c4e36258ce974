// Adaptive throttling (the SRE book, "Handling Overload") asked by hedge() before every attempt, the
// first included: p = max(0, (requests − K × accepts) / (requests + 1)) over the window. Time is a
// ManualClock and each draw is given, so every figure below comes from that formula.
import { describe, expect, it } from 'vitest';
import { settle } from './support/settle.js';
import { ManualClock, adaptiveThrottling, createHedger, hedge, isHedgeError, markDoNotRetry, type HedgeContext, type Rng, type TelemetryEvent } from 'herdless';
import { PyRandom } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

const unavailable = (label: string) => Object.assign(new Error(label), { status: 503 });
const notFound = () => Object.assign(new Error('not found'), { status: 404 });

/** An rng that draws `xs` in turn, then fails the test if drawn again. */
function draws(...xs: number[]): Rng & { left(): number } {
  let i = 0;
  return {
    random: () => {
      if (i >= xs.length) throw new Error('drew more than expected');
      return xs[i++]!;
    },
    left: () => xs.length - i,
  };
}
/** An rng that must not be drawn from (the throttle refuses nothing). */
const noDraw: Rng = {
  random: (): number => {
    throw new Error('drew while nothing is refused');
  },
};

/** A throttle (K 2, a 10 s window, the book's rule uncapped unless `options` caps it) holding `requests` requests and `accepts` accepts at t = 0. */
function filled(requests: number, accepts: number, options: { maxRejectionProbability?: number } = {}) {
  const t = adaptiveThrottling({ windowMs: 10_000, buckets: 10, maxRejectionProbability: 1, ...options });
  for (let i = 0; i < requests; i++) t.admit(0, { random: () => 0.999_999 }, false);
  for (let i = 0; i < accepts; i++) t.onAnswer(0, true);
  return t;
}

/** Attempt n answers after `latencies[n-1]` ms with `r<n>`, or fails with `failures[n-1]`; aborts are honoured. */
function replicas(clock: ManualClock, latencies: readonly number[], failures: readonly unknown[] = []) {
  const started: number[] = [];
  const op = ({ attempt, signal }: HedgeContext): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      started.push(clock.now());
      const handle = clock.setTimeout(() => {
        const failure = failures[attempt - 1];
        if (failure !== undefined) reject(failure);
        else resolve(`r${attempt}`);
      }, latencies[attempt - 1] ?? 1_000_000);
      signal.addEventListener('abort', () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
  return { op, started };
}


const kinds = (events: TelemetryEvent[]) => events.map((e) => (e.type === 'attempt-end' ? `${e.type}:${e.attempt}:${e.outcome}` : 'attempt' in e ? `${e.type}:${e.attempt}` : e.type));

describe('hedge() with a throttle: the first try is asked too', () => {
  it('a refused first try ends the call unsent: HedgeError throttled, 0 attempts, no cause; the refusal is reported', async () => {
    const clock = new ManualClock();
    // 10 requests, 2 accepts: p = (10 − 4) / 11 = 6/11. A draw just under p is refused.
    const throttle = filled(10, 2);
    const { op, started } = replicas(clock, [10]);
    const events: TelemetryEvent[] = [];
    const gaveUp: unknown[] = [];
    const out = await settle(clock, hedge(op, { delayMs: 50, clock, throttle, random: draws(6 / 11 - 1e-9), telemetry: { onEvent: (e) => events.push(e) }, onGiveUp: (e) => gaveUp.push(e) }));
    expect(started).toEqual([]);
    expect(isHedgeError(out.error)).toBe(true);
    const error = out.error as import('herdless').HedgeError;
    expect([error.reason, error.attempts, error.hedges, error.cause]).toEqual(['throttled', 0, 0, undefined]);
    expect(error.message).toContain('adaptive throttling rejected the call locally: no attempt was sent');
    expect(out.at).toBe(0);
    expect(kinds(events)).toEqual(['throttle-rejection:1', 'give-up']);
    expect(events[0]).toMatchObject({ type: 'throttle-rejection', throttle: 'adaptive throttling', attempt: 1, call: { layer: 'hedge' } });
    expect(events[1]).toMatchObject({ type: 'give-up', reason: 'throttled', attempts: 0 });
    expect(gaveUp).toEqual([{ reason: 'throttled', attempts: 0, error: undefined }]);
    // The refused request counts: 11 requests now, and the next draw is judged against (11 − 4) / 12.
    expect(throttle.requestsInWindow(0)).toBe(11);
    expect(throttle.rejectionProbability(0)).toBeCloseTo(7 / 12, 12);
    expect(clock.pending).toBe(0);
  });

  it('a draw at p is admitted (the boundary of the formula), and a healthy throttle draws nothing', async () => {
    const clock = new ManualClock();
    const throttle = filled(10, 2);
    const rng = draws(6 / 11);
    const out = await settle(clock, hedge(replicas(clock, [10]).op, { delayMs: 50, clock, throttle, random: rng }));
    expect(out.value).toBe('r1');
    expect(rng.left()).toBe(0);
    // Healthy (p = 0): no draw at all, first try or hedge.
    const healthy = filled(10, 10);
    const both = await settle(clock, hedge(replicas(clock, [500, 20]).op, { delayMs: 50, clock, throttle: healthy, random: noDraw }));
    expect(both.value).toBe('r2');
  });

  it('maxRejectionProbability caps the first try only: the hedge is judged by the full probability', async () => {
    const clock = new ManualClock();
    // 99 requests, no accepts: p = 99/100 for a hedge, capped at 1 − 0.5 for the first try.
    const throttle = filled(99, 0, { maxRejectionProbability: 0.5 });
    const { op, started } = replicas(clock, [300, 20]);
    const events: TelemetryEvent[] = [];
    // 0.6 ≥ 0.5 admits the first try; against the hedge's p = (100 − 0) / 101 it is refused.
    const out = await settle(clock, hedge(op, { delayMs: 50, clock, throttle, random: draws(0.6, 0.6), telemetry: { onEvent: (e) => events.push(e) } }));
    expect(out).toEqual({ value: 'r1', at: 300 });
    expect(started).toEqual([0]);
    expect(kinds(events)).toEqual(['attempt-start:1', 'throttle-rejection:2', 'attempt-end:1:success']);
  });
});

describe('hedge() with a throttle: each hedge is asked, and a refused one is not sent', () => {
  it('a refused hedge: no hedge sent, no onHedge, the first attempt goes on and wins', async () => {
    const clock = new ManualClock();
    // 10 requests, 4 accepts: the first try sees p = 2/11 and draws 0.5 (sent); the hedge then sees
    // p = (11 − 8) / 12 = 1/4 and draws 0.2 (refused).
    const throttle = filled(10, 4);
    const { op, started } = replicas(clock, [500, 20]);
    const hedges: unknown[] = [];
    const events: TelemetryEvent[] = [];
    const out = await settle(clock, hedge(op, { delayMs: 50, clock, throttle, random: draws(0.5, 0.2), onHedge: (e) => hedges.push(e), telemetry: { onEvent: (e) => events.push(e) } }));
    expect(out).toEqual({ value: 'r1', at: 500 });
    expect(started).toEqual([0]);
    expect(hedges).toEqual([]);
    expect(kinds(events)).toEqual(['attempt-start:1', 'throttle-rejection:2', 'attempt-end:1:success']);
    // 12 requests (the refused hedge included), 5 accepts (the winner).
    expect([throttle.requestsInWindow(500), throttle.acceptsInWindow(500)]).toEqual([12, 5]);
  });

  it('a refused hedge, then the attempt in flight fails: the call gives up throttled with that failure as cause', async () => {
    const clock = new ManualClock();
    const throttle = filled(10, 4);
    const failure = unavailable('busy');
    const { op, started } = replicas(clock, [500], [failure]);
    const out = await settle(clock, hedge(op, { delayMs: 50, clock, throttle, random: draws(0.5, 0.2) }));
    const error = out.error as import('herdless').HedgeError;
    expect([error.reason, error.attempts, error.cause, out.at]).toEqual(['throttled', 1, failure, 500]);
    expect(error.message).toContain('adaptive throttling rejected the next hedge locally');
    expect(started).toEqual([0]);
    // The 503 is a rejection: accepts stay at 4.
    expect([throttle.requestsInWindow(500), throttle.acceptsInWindow(500)]).toEqual([12, 4]);
  });

  it('a hedge after a non-fatal failure is asked too: refused, the call ends throttled at once', async () => {
    const clock = new ManualClock();
    const throttle = filled(10, 4);
    const failure = unavailable('busy');
    const { op, started } = replicas(clock, [30, 20], [failure]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, clock, throttle, random: draws(0.5, 0.2) }));
    expect(started).toEqual([0]);
    expect((out.error as import('herdless').HedgeError).reason).toBe('throttled');
    expect(out.at).toBe(30);
    expect(clock.pending).toBe(0);
  });

  it('the hedge asked at the delay counts as a retry (isRetry) and, admitted, is sent and reported', async () => {
    const clock = new ManualClock();
    const calls: [number, boolean][] = [];
    const throttle = { name: 'spy', admit: (now: number, _rng: Rng, isRetry: boolean) => (calls.push([now, isRetry]), true), onAnswer: () => undefined };
    const { op, started } = replicas(clock, [500, 500, 20]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, clock, throttle }));
    expect(out).toEqual({ value: 'r3', at: 120 });
    expect(started).toEqual([0, 50, 100]);
    expect(calls).toEqual([
      [0, false],
      [50, true],
      [100, true],
    ]);
  });
});

describe("hedge() with a throttle: answers follow the classification (isAcceptedVerdict, as retry())", () => {
  /** Runs one call and returns what it told the throttle. */
  async function answers(latencies: number[], failures: unknown[], options: Record<string, unknown> = {}): Promise<boolean[]> {
    const clock = new ManualClock();
    const told: boolean[] = [];
    const throttle = { name: 'spy', admit: () => true, onAnswer: (_now: number, accepted: boolean) => void told.push(accepted) };
    await settle(clock, hedge(replicas(clock, latencies, failures).op, { delayMs: 50, maxAttempts: 3, clock, throttle, ...options }));
    return told;
  }

  it('the winner is accepted; the loser, aborted, reports nothing', async () => {
    expect(await answers([500, 20], [])).toEqual([true]);
  });
  it('a 503 is a rejection, the hedge that follows it at once and wins an accept', async () => {
    expect(await answers([10, 20], [unavailable('busy')])).toEqual([false, true]);
  });
  it('a 404 (fatal, not about load) is an accept', async () => {
    expect(await answers([10], [notFound()])).toEqual([true]);
  });
  it('a 503 that retryable calls fatal is still the backend refusing: a rejection', async () => {
    expect(await answers([10], [unavailable('busy')], { retryable: () => false })).toEqual([false]);
  });
  it('"do not retry" pushback is a rejection', async () => {
    expect(await answers([10, 20], [markDoNotRetry(unavailable('overloaded'))])).toEqual([false]);
  });
  it("the caller's abort reports nothing", async () => {
    const clock = new ManualClock();
    const told: boolean[] = [];
    const throttle = { name: 'spy', admit: () => true, onAnswer: (_n: number, a: boolean) => void told.push(a) };
    const controller = new AbortController();
    const call = hedge(replicas(clock, [500, 500]).op, { delayMs: 50, clock, throttle, signal: controller.signal });
    clock.setTimeout(() => controller.abort(new Error('bye')), 100);
    const out = await settle(clock, call);
    expect((out.error as Error).message).toBe('bye');
    expect(told).toEqual([]);
  });
});

describe('hedge() with a throttle under an outage (virtual time, K = 2, a 10 s window)', () => {
  it('a backend that refuses everything for 10 s: what reaches it collapses; after recovery, full traffic returns', async () => {
    const clock = new ManualClock();
    const throttle = adaptiveThrottling({ k: 2, windowMs: 10_000, buckets: 10, maxRejectionProbability: 0.9 });
    const down = (t: number) => t >= 10_000 && t < 20_000;
    /** Attempts that reached the backend, per virtual second. */
    const received = new Array<number>(50).fill(0);
    const hedged = createHedger({ delayMs: 50, maxAttempts: 2, clock, throttle, random: new PyRandom(7) });
    // The backend answers after 5 ms: a 503 while down, else OK.
    const op = ({ signal }: HedgeContext) =>
      new Promise<string>((resolve, reject) => {
        const refusing = down(clock.now());
        received[Math.floor(clock.now() / 1000)]!++;
        const h = clock.setTimeout(() => (refusing ? reject(unavailable('down')) : resolve('ok')), 5);
        signal.addEventListener('abort', () => (clock.clearTimeout(h), reject(signal.reason)));
      });
    // One call every 10 ms for 50 s. While down, each call wants 2 attempts (the 503 sends the hedge at once).
    const ok = new Array<number>(50).fill(0);
    for (let t = 0; t < 50_000; t += 10) {
      const second = Math.floor(t / 1000);
      hedged(op).then(
        () => ok[second]!++,
        (error: unknown) => {
          if (!isHedgeError(error)) throw error;
        },
      );
      await clock.advance(10);
    }
    await clock.advance(100);
    const sum = (a: number[], from: number, to: number) => a.slice(from, to).reduce((x, y) => x + y, 0);
    // Healthy: 100 calls a second, each one attempt, every one answered.
    expect(sum(received, 0, 10)).toBe(1000);
    expect(sum(ok, 0, 10)).toBe(1000);
    // The outage offers 2,000 attempts (1,000 calls × 2). For its first seconds the window's accepts
    // from before it still cover requests / K (200 a second pass); then the rate falls to the
    // floor's trickle of first tries, hedges included in the refusals. On this seed, per second:
    // 200 200 200 176 124 82 50 34 15 9 — 1,090 of the 2,000.
    expect(received.slice(10, 13)).toEqual([200, 200, 200]);
    expect(sum(received, 10, 20)).toBeLessThan(2000 * 0.6);
    expect(received[19]).toBeLessThanOrEqual(20);
    expect(sum(ok, 10, 20)).toBe(0);
    // After it: 6–30 a second at first, back to 100 by 39 s. Recovered: every call of the last 10 s
    // is sent and answered, and nothing is refused any more.
    for (let s = 40; s < 50; s++) expect([s, received[s], ok[s]]).toEqual([s, 100, 100]);
    expect(throttle.rejectionProbability(clock.now())).toBe(0);
  });
});

describe('hedge() throttle options', () => {
  it('throttle and random are checked, and misspelt names get a suggestion', () => {
    const op = () => 1;
    expect(invalidOption(() => hedge(op, { delayMs: 5, throttle: {} as never })).message).toContain('throttle');
    expect(invalidOption(() => hedge(op, { delayMs: 5, throttle: {} as never })).message).toContain('must be an AttemptThrottle (admit, onAnswer)');
    expect(invalidOption(() => createHedger({ delayMs: 5, random: 3 as never })).message).toContain('must be an Rng');
    expect(invalidOption(() => hedge(op, { delayMs: 5, throtle: adaptiveThrottling() } as never)).message).toContain('did you mean throttle?');
  });

  it('a random that draws outside [0, 1) fails the attempt, naming it', async () => {
    const clock = new ManualClock();
    // 10 requests, no accepts: the first try draws, and a draw of 2 is no probability.
    const out = await settle(clock, Promise.resolve().then(() => hedge(replicas(clock, [10]).op, { delayMs: 5, clock, throttle: filled(10, 0), random: { random: () => 2 } })));
    expect(String(out.error)).toMatch(/random/);
  });

  it('a throttle that throws when asked about a hedge (from the timer) ends the call with its error: the attempt in flight is aborted, nothing escapes', async () => {
    const clock = new ManualClock();
    const broken = new Error('throttle broke');
    const throttle = { name: 'broken', admit: (_now: number, _rng: Rng, isRetry: boolean) => { if (isRetry) throw broken; return true; }, onAnswer: () => undefined };
    const aborted: unknown[] = [];
    const op = ({ signal }: HedgeContext) => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => (aborted.push(signal.reason), reject(signal.reason))));
    const out = await settle(clock, hedge(op, { delayMs: 50, clock, throttle }));
    expect(out).toEqual({ error: broken, at: 50 });
    expect(aborted).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });
});
