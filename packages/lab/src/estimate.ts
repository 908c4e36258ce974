import { type Backoff, type BackoffSpec, type Rng } from 'herdless';
import { backoffFromSpec } from 'herdless/sim';
import type { ScenarioSpec } from 'herdless/sim';
import { quote } from './text.js';
import { UsageError } from './usage-error.js';

/*
 * What a run will cost, estimated before it starts from the scenario alone (no simulation), so
 * that a scenario inside every field's range but enormous as a whole (a Poisson load with
 * immediate retries: hours and gigabytes) is refused with one line instead of running.
 *
 * A request event is one send to the server: a first try or a retry. Each request is assumed to
 * fail until its attempts or the horizon run out — the herd's case, and the most a request can
 * cost — with every wait at the middle of its jitter range (the backoff driven by an RNG that
 * always draws 0.5: full jitter's mean, the proportional jitter's exact base). Budgets are ignored:
 * they only ever remove retries.
 */

/**
 * The CLI's default bound on the estimated request events of one command (all policies × seeds):
 * 10^10 is under a minute for constant waits (whole batches move at once) and some ten minutes for
 * jittered ones (60–90 ns per event). `--max-events N` raises it.
 */
export const MAX_EVENTS = 1e10;

/** The lab page's bound: a run in a browser tab (the whole default herd table is about 2.4 × 10^8). */
export const PAGE_MAX_EVENTS = 3e8;

/** The most first sends one Poisson run may draw: they are all queued up front, 16–32 bytes each. */
export const MAX_FIRST_SENDS = 10_000_000;

/** The middle of every jitter range. */
const MIDDLE: Rng = { random: () => 0.5 };

/** The engine's rounding of a wait to ticks (round half to even). */
function roundHalfEven(q: number): number {
  const f = Math.floor(q);
  const d = q - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

/** First sends of one run: every client once, or each client's Poisson arrivals over the horizon. */
export function firstSends(base: Omit<ScenarioSpec, 'policy'>): number {
  return base.arrivals.kind === 'together' ? base.clients : base.clients * base.arrivals.ratePerSecond * (base.horizonMs / 1000);
}

/**
 * The estimated request events of one run of `policy` on `base`: per first send, the attempts that
 * fit before the horizon, summed over when the first sends happen (all at the middle of the spread,
 * or spread evenly over the horizon for Poisson arrivals). Work: a few hundred steps of the backoff
 * at most (a wait that stops changing is summed in closed form).
 */
export function estimateRunEvents(base: Omit<ScenarioSpec, 'policy'>, policy: { backoff: Backoff | BackoffSpec; maxAttempts: number | null }): number {
  const backoff = 'delay' in policy.backoff ? policy.backoff : backoffFromSpec(policy.backoff);
  const tickMs = base.server.tickMs;
  const horizon = Math.round(base.horizonMs / tickMs);
  const maxAttempts = policy.maxAttempts ?? Infinity;
  // The attempt times T_1 = 0 < T_2 < … (ticks after the first send) while they stay in the horizon.
  const times: number[] = [0];
  let previous = 0;
  let step = 0;
  let same = 0;
  while (times.length < maxAttempts && times.length < 400) {
    const wait = backoff.delay(times.length, previous, MIDDLE);
    previous = wait;
    const next = 1 + roundHalfEven(wait / tickMs);
    same = next === step ? same + 1 : 0;
    step = next;
    const t = times[times.length - 1]! + step;
    if (t >= horizon) break;
    times.push(t);
    if (same >= 8) break; // the wait has settled (the cap, or a constant): the rest is arithmetic
  }
  const last = times[times.length - 1]!;
  const settled = times.length < maxAttempts && last + step < horizon ? step : 0;
  /** Attempts made by a request first sent with `r` ticks left, and the sum of (r − T_j) over them. */
  const within = (r: number): { n: number; sum: number } => {
    let n = 0;
    let sum = 0;
    for (const t of times) {
      if (t >= r) return { n, sum };
      n++;
      sum += r - t;
    }
    if (settled > 0 && last + settled < r) {
      // T = last + k·settled for k = 1 … K while T < r, capped by maxAttempts.
      const k = Math.min(Math.floor((r - 1 - last) / settled), maxAttempts - n);
      n += k;
      sum += k * (r - last) - (settled * k * (k + 1)) / 2;
    }
    return { n, sum };
  };
  if (base.arrivals.kind === 'together') {
    const left = Math.max(1, horizon - Math.floor(base.arrivals.spreadMs / tickMs / 2));
    return base.clients * within(left).n;
  }
  // Poisson: first sends spread evenly over the horizon; Σ over send ticks s of N(H − s) = Σ_j (H − T_j).
  const perTick = base.clients * base.arrivals.ratePerSecond * (tickMs / 1000);
  return perTick * within(horizon).sum;
}

/** A count for a message: `2.4e8`-style beyond a million, else whole. */
function countText(n: number): string {
  return n >= 1e6 ? n.toExponential(1).replace('e+', 'e') : String(Math.round(n));
}

/**
 * Refuses a run whose estimated request events exceed `bound`.
 * @param where the error's prefix (`--config "f.json"`, `form`).
 * @param raise how to go past the bound, for the message (`raise it with --max-events N`).
 * @throws UsageError, one line: the estimate, the largest run, the bound and what to change.
 */
export function checkWork(
  base: Omit<ScenarioSpec, 'policy'>,
  policies: readonly { name: string; backoff: Backoff | BackoffSpec; maxAttempts: number | null }[],
  seeds: number,
  bound: number,
  where: string,
  raise: string,
): void {
  let total = 0;
  let largest = { name: '', events: -1 };
  for (const p of policies) {
    const events = estimateRunEvents(base, p);
    total += events * seeds;
    if (events > largest.events) largest = { name: p.name, events };
  }
  if (total > bound) {
    throw new UsageError(
      `${where}: about ${countText(total)} request events estimated (${policies.length} ${policies.length === 1 ? 'policy' : 'policies'} × ${seeds} ${seeds === 1 ? 'seed' : 'seeds'}; ${quote(largest.name)} ${countText(largest.events)} per run), over the bound of ${countText(bound)}: use fewer seeds, clients, attempts or a shorter horizon, or ${raise}`,
    );
  }
}
