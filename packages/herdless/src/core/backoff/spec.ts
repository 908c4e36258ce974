import { InvalidOptionError } from '../errors.js';
import type { Backoff, BackoffSpec } from './backoff.js';
import { constantBackoff } from './constant.js';
import { decorrelatedJitterBackoff } from './decorrelated.js';
import { equalJitterBackoff, exponentialBackoff, fullJitterBackoff, proportionalJitterBackoff } from './exponential.js';

/** The `kind` names a {@link BackoffSpec} may use. */
export const BACKOFF_KINDS = [
  'constant',
  'exponential',
  'full jitter',
  'equal jitter',
  'proportional jitter',
  'decorrelated jitter',
] as const;

const FIELDS: Record<(typeof BACKOFF_KINDS)[number], readonly string[]> = {
  constant: ['delayMs'],
  exponential: ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'full jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'equal jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'proportional jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs', 'jitter'],
  'decorrelated jitter': ['baseMs', 'maxBackoffMs'],
};

/**
 * Builds a backoff from data — a lab config file, the lab page's form, a JSON setting. The spec is
 * `{ kind, ...options }` with the options of the matching factory (all in ms; omitted fields take
 * the factory's defaults). Unknown kinds and unknown fields are rejected, so a typo never falls back
 * silently to a default.
 *
 * @param spec the parsed JSON value.
 * @param path where the spec sits, for error messages (e.g. `policy.backoff`).
 * @throws InvalidOptionError naming the field and the value.
 * @example
 * ```ts
 * backoffFromSpec({ kind: 'full jitter', initialBackoffMs: 200, maxBackoffMs: 10_000 });
 * ```
 */
export function backoffFromSpec(spec: unknown, path = 'backoff'): Backoff {
  const owner = 'backoffFromSpec';
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InvalidOptionError(owner, path, spec, 'must be an object with a "kind"');
  }
  const record = spec as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== 'string' || !(BACKOFF_KINDS as readonly string[]).includes(kind)) {
    throw new InvalidOptionError(owner, `${path}.kind`, kind, `must be one of ${BACKOFF_KINDS.map((k) => `"${k}"`).join(', ')}`);
  }
  const k = kind as (typeof BACKOFF_KINDS)[number];
  for (const key of Object.keys(record)) {
    if (key !== 'kind' && !FIELDS[k].includes(key)) {
      throw new InvalidOptionError(owner, `${path}.${key}`, record[key], `is not an option of "${k}" (allowed: ${FIELDS[k].join(', ')})`);
    }
  }
  try {
    const { kind: _kind, ...rest } = record;
    const options = rest as never;
    switch (k) {
      case 'constant':
        return constantBackoff(options);
      case 'exponential':
        return exponentialBackoff(options);
      case 'full jitter':
        return fullJitterBackoff(options);
      case 'equal jitter':
        return equalJitterBackoff(options);
      case 'proportional jitter':
        return proportionalJitterBackoff(options);
      case 'decorrelated jitter':
        return decorrelatedJitterBackoff(options);
    }
  } catch (error) {
    // Re-issue with the spec's path, so a config file's error names the field where it stands.
    if (error instanceof InvalidOptionError) {
      throw new InvalidOptionError(owner, `${path}.${error.field}`, error.value, error.requirement);
    }
    throw error;
  }
}

export type { BackoffSpec };
