import { markDoNotRetry } from '../../core/classify/hints.js';
import { InvalidOptionError } from '../../core/errors.js';
import { PyRandom } from '../../core/python-random.js';
import { numberOption, objectOption } from '../../core/validate.js';
import { ManualClock } from '../../runtime/manual-clock.js';
import { createRetry } from '../../runtime/retry.js';

/** The two policies the layers experiment compares, in table order. */
export const LAYERS_POLICIES = ['every layer retries', 'retry at one layer'] as const;

/** Knobs of the layers experiment. */
export interface LayersOptions {
  /** Services in the chain, the last one always failing. Default 3 (frontend → backend → db). Range 1–10. */
  depth?: number | undefined;
  /** `maxAttempts` of every caller, the first try included. Default 3. Range 1–10; attempts^depth ≤ 100 000. */
  attempts?: number | undefined;
  /** Seed of the jitter (the counts do not depend on it). Default 0. */
  seed?: number | undefined;
}

/** One row: how many calls reached each service. */
export interface LayersRow {
  policy: (typeof LAYERS_POLICIES)[number];
  calls: Record<string, number>;
}

/** The services' names: frontend, backend (or backend 1, 2, …), db — the last one always fails. */
export function layerNames(depth: number): string[] {
  if (depth === 1) return ['db'];
  const middle = depth - 2;
  const backends = middle === 1 ? ['backend'] : Array.from({ length: middle }, (_, i) => `backend ${i + 1}`);
  return ['frontend', ...backends, 'db'];
}

/**
 * The article's layers experiment, built from the library's own `retry()` and its "don't retry"
 * mark, in virtual time (a `ManualClock`, seeded jitter). A user calls the frontend; each service
 * calls the one below it through `retry()` with `maxAttempts` = `attempts`; the db always fails.
 * A service that gives up answers its caller with a 503 — a plain one when every layer retries
 * (so the caller retries it again: A, A², … A^depth calls), or one marked "overloaded; don't retry"
 * below the frontend under the one-layer rule (SRE book, "Handling Overload"), so that only the
 * user's retries remain: A calls at every layer.
 *
 * @throws InvalidOptionError for a depth or attempts out of range, or an unknown option.
 * @example
 * ```ts
 * await runLayers(); // [{ policy: 'every layer retries', calls: { frontend: 3, backend: 9, db: 27 } }, { policy: 'retry at one layer', calls: { frontend: 3, backend: 3, db: 3 } }]
 * ```
 */
export async function runLayers(options: LayersOptions = {}): Promise<LayersRow[]> {
  const o = objectOption('runLayers', 'options', options, ['depth', 'attempts', 'seed']);
  const depth = numberOption('runLayers', 'depth', o.depth, 3, { integer: true, min: 1, max: 10 });
  const attempts = numberOption('runLayers', 'attempts', o.attempts, 3, { integer: true, min: 1, max: 10 });
  const seed = numberOption('runLayers', 'seed', o.seed, 0, { integer: true, min: 0 });
  if (attempts ** depth > 100_000) {
    throw new InvalidOptionError('runLayers', 'attempts', attempts, `^ depth (${depth}) must be ≤ 100000 calls`);
  }
  const rows: LayersRow[] = [];
  for (const policy of LAYERS_POLICIES) {
    const counts = await chain(depth, attempts, seed, policy === 'retry at one layer');
    const names = layerNames(depth);
    rows.push({ policy, calls: Object.fromEntries(names.map((n, i) => [n, counts[i]!])) });
  }
  return rows;
}

async function chain(depth: number, attempts: number, seed: number, oneLayer: boolean): Promise<number[]> {
  const clock = new ManualClock();
  const withRetry = createRetry({ maxAttempts: attempts, clock, random: new PyRandom(seed) });
  const counts = new Array<number>(depth).fill(0);
  const names = layerNames(depth);
  // A service's failure answer: a 503, marked "don't retry" below the top under the one-layer rule.
  // Only the status crosses the wire: the answer never carries the downstream failure as its
  // `cause`, which would say "given up" in-process (isGivenUp) and stop the caller's retries.
  const answer = (i: number): Error => {
    const error = Object.assign(new Error(`${names[i]} unavailable`), { status: 503 });
    return oneLayer && i > 0 ? markDoNotRetry(error) : error;
  };
  const service = async (i: number): Promise<never> => {
    counts[i]!++;
    if (i === depth - 1) throw answer(i);
    try {
      return await withRetry(() => service(i + 1));
    } catch {
      throw answer(i);
    }
  };
  const user = withRetry(() => service(0)).catch(() => undefined);
  await clock.runAll(100_000);
  await user;
  return counts;
}
