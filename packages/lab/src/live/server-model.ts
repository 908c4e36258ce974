import type { ServerModel } from 'herdless/sim';

/** The answer to one request: 200 (served) or 503 (down, crashed, or over the tick's capacity). */
export type LiveVerdict = 200 | 503;

/** What the live server records per window (100 ms for the article's server), from its time 0. */
export interface LiveServerStats {
  /** The length of one tick and of one window, ms. */
  tickMs: number;
  windowMs: number;
  /** The index of the first window kept (windows older than {@link MAX_WINDOWS} are dropped). */
  firstWindow: number;
  /** Per window: requests that arrived, requests answered 200, crashes that began. */
  arrivals: number[];
  successes: number[];
  crashes: number[];
  /** When each crash began, ms from time 0 (a multiple of tickMs), the latest {@link MAX_WINDOWS} windows' only. */
  crashAtMs: number[];
  /** Totals since time 0 (dropped windows included). */
  totals: { arrivals: number; successes: number; crashes: number };
  /** Ticks decided so far (the server's clock, in ticks). */
  ticks: number;
}

/** Windows kept by the stats: one hour of 100 ms windows, so a server left running does not grow without bound. */
export const MAX_WINDOWS = 36_000;

/**
 * The article's server model in real time: the same rules as the simulator's (S1–S2 of the lab
 * model), fed by arrival times instead of a virtual batch.
 *
 * A request belongs to the tick in which it arrived (`floor((now − start) / tickMs)`); a tick is
 * decided once it is over, by {@link advance}: its batch size goes into the crash window, the
 * crash rule runs, and then — the server being up — the first `capacityPerTick` arrivals of the
 * batch get 200 and the rest 503. First come, first served replaces the model's random sample:
 * over real sockets, arrival order is already the noise the sample stands for. Every request
 * is answered when its tick is decided, so a response leaves at most one tick (plus timer lateness)
 * after its arrival — the live counterpart of the model's "the retry joins tick t + 1 + wait".
 *
 * This class holds no timer and reads no clock: the caller passes `now` (ms, monotonic).
 */
export class LiveServerModel<R> {
  private readonly tickMs: number;
  private readonly windowTicks: number;
  private readonly restartTicks: number;
  private readonly outages: { start: number; end: number }[];
  private start: number;
  private next = 0;
  private downUntil = 0;
  private recent: Int32Array;
  private recentSum = 0;
  /** Requests waiting for their tick's decision, in arrival order, with their tick. */
  private pending: { tick: number; request: R }[] = [];
  private stats!: LiveServerStats;

  constructor(
    private readonly model: ServerModel,
    now: number,
  ) {
    this.tickMs = model.tickMs;
    this.windowTicks = model.crashWindowTicks;
    this.restartTicks = Math.round(model.restartMs / model.tickMs);
    this.outages = model.outages.map((o) => ({ start: Math.round(o.startMs / model.tickMs), end: Math.round(o.endMs / model.tickMs) }));
    this.recent = new Int32Array(this.windowTicks);
    this.start = now;
    this.reset(now);
  }

  /**
   * Starts the server's time again at `now`: start-up period, empty crash window, empty stats.
   * Requests still waiting are returned (to be answered 503: they belong to the old run).
   */
  reset(now: number): R[] {
    const left = this.pending.map((p) => p.request);
    this.pending = [];
    this.start = now;
    this.next = 0;
    this.downUntil = Math.round(this.model.startupMs / this.tickMs);
    this.recent.fill(0);
    this.recentSum = 0;
    this.stats = {
      tickMs: this.tickMs,
      windowMs: this.tickMs * this.windowTicks,
      firstWindow: 0,
      arrivals: [],
      successes: [],
      crashes: [],
      crashAtMs: [],
      totals: { arrivals: 0, successes: 0, crashes: 0 },
      ticks: 0,
    };
    return left;
  }

  /** The tick `now` falls in (may be one not decided yet). */
  tickAt(now: number): number {
    return Math.max(0, Math.floor((now - this.start) / this.tickMs));
  }

  /** When tick `tick` ends, on the caller's clock: the time to call {@link advance} next. */
  tickEnd(tick: number): number {
    return this.start + (tick + 1) * this.tickMs;
  }

  /** True while some request waits for its tick's decision. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** The tick of the oldest waiting request (meaningful while {@link waiting}). */
  get oldestTick(): number {
    return this.pending[0]?.tick ?? this.next;
  }

  /** Time 0 on the caller's clock: the start or the last reset. */
  get startedAt(): number {
    return this.start;
  }

  /** A request arrived at `now`: it waits for the end of its tick. */
  arrive(now: number, request: R): void {
    // A tick is decided only once over, so an arrival's tick is never one already decided —
    // except when the caller's clock stalls behind; then it joins the first open tick.
    this.pending.push({ tick: Math.max(this.tickAt(now), this.next), request });
  }

  /** Decides every tick that is over at `now` and calls `answer` for each request, in arrival order. */
  advance(now: number, answer: (request: R, verdict: LiveVerdict) => void): void {
    const last = this.tickAt(now); // ticks before `last` are over
    let i = 0;
    while (this.next < last) {
      const t = this.next++;
      let n = 0;
      while (i + n < this.pending.length && this.pending[i + n]!.tick === t) n++;
      const up = this.decide(t, n);
      for (let k = 0; k < n; k++) {
        const ok = up && k < this.model.capacityPerTick;
        if (ok) this.count('successes', t, 1);
        answer(this.pending[i + k]!.request, ok ? 200 : 503);
      }
      i += n;
    }
    if (i > 0) this.pending.splice(0, i);
  }

  /** S2 for tick `t` with `n` arrivals: records them, runs the outage and crash rules; true when the server is up. */
  private decide(t: number, n: number): boolean {
    this.stats.ticks = t + 1;
    const slot = t % this.windowTicks;
    this.recentSum += n - this.recent[slot]!;
    this.recent[slot] = n;
    this.count('arrivals', t, n);
    for (const o of this.outages) if (o.start === t && o.end > this.downUntil) this.downUntil = o.end;
    if (t >= this.downUntil && this.recentSum > this.model.crashLimit) {
      this.downUntil = t + this.restartTicks;
      this.count('crashes', t, 1);
      this.stats.crashAtMs.push(t * this.tickMs);
    }
    return t >= this.downUntil;
  }

  private count(series: 'arrivals' | 'successes' | 'crashes', t: number, n: number): void {
    const s = this.stats;
    let w = Math.floor(t / this.windowTicks) - s.firstWindow;
    while (s.arrivals.length <= w) {
      s.arrivals.push(0);
      s.successes.push(0);
      s.crashes.push(0);
    }
    if (s.arrivals.length > MAX_WINDOWS) {
      const drop = s.arrivals.length - MAX_WINDOWS;
      for (const a of [s.arrivals, s.successes, s.crashes]) a.splice(0, drop);
      s.firstWindow += drop;
      w -= drop;
      const from = s.firstWindow * s.windowMs;
      s.crashAtMs = s.crashAtMs.filter((ms) => ms >= from);
    }
    s[series][w]! += n;
    s.totals[series] += n;
  }

  /** A copy of the stats so far. */
  snapshot(): LiveServerStats {
    const s = this.stats;
    return { ...s, arrivals: [...s.arrivals], successes: [...s.successes], crashes: [...s.crashes], crashAtMs: [...s.crashAtMs], totals: { ...s.totals } };
  }
}
