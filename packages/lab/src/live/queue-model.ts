import { PyRandom, type MetastableServer, type MetastableTrigger } from 'herdless/sim';

/*
 * The metastable queue's server in real time: the simulator's server rules (workers, a service-time
 * distribution, a FIFO or LIFO queue, deadline propagation, the capacity trigger) fed by arrival
 * and departure times instead of a virtual event queue. Workers are a counter and a service is a
 * time drawn from the seed, not work: a busy 2-core machine can hold hundreds of requests a second.
 */

/** How a request's time at the server ended. */
export type QueueOutcome =
  /** Served while its client was still connected: the answer goes out (goodput, as the server sees it). */
  | 'served'
  /** Served to the end, but its client had left first: wasted work. */
  | 'wasted'
  /** In service when its client left, and the server (dropping expired requests) stopped it: wasted work too. */
  | 'cut'
  /** Still queued when its client left, and dropped unserved when a worker reached it (dropping expired requests). */
  | 'dropped'
  /** Still queued or in service when the server's time was started again: the run it belonged to is over. */
  | 'reset';

/** What the server records per second of its time, from its time 0. */
export interface QueueStats {
  /** The index of the first second kept (seconds older than {@link MAX_SECONDS} are dropped). */
  firstSecond: number;
  /** Per second: requests that reached the queue model (the offered load as the server sees it; shed requests excluded). */
  arrivals: number[];
  /** Per second: services that ended while their client was still connected. */
  served: number[];
  /** Per second: services, finished or cut, whose client had already left: wasted work. */
  wasted: number[];
  /** Per second: queued requests dropped unserved because their client had left (dropping expired requests only). */
  dropped: number[];
  /** Per second: requests answered "overloaded" by the shedder in front (counted by the caller, see {@link QueueModel.shed}). */
  shed: number[];
  /** Requests waiting in the queue at the end of each second (those whose client left included, until a worker drops them). */
  queue: number[];
  /** Totals since time 0 (dropped seconds included). */
  totals: { arrivals: number; served: number; wasted: number; dropped: number; shed: number };
  /** Now: workers busy and requests queued. */
  busy: number;
  queued: number;
}

/** Seconds kept by the stats: one hour, so a server left running does not grow without bound. */
export const MAX_SECONDS = 3600;

/** One request at the server. */
interface Entry<R> {
  request: R;
  /** Its client is gone (its connection closed). */
  left: boolean;
  /** 0 queued, 1 in service, 2 ended. */
  state: 0 | 1 | 2;
  /** When its service ends (in service only), on the caller's clock; its deadline instead when that comes first (dropping expired requests). */
  endsAt: number;
  /** When its client stops waiting, on the caller's clock (Infinity: unknown). */
  deadline: number;
}

/** A handle on a request given to the model: pass it to {@link QueueModel.leave}. */
export type QueueTicket = object;

/**
 * The metastable experiment's server (see `metastableRun` in `herdless/sim`) on the caller's
 * clock. A request that finds a free worker and nobody queued is served at once; otherwise it
 * waits in the queue, taken oldest first (`fifo`) or newest first (`lifo`) as workers free up. A
 * service lasts a time drawn from `PyRandom(seed)` (exponential or constant, mean `serviceMs`,
 * ÷ `factor` for a service that starts during a capacity trigger). When it ends, `onEnd` hears
 * `served` (the client is still there: answer it) or `wasted` (the client left).
 *
 * With `dropExpired` (deadline propagation) the server knows when a client gives up: from the
 * deadline the request carries (its arrival plus the client's timeout, as gRPC's `grpc-timeout` or
 * Connect's `connect-timeout-ms` header tells a server), or when its connection closes, whichever
 * comes first. A request in service is stopped then (`cut`, its worker freed); a queued one is
 * dropped unserved when a worker reaches it (`dropped`). Without it, the server serves whatever it
 * queued.
 *
 * This class holds no timer and reads no clock: the caller passes `now` (ms, monotonic,
 * non-decreasing) and sets a timer for {@link nextEndAt}. Services are ended in the order of their
 * end times, each at its own end time — a late timer delays the answers, not the schedule.
 */
export class QueueModel<R> {
  private start: number;
  private rng: PyRandom;
  private queue: Entry<R>[] = [];
  private head = 0;
  private busy = 0;
  /** Services in progress, a binary min-heap on `endsAt`; a cut one stays until it comes up, then is skipped. */
  private heap: Entry<R>[] = [];
  /** Seconds whose end has passed and whose queue length is recorded. */
  private closed = 0;
  private stats!: QueueStats;

  constructor(
    private server: MetastableServer,
    private trigger: MetastableTrigger,
    seed: number,
    now: number,
    private readonly onEnd: (request: R, outcome: QueueOutcome) => void,
  ) {
    this.start = now;
    this.rng = new PyRandom(seed);
    this.reset(now, server, trigger, seed);
  }

  /** The server variant it runs. */
  get serverModel(): MetastableServer {
    return this.server;
  }

  /** The trigger it runs (only a capacity trigger acts on the server; a spike is the clients' doing). */
  get triggerModel(): MetastableTrigger {
    return this.trigger;
  }

  /** Time 0 on the caller's clock: the start or the last reset. */
  get startedAt(): number {
    return this.start;
  }

  /**
   * Starts the server's time again at `now` with this server, trigger and seed: empty queue, free
   * workers, empty stats. Every request still queued or in service ends as `reset`.
   */
  reset(now: number, server: MetastableServer, trigger: MetastableTrigger, seed: number): void {
    const left = [...this.queue.slice(this.head), ...this.heap.filter((e) => e.state === 1)];
    this.queue = [];
    this.head = 0;
    this.heap = [];
    this.busy = 0;
    this.server = server;
    this.trigger = trigger;
    this.rng = new PyRandom(seed);
    this.start = now;
    this.closed = 0;
    this.stats = {
      firstSecond: 0,
      arrivals: [],
      served: [],
      wasted: [],
      dropped: [],
      shed: [],
      queue: [],
      totals: { arrivals: 0, served: 0, wasted: 0, dropped: 0, shed: 0 },
      busy: 0,
      queued: 0,
    };
    for (const e of left) {
      e.state = 2;
      this.onEnd(e.request, 'reset');
    }
  }

  /** When the next service ends, on the caller's clock, or undefined when no worker is busy. */
  get nextEndAt(): number | undefined {
    return this.heap[0]?.endsAt;
  }

  /**
   * A request arrived at `now`: it is served at once if a worker is free and nobody waits, else
   * queued. `timeoutMs`: how long its client waits (the deadline it propagates), if it says.
   */
  arrive(now: number, request: R, timeoutMs?: number): QueueTicket {
    this.advance(now);
    const e: Entry<R> = { request, left: false, state: 0, endsAt: 0, deadline: timeoutMs === undefined ? Infinity : now + timeoutMs };
    this.count('arrivals', now);
    if (this.busy < this.server.workers && this.queue.length === this.head) this.begin(e, now);
    else this.queue.push(e);
    return e;
  }

  /**
   * The request's client left at `now` (its connection closed before the answer). With
   * `dropExpired` a request in service is stopped now; otherwise it is served to the end, for
   * nobody. Leaving twice, or after the end, does nothing.
   */
  leave(now: number, ticket: QueueTicket): void {
    this.advance(now);
    const e = ticket as Entry<R>;
    if (e.left || e.state === 2) return;
    e.left = true;
    if (e.state === 1 && this.server.dropExpired) {
      e.state = 2;
      this.busy--;
      this.count('wasted', now);
      this.onEnd(e.request, 'cut');
      this.next(now);
    }
  }

  /** A request was answered "overloaded" at `now` by a shedder in front of the model (counted only). */
  shed(now: number): void {
    this.advance(now);
    this.count('shed', now);
  }

  /** Ends every service due by `now`, in end-time order, each at its own time (see the class). */
  advance(now: number): void {
    for (let top = this.heap[0]; top !== undefined && top.endsAt <= now; top = this.heap[0]) {
      this.pop();
      if (top.state !== 1) continue; // cut at its client's leaving already
      const t = top.endsAt;
      this.closeSeconds(t);
      top.state = 2;
      this.busy--;
      // With dropExpired a service is scheduled to end at its deadline when that comes first: cut there.
      const cut = this.server.dropExpired && t >= top.deadline;
      if (cut) top.left = true;
      this.count(top.left ? 'wasted' : 'served', t);
      this.onEnd(top.request, cut ? 'cut' : top.left ? 'wasted' : 'served');
      this.next(t);
    }
    this.closeSeconds(now);
  }

  /** A copy of the stats, the seconds ended by `now` included. */
  snapshot(now: number): QueueStats {
    this.advance(now);
    const s = this.stats;
    return {
      firstSecond: s.firstSecond,
      arrivals: [...s.arrivals],
      served: [...s.served],
      wasted: [...s.wasted],
      dropped: [...s.dropped],
      shed: [...s.shed],
      queue: [...s.queue],
      totals: { ...s.totals },
      busy: this.busy,
      queued: this.queue.length - this.head,
    };
  }

  /** Free workers take queued requests at `t`, in the discipline's order (dropping those whose client left, with `dropExpired`). */
  private next(t: number): void {
    const fifo = this.server.discipline === 'fifo';
    while (this.busy < this.server.workers && this.queue.length > this.head) {
      const e = fifo ? this.queue[this.head++]! : this.queue.pop()!;
      if (this.server.dropExpired && (e.left || t >= e.deadline)) {
        e.state = 2;
        this.count('dropped', t);
        this.onEnd(e.request, 'dropped');
        continue;
      }
      this.begin(e, t);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private begin(e: Entry<R>, t: number): void {
    const tr = this.trigger;
    const since = t - this.start;
    const slow = tr.kind === 'capacity' && since >= tr.startMs && since < tr.endMs;
    const mean = slow ? this.server.serviceMs / tr.factor : this.server.serviceMs;
    e.state = 1;
    const end = t + (this.server.service === 'constant' ? mean : this.rng.expovariate(1 / mean));
    e.endsAt = this.server.dropExpired ? Math.min(end, e.deadline) : end;
    this.busy++;
    this.push(e);
  }

  /** Records the queue length at the end of every second that ended by `t` (the queue changes only at events). */
  private closeSeconds(t: number): void {
    const ended = Math.floor((t - this.start) / 1000);
    if (ended <= this.closed) return;
    const queued = this.queue.length - this.head;
    for (; this.closed < ended; this.closed++) this.series(this.closed).queue[this.closed - this.stats.firstSecond] = queued;
  }

  private count(series: 'arrivals' | 'served' | 'wasted' | 'dropped' | 'shed', t: number): void {
    const sec = Math.max(0, Math.floor((t - this.start) / 1000));
    const s = this.series(sec);
    s[series][sec - s.firstSecond]!++;
    s.totals[series]++;
  }

  /** The stats with room for second `sec` (older seconds dropped past {@link MAX_SECONDS}). */
  private series(sec: number): QueueStats {
    const s = this.stats;
    const all = [s.arrivals, s.served, s.wasted, s.dropped, s.shed, s.queue];
    while (s.arrivals.length <= sec - s.firstSecond) {
      for (const a of all) a.push(0);
      if (s.arrivals.length > MAX_SECONDS) {
        for (const a of all) a.shift();
        s.firstSecond++;
      }
    }
    return s;
  }

  private push(e: Entry<R>): void {
    const h = this.heap;
    let i = h.push(e) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.endsAt <= e.endsAt) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const c = l + 1 < h.length && h[l + 1]!.endsAt < h[l]!.endsAt ? l + 1 : l;
      if (h[c]!.endsAt >= last.endsAt) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
  }
}
