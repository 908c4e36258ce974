import { retryThrottlingBudget, type RetryThrottlingBudget } from '../core/budget/retry-throttling.js';
import { InvalidOptionError } from '../core/errors.js';
import type { GrpcRetryThrottling } from './service-config.js';

interface Entry {
  readonly maxTokens: number;
  readonly tokenRatio: number;
  readonly budget: RetryThrottlingBudget;
}

// gRFC A6: "throttling is done per server name", across every channel to it. The map lives as long
// as the process, like grpc-js's own; it holds one small entry per server name a client talks to.
const THROTTLES = /* @__PURE__ */ new Map<string, Entry>();

/**
 * The server name gRFC A6 keys retry throttling by, from a gRPC target or a URL: the `dns:` scheme
 * and its optional authority are dropped (`dns:///api.example.com:443` → `api.example.com:443`),
 * a URL gives its host (`https://api.example.com/` → `api.example.com`), anything else is kept.
 *
 * @throws InvalidOptionError for a `target` that is not a string.
 *
 * @example
 * ```ts
 * grpcServerName('dns:///127.0.0.1:50051'); // '127.0.0.1:50051'
 * grpcServerName('http://127.0.0.1:8080/greet.v1.Greeter/Greet'); // '127.0.0.1:8080'
 * ```
 */
export function grpcServerName(target: string): string {
  return serverNameOf(target, 'grpcServerName', 'target');
}

/** grpcServerName, failing with the caller's name: from JavaScript, a non-string would end in `replace is not a function`. */
function serverNameOf(target: string, owner: string, field: string): string {
  if (typeof target !== 'string') throw new InvalidOptionError(owner, field, target, 'must be a string (a gRPC target or a URL)');
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(target);
  if (url !== null && !/^dns:/i.test(target)) return url[1]!.toLowerCase();
  return target.replace(/^dns:(?:\/\/[^/]*\/)?/i, '').toLowerCase();
}

/**
 * The retry throttle shared by every client of `serverName` in this process (gRFC A6: one token
 * bucket per server name). The first call for a name creates it, full; a later call with other
 * `retryThrottling` values replaces it with a new, full bucket (grpc-js carries the token fraction
 * over; herdless starts afresh — a service config change is rare and the bucket refills quickly).
 *
 * @throws InvalidOptionError naming the field and the value: a `serverName` that is not a string, a
 *   `throttling` that is not an object, or out-of-range `maxTokens` / `tokenRatio`
 *   (see {@link retryThrottlingBudget}).
 *
 * @example
 * ```ts
 * const budget = grpcThrottleFor('127.0.0.1:50051', { maxTokens: 10, tokenRatio: 0.1 });
 * budget.tokens; // 10
 * ```
 */
export function grpcThrottleFor(serverName: string, throttling: GrpcRetryThrottling): RetryThrottlingBudget {
  const key = serverNameOf(serverName, 'grpcThrottleFor', 'serverName');
  if (typeof throttling !== 'object' || throttling === null) {
    throw new InvalidOptionError('grpcThrottleFor', 'throttling', throttling, 'must be an object { maxTokens, tokenRatio } (gRFC A6 retryThrottling)');
  }
  const entry = THROTTLES.get(key);
  if (entry !== undefined && entry.maxTokens === throttling.maxTokens && entry.tokenRatio === throttling.tokenRatio) return entry.budget;
  const budget = retryThrottlingBudget(throttling);
  THROTTLES.set(key, { maxTokens: throttling.maxTokens, tokenRatio: throttling.tokenRatio, budget });
  return budget;
}

/**
 * The throttle in use for `serverName`, if any interceptor made one (see {@link grpcThrottleFor}):
 * for dashboards and tests that read its `tokens`.
 *
 * @throws InvalidOptionError for a `serverName` that is not a string.
 *
 * @example
 * ```ts
 * grpcThrottleOf('127.0.0.1:50051')?.tokens; // e.g. 7.3
 * ```
 */
export function grpcThrottleOf(serverName: string): RetryThrottlingBudget | undefined {
  return THROTTLES.get(serverNameOf(serverName, 'grpcThrottleOf', 'serverName'))?.budget;
}
