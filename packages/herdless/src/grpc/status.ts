/**
 * gRPC's canonical status codes (the numbers are fixed by the gRPC protocol; `grpc/grpc`
 * `doc/statuscodes.md`), name → number.
 */
export const GRPC_STATUS_CODES = /* @__PURE__ */ Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const);

/** A canonical gRPC status name, e.g. `'UNAVAILABLE'`. */
export type GrpcStatusName = keyof typeof GRPC_STATUS_CODES;

const NAMES = /* @__PURE__ */ Object.keys(GRPC_STATUS_CODES) as GrpcStatusName[]; // index = code

/**
 * The canonical name of a status given as a name (any case; `-` or `_` between words, so Connect's
 * `"resource_exhausted"` works too) or a number 0–16; `undefined` for anything else.
 *
 * @example
 * ```ts
 * grpcStatusName(14); // 'UNAVAILABLE'
 * grpcStatusName('unavailable'); // 'UNAVAILABLE'
 * grpcStatusName('ECONNRESET'); // undefined
 * ```
 */
export function grpcStatusName(value: unknown): GrpcStatusName | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? NAMES[value] : undefined;
  if (typeof value !== 'string') return undefined;
  const upper = value.toUpperCase().replace(/-/g, '_');
  return Object.hasOwn(GRPC_STATUS_CODES, upper) ? (upper as GrpcStatusName) : undefined;
}

/**
 * The gRPC status an error carries, or `undefined` if it carries none. It reads `error.grpcCode`
 * if present, else `error.code`, and accepts a number 0–16 (grpc-js's `ServiceError.code`,
 * Connect's `ConnectError.code`) or a status name (any case). Node's string codes such as
 * `'ECONNRESET'` are not gRPC statuses and give `undefined`.
 *
 * @example
 * ```ts
 * grpcStatusOf({ code: 14, details: 'connection refused' }); // 'UNAVAILABLE'
 * grpcStatusOf(new Error('boom')); // undefined
 * ```
 */
export function grpcStatusOf(error: unknown): GrpcStatusName | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { grpcCode?: unknown; code?: unknown };
  return grpcStatusName(e.grpcCode !== undefined ? e.grpcCode : e.code);
}
