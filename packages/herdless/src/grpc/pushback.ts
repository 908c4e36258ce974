/** The trailer a gRPC server sends to push back on retries (gRFC A6, "Pushback"). */
export const GRPC_PUSHBACK_HEADER = 'grpc-retry-pushback-ms';

/**
 * What a `grpc-retry-pushback-ms` value asks for: a number of ms to wait before the retry, the
 * string `'do-not-retry'`, or `undefined` when there was no value.
 */
export type GrpcPushback = number | 'do-not-retry' | undefined;

const DIGITS = /^\d+$/;

/**
 * Reads a server's `grpc-retry-pushback-ms` value as gRFC A6 defines it: a non-negative integer is
 * the wait in ms before the retry (it replaces the backoff, which then restarts from
 * `initialBackoff`); a negative, fractional or malformed value (`-1`, `'abc'`, `'1.5'`, `''`) means
 * "do not retry". grpc-js instead turns a malformed value into a near-immediate retry; herdless
 * follows A6.
 *
 * @param value the header's value: a string, a `Buffer`/`Uint8Array` (decoded as ASCII), or an
 *   array of them as grpc-js's `Metadata.get()` returns (the first one counts); `undefined`,
 *   `null` or an empty array mean no pushback.
 * @returns the wait in ms (an integer ≥ 0, possibly very large: the caller's `maxRetryAfterMs`
 *   decides), `'do-not-retry'`, or `undefined`.
 * @example
 * ```ts
 * parseGrpcPushback('2000'); // 2000
 * parseGrpcPushback(['-1']); // 'do-not-retry'
 * parseGrpcPushback('abc'); // 'do-not-retry'
 * parseGrpcPushback(undefined); // undefined
 * ```
 */
export function parseGrpcPushback(value: unknown): GrpcPushback {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (first === undefined || first === null) return undefined;
  let text: string;
  if (typeof first === 'string') text = first;
  else if (first instanceof Uint8Array) text = String.fromCharCode(...first.subarray(0, 32));
  else return 'do-not-retry';
  const trimmed = text.trim();
  if (!DIGITS.test(trimmed)) return 'do-not-retry';
  const ms = Number(trimmed);
  return Number.isSafeInteger(ms) ? ms : Number.MAX_SAFE_INTEGER;
}
