import { MAX_DELAY_MS } from '../backoff/backoff.js';
import { InvalidOptionError } from '../errors.js';
import { numberOption, type NumberRule } from '../validate.js';
import type { BreakerCounts } from './counting.js';
import type { BreakerState } from './events.js';

/** The `schema` of a breaker snapshot: what tells it from any other JSON. */
export const BREAKER_SNAPSHOT_SCHEMA = 'herdless/circuit-breaker';

/** The `schemaVersion` this herdless writes and reads. */
export const BREAKER_SNAPSHOT_VERSION = 1;

/**
 * A circuit breaker's state as plain JSON: what `snapshot()` returns and `initialState` takes.
 *
 * **The time base.** A breaker's clock is monotonic and private to its process (`performance.now()`
 * starts near 0 in every process), so a snapshot holds no reading of it. Every time in it is a
 * duration counted back or forward from the moment of the snapshot (`remainingOpenMs`, the ages in
 * `counts`), and that moment itself is `takenAt`, a wall-clock time (ms since the Unix epoch, the
 * breaker's `now` option, default `Date.now()`). Restoring subtracts the wall-clock time elapsed since
 * `takenAt` (never less than 0): a snapshot restored at once resumes exactly; one restored a minute
 * later has a minute less of its open period left. Between two machines whose wall clocks disagree,
 * a restorer whose clock is behind counts 0 elapsed (it refuses for the whole remaining period, at
 * most the storage time too long), and one whose clock is ahead counts too much (it half-opens
 * early: one trial call, never a flood).
 *
 * Within one `schemaVersion`, fields are only ever added; a reader ignores fields it does not know.
 *
 * @example
 * ```json
 * { "schema": "herdless/circuit-breaker", "schemaVersion": 1, "takenAt": 1764600000000,
 *   "state": "open", "isolated": false, "openings": 2, "openDurationMs": 10000, "remainingOpenMs": 6000,
 *   "halfOpenInFlight": 0, "halfOpenSuccesses": 0, "halfOpenFailures": 0,
 *   "counts": { "strategy": "consecutive failures", "consecutiveFailures": 0, "threshold": 5 } }
 * ```
 */
export interface BreakerSnapshot {
  /** Always {@link BREAKER_SNAPSHOT_SCHEMA}: a restore refuses any other JSON. */
  readonly schema: typeof BREAKER_SNAPSHOT_SCHEMA;
  /** {@link BREAKER_SNAPSHOT_VERSION}; a restore refuses a version it does not know. */
  readonly schemaVersion: typeof BREAKER_SNAPSHOT_VERSION;
  /** When the snapshot was taken, in ms since the Unix epoch (wall clock). */
  readonly takenAt: number;
  /** The state at `takenAt` (an isolated breaker is `'open'`). */
  readonly state: BreakerState;
  /** Held open by `isolate()`: it refuses every call until released or reset. */
  readonly isolated: boolean;
  /** Openings since the breaker last closed (0 while closed): the open-duration backoff's step. */
  readonly openings: number;
  /** The duration of the last opening, in ms (open and half-open only, not while isolated). */
  readonly openDurationMs?: number;
  /**
   * Open only (not isolated): ms from `takenAt` until the first trial call may be admitted, a whole
   * number rounded up (a restored breaker never half-opens before the original would).
   */
  readonly remainingOpenMs?: number;
  /** Trial calls in flight (0 unless half-open). Calls belong to their process: never restored. */
  readonly halfOpenInFlight: number;
  /** Trials that succeeded in this half-open period. Not restored: the restorer runs its own trials. */
  readonly halfOpenSuccesses: number;
  /** Trials that failed in this half-open period (non-zero only with `halfOpenSampling`). Not restored. */
  readonly halfOpenFailures: number;
  /**
   * The counting strategy's counts over the calls admitted while closed (reset when the breaker
   * closes); times in them are ages before `takenAt`.
   */
  readonly counts: BreakerCounts;
}

/** What a checked snapshot gives the machine to apply. */
export interface ParsedSnapshot {
  readonly state: BreakerState;
  readonly isolated: boolean;
  readonly openings: number;
  readonly openDurationMs: number;
  /** Open and not isolated: what is left of the open period now (elapsed time subtracted, ≥ 0). */
  readonly remainingOpenMs: number;
  readonly counts: BreakerCounts;
  /** ms between `takenAt` and the restore (≥ 0). */
  readonly ageMs: number;
}

/** @internal A required number field of a snapshot (a missing one is named as missing). */
export function requiredNumber(owner: string, field: string, value: unknown, rule: NumberRule): number {
  if (value === undefined) throw new InvalidOptionError(owner, field, value, 'is required');
  return numberOption(owner, field, value, 0, rule);
}

const STATES: readonly unknown[] = ['closed', 'open', 'half-open'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * @internal Checks a snapshot whole, changing nothing: an `InvalidOptionError` naming `field.x`
 * and the value for anything that is not a version-1 breaker snapshot. `restoredAt` is the wall
 * clock now, in ms since the epoch.
 */
export function parseBreakerSnapshot(snapshot: unknown, restoredAt: number, strategy: string, owner: string, field: string): ParsedSnapshot {
  if (!isRecord(snapshot)) throw new InvalidOptionError(owner, field, snapshot, 'must be a breaker snapshot (an object from snapshot())');
  if (snapshot.schema !== BREAKER_SNAPSHOT_SCHEMA) {
    throw new InvalidOptionError(owner, `${field}.schema`, snapshot.schema, `must be "${BREAKER_SNAPSHOT_SCHEMA}" (this is not a herdless breaker snapshot)`);
  }
  if (snapshot.schemaVersion !== BREAKER_SNAPSHOT_VERSION) {
    throw new InvalidOptionError(owner, `${field}.schemaVersion`, snapshot.schemaVersion, `must be ${BREAKER_SNAPSHOT_VERSION} (the version this herdless reads)`);
  }
  const takenAt = requiredNumber(owner, `${field}.takenAt`, snapshot.takenAt, { min: 0 });
  const state = snapshot.state;
  if (!STATES.includes(state)) throw new InvalidOptionError(owner, `${field}.state`, state, "must be 'closed', 'open' or 'half-open'");
  const isolated = snapshot.isolated;
  if (typeof isolated !== 'boolean') throw new InvalidOptionError(owner, `${field}.isolated`, isolated, 'must be a boolean');
  if (isolated && state !== 'open') throw new InvalidOptionError(owner, `${field}.isolated`, isolated, "can be true only with state 'open'");
  const openings = requiredNumber(owner, `${field}.openings`, snapshot.openings, { min: 0, integer: true });
  if (state === 'closed' && openings !== 0) throw new InvalidOptionError(owner, `${field}.openings`, openings, "must be 0 with state 'closed'");
  const timed = state !== 'closed' && !isolated;
  // Only a failure count opens a breaker that is not isolated; a half-open one may come from the
  // release of an isolation that began while closed, with no opening behind it.
  if (state === 'open' && !isolated && openings === 0) throw new InvalidOptionError(owner, `${field}.openings`, openings, "must be ≥ 1 with state 'open'");
  const openDurationMs = timed ? requiredNumber(owner, `${field}.openDurationMs`, snapshot.openDurationMs, { min: 0, max: MAX_DELAY_MS }) : 0;
  let remainingOpenMs = 0;
  if (state === 'open' && !isolated) {
    remainingOpenMs = requiredNumber(owner, `${field}.remainingOpenMs`, snapshot.remainingOpenMs, { min: 0, max: openDurationMs });
  }
  const counts = snapshot.counts;
  if (!isRecord(counts)) throw new InvalidOptionError(owner, `${field}.counts`, counts, 'must be an object (the counting strategy’s counts)');
  if (counts.strategy !== strategy) {
    throw new InvalidOptionError(owner, `${field}.counts.strategy`, counts.strategy, `must be "${strategy}" (this breaker's counting strategy)`);
  }
  // A restorer whose wall clock is behind the snapshot's counts nothing as elapsed (see BreakerSnapshot).
  const ageMs = Math.max(0, restoredAt - takenAt);
  return {
    state: state as BreakerState,
    isolated,
    openings,
    openDurationMs,
    remainingOpenMs: Math.max(0, remainingOpenMs - ageMs),
    counts: counts as BreakerCounts,
    ageMs,
  };
}
