/**
 * A server in virtual time for sweeps of the in-flight limit: a `LoadShedder` (the real one, on a
 * virtual clock) in front of a pool of `workers`, each busy `serviceMs` per request, fed open-loop
 * at `rate` requests a second. Deterministic: every delay comes from a seeded `PyRandom`.
 *
 * "Busy" adds what a shared 2-core machine does to the real-socket version of this run: the
 * server's timers fire late (each completion late by an exponential draw, mean `lateMs`), and
 * the load generator stalls now and then (for `stallMs`, about every `stallEveryMs`) and then
 * sends at once what fell due meanwhile — the burst after a gap that the real open-loop client
 * produces when it is starved of CPU.
 */
import { LoadShedder, type LoadShedderOptions } from 'herdless/server';
import { PyRandom } from '../../src/core/python-random.js';
import type { Scheduler } from '../../src/runtime/scheduler.js';

export interface PoolRun {
  readonly served: number;
  readonly shed: number;
  /** Served requests' mean time from admission to answer, ms. */
  readonly meanMs: number;
  /** Kleinrock's power: served per second ÷ mean served latency (ms). */
  readonly power: number;
  /** The shedder's limit, read every 50 ms from `readFromMs` on. */
  readonly limits: number[];
}

export interface PoolScenario {
  readonly workers: number;
  readonly serviceMs: number;
  readonly rate: number;
  readonly durationMs: number;
  /** Latency and power count requests admitted from here on; limit readings start here too. */
  readonly readFromMs: number;
  readonly seed: number;
  readonly busy?: { readonly lateMs: number; readonly stallMs: number; readonly stallEveryMs: number } | undefined;
}

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

/** A Scheduler whose time moves only as the simulation takes its next event. */
class SimClock implements Scheduler {
  #now = 0;
  #seq = 0;
  readonly #events: Event[] = [];
  now(): number {
    return this.#now;
  }
  setTimeout(callback: () => void, delayMs: number): unknown {
    return this.at(this.#now + Math.max(0, delayMs), callback);
  }
  clearTimeout(handle: unknown): void {
    const i = this.#events.indexOf(handle as Event);
    if (i >= 0) this.#events.splice(i, 1);
  }
  at(at: number, run: () => void): Event {
    const event = { at, seq: this.#seq++, run };
    // Binary insertion by (at, seq): events at one time run in the order they were scheduled.
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.#events[mid]!;
      if (e.at < at || (e.at === at && e.seq < event.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.#events.splice(lo, 0, event);
    return event;
  }
  runUntil(end: number): void {
    while (this.#events.length > 0 && this.#events[0]!.at <= end) {
      const event = this.#events.shift()!;
      this.#now = event.at;
      event.run();
    }
    this.#now = end;
  }
}

/** One run of `scenario` with the shedder `options` (its `clock` is the simulation's). */
export function runPool(scenario: PoolScenario, options: Omit<LoadShedderOptions, 'clock'>): PoolRun {
  const clock = new SimClock();
  const random = new PyRandom(scenario.seed);
  const shedder = new LoadShedder({ ...options, clock });
  const busy = scenario.busy;
  const late = (): number => (busy === undefined ? 0 : -busy.lateMs * Math.log(1 - random.random()));

  let busyWorkers = 0;
  const waiting: (() => void)[] = [];
  let served = 0;
  let shed = 0;
  let totalMs = 0;

  const serve = (admittedAt: number, release: () => void): void => {
    const work = (): void => {
      clock.setTimeout(() => {
        const next = waiting.shift();
        if (next === undefined) busyWorkers--;
        else next();
        if (admittedAt >= scenario.readFromMs) {
          served++;
          totalMs += clock.now() - admittedAt;
        }
        release();
      }, scenario.serviceMs + late());
    };
    if (busyWorkers < scenario.workers) {
      busyWorkers++;
      work();
    } else waiting.push(work);
  };

  const arrive = (): void => {
    const admission = shedder.admit(1);
    if (admission instanceof Promise) throw new Error('pool-sim runs without a queue (maxQueue 0)');
    if (admission.kind === 'shed') {
      if (clock.now() >= scenario.readFromMs) shed++;
      return;
    }
    serve(clock.now(), admission.release);
  };

  // The open-loop schedule, pushed back by the generator's stalls: what falls due in a stall is sent at its end.
  const gap = 1000 / scenario.rate;
  let stallUntil = 0;
  let nextStall = busy === undefined ? Infinity : -busy.stallEveryMs * Math.log(1 - random.random());
  for (let t = 0; t < scenario.durationMs; t += gap) {
    while (t >= nextStall) {
      stallUntil = Math.max(stallUntil, nextStall + busy!.stallMs);
      nextStall += -busy!.stallEveryMs * Math.log(1 - random.random());
    }
    clock.at(Math.max(t, stallUntil), arrive);
  }

  const limits: number[] = [];
  for (let t = scenario.readFromMs; t < scenario.durationMs; t += 50) clock.at(t, () => limits.push(shedder.stats().limit));
  clock.runUntil(scenario.durationMs + 60_000);
  const meanMs = totalMs / served;
  const seconds = (scenario.durationMs - scenario.readFromMs) / 1000;
  return { served, shed, meanMs, power: served / seconds / meanMs, limits };
}

/** The median of `values` (the lower middle one for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
