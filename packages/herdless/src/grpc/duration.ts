import { InvalidOptionError } from '../core/errors.js';

const DURATION = /^(\d+)(?:\.(\d{1,9}))?s$/;

/**
 * Reads a protobuf JSON `Duration` as gRPC service configs write them — decimal seconds with an
 * `s` suffix and at most 9 fractional digits, e.g. `"0.1s"`, `"1s"`, `"2.000000001s"` — into
 * milliseconds. No sign, exponent or spaces. The conversion is exact to the nanosecond
 * (`"0.3s"` is exactly 300).
 *
 * @param owner the function named in errors.
 * @param path the field's JSON path, e.g. `methodConfig[0].retryPolicy.initialBackoff`.
 * @throws InvalidOptionError naming `path` for anything else.
 * @example
 * ```ts
 * grpcDurationMs('0.1s'); // 100
 * ```
 */
export function grpcDurationMs(value: unknown, path = 'duration', owner = 'grpcDurationMs'): number {
  const m = typeof value === 'string' ? DURATION.exec(value) : null;
  if (m === null) {
    throw new InvalidOptionError(owner, path, value, 'must be a duration string of seconds like "0.1s" (up to 9 decimals)');
  }
  const nanos = Number((m[2] ?? '').padEnd(9, '0'));
  return Number(m[1]) * 1000 + nanos / 1e6;
}
