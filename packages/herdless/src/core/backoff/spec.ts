import { fromSpec } from '../spec.js';
import type { Backoff, BackoffSpec } from './backoff.js';
import { constantBackoff } from './constant.js';
import { decorrelatedJitterBackoff } from './decorrelated.js';
import { decorrelatedJitterV2Backoff } from './decorrelated-v2.js';
import { equalJitterBackoff, exponentialBackoff, fullJitterBackoff, proportionalJitterBackoff } from './exponential.js';

/** The `kind` names a {@link BackoffSpec} may use. */
export const BACKOFF_KINDS = [
  'constant',
  'exponential',
  'full jitter',
  'equal jitter',
  'proportional jitter',
  'decorrelated jitter',
  'decorrelated jitter v2',
] as const;

const FIELDS: Record<(typeof BACKOFF_KINDS)[number], readonly string[]> = {
  constant: ['delayMs'],
  exponential: ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'full jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'equal jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs'],
  'proportional jitter': ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs', 'jitter', 'capAfterJitter'],
  'decorrelated jitter': ['baseMs', 'maxBackoffMs'],
  'decorrelated jitter v2': ['medianFirstDelayMs', 'maxBackoffMs'],
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
  return fromSpec('backoffFromSpec', spec, path, FIELDS, (kind, options) => {
    switch (kind) {
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
      case 'decorrelated jitter v2':
        return decorrelatedJitterV2Backoff(options);
    }
  });
}

export type { BackoffSpec };
