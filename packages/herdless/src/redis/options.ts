import { InvalidOptionError } from '../core/errors.js';
import { numberOption } from '../core/validate.js';

/**
 * The Redis client a shared budget talks through: an ioredis `Redis` or `Cluster` fits as it is
 * (only these three methods are used). Give it `enableOfflineQueue: false` (and a small
 * `maxRetriesPerRequest`) so that while Redis is down commands fail at once instead of queueing:
 * the budget falls back either way, but a queued decision would still run when Redis comes back.
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  script(subcommand: 'LOAD', script: string): Promise<unknown>;
}

/**
 * A node-redis client (`createClient()` or `createCluster()` from `redis` / `@redis/client`, v4 or
 * later): a shared budget takes it as it is and speaks its API (`evalSha`, `eval` and `scriptLoad`
 * with `{ keys, arguments }`). Give it `disableOfflineQueue: true` so that while Redis is down
 * commands fail at once instead of queueing (see {@link RedisScriptClient}).
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * const client: NodeRedisScriptClient = await createClient({ url: 'redis://127.0.0.1:6379', disableOfflineQueue: true }).connect();
 * ```
 */
export interface NodeRedisScriptClient {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  scriptLoad(script: string): Promise<unknown>;
}

/** Sent when a shared budget stops using Redis and decides with its local budget instead. */
export interface RedisBudgetFallbackEvent {
  /** The server name the budget is kept for. */
  readonly server: string;
  /** The Redis key of the budget. */
  readonly key: string;
  /** `'timeout'`: Redis did not answer within `timeoutMs`; `'error'`: the command failed. */
  readonly reason: 'timeout' | 'error';
  /** What the client rejected with (for `'error'`), or a {@link RedisBudgetTimeoutError}. */
  readonly error: unknown;
}

/** Sent when a shared budget that had fallen back reaches Redis again and resumes sharing. */
export interface RedisBudgetRecoverEvent {
  readonly server: string;
  readonly key: string;
  /** How long it decided locally, in ms. */
  readonly localMs: number;
}

/** Options every shared budget takes (besides the budget's own). */
export interface RedisBudgetCommonOptions {
  /** The Redis client: ioredis `Redis` or `Cluster`, or node-redis `createClient()` or `createCluster()`. Required. */
  client: RedisScriptClient | NodeRedisScriptClient;
  /**
   * The name of the server (host, `host:port` or service name) the budget is kept for: one budget
   * per server, as gRFC A6 keeps its throttle per server. Required, 1–256 characters.
   */
  server: string;
  /**
   * Prefix of the Redis key. Default `'herdless:'`. The key is `<prefix>{<server>}:<kind>`: the
   * braces are a Redis Cluster hash tag, so every key of one server lands in one slot.
   */
  keyPrefix?: string | undefined;
  /**
   * The staleness bound: successes (and first tries, for the ratio) are counted locally and sent
   * in one batch at most this long after the first of them, in ms (the token bucket's late
   * deposits only make it stricter; the ratio's late first tries shift in its window by as much).
   * Failures are never held back (they go with their retry decision, or alone at once). Default
   * 100. Range [1, 60 000].
   */
  flushIntervalMs?: number | undefined;
  /**
   * The longest a decision waits for Redis, in ms; past it the budget falls back to its local
   * budget for this decision and the ones after (for `recoverIntervalMs`). It bounds Redis, not
   * this process: a reply that came while the process was busy (a synchronous stall, a GC pause,
   * the OS running other processes) is read before the decision is called late. Default 100: on a
   * 2-core machine at load average ≈ 27 — 20 processes each stalling 20 ms in every 100 ms — 0 of
   * 9 135 decisions took longer, against 1.5 % at 5 ms and 0.2 % at 50 ms (docs/budgets.md).
   * The wait only delays a retry that is about to wait its backoff anyway, and only when Redis is
   * slow or unreachable without refusing (a Redis that is down fails at once: see `client`).
   * Range [1, 10 000].
   */
  timeoutMs?: number | undefined;
  /** While fallen back, how often Redis is tried again, in ms. Default 1000. Range [10, 600 000]. */
  recoverIntervalMs?: number | undefined;
  /**
   * How long an unused key lives in Redis, in ms (refreshed by every write); an expired bucket
   * comes back full, an expired window empty — as for a new process. Default 600 000 (10 min).
   * Range [1000, 2^31 − 1]; for the ratio, at least `windowMs`.
   */
  keyTtlMs?: number | undefined;
  /** Called when the budget falls back to its local budget (see {@link RedisBudgetFallbackEvent}). A throw is reported as a warning, never reaches a call. */
  onFallback?: ((event: RedisBudgetFallbackEvent) => void) | undefined;
  /** Called when the budget resumes sharing through Redis. A throw is reported as a warning. */
  onRecover?: ((event: RedisBudgetRecoverEvent) => void) | undefined;
}

/** @internal The common options, checked and with their defaults. */
export interface CommonSettings {
  client: RedisScriptClient;
  server: string;
  key: string;
  flushIntervalMs: number;
  timeoutMs: number;
  recoverIntervalMs: number;
  keyTtlMs: number;
  onFallback: ((event: RedisBudgetFallbackEvent) => void) | undefined;
  onRecover: ((event: RedisBudgetRecoverEvent) => void) | undefined;
}

/** @internal The option names every shared budget knows. */
export const COMMON_FIELDS = ['client', 'server', 'keyPrefix', 'flushIntervalMs', 'timeoutMs', 'recoverIntervalMs', 'keyTtlMs', 'onFallback', 'onRecover'] as const;

/** @internal Checks the common options; `kind` ends the key (`retry-throttling`, `retry-ratio`). */
export function commonSettings(owner: string, o: Partial<RedisBudgetCommonOptions>, kind: string, minTtlMs: number): CommonSettings {
  const client = scriptClient(o.client);
  if (client === undefined) {
    throw new InvalidOptionError(owner, 'client', o.client, 'must be a Redis client (an ioredis Redis or Cluster: evalsha, eval, script; or a node-redis client or cluster: evalSha, eval, scriptLoad)');
  }
  const server = o.server;
  if (typeof server !== 'string' || server.length === 0 || server.length > 256) {
    throw new InvalidOptionError(owner, 'server', server, 'must be a string of 1 to 256 characters');
  }
  const prefix = o.keyPrefix ?? 'herdless:';
  if (typeof prefix !== 'string' || prefix.length > 256) {
    throw new InvalidOptionError(owner, 'keyPrefix', prefix, 'must be a string of at most 256 characters');
  }
  for (const field of ['onFallback', 'onRecover'] as const) {
    const hook = o[field];
    if (hook !== undefined && typeof hook !== 'function') throw new InvalidOptionError(owner, field, hook, 'must be a function');
  }
  const keyTtlMs = numberOption(owner, 'keyTtlMs', o.keyTtlMs, Math.max(600_000, minTtlMs), { min: 1000, max: 2 ** 31 - 1, integer: true });
  if (keyTtlMs < minTtlMs) throw new InvalidOptionError(owner, 'keyTtlMs', keyTtlMs, `must be ≥ windowMs (${minTtlMs})`);
  return {
    client,
    server,
    key: `${prefix}{${server}}:${kind}`,
    flushIntervalMs: numberOption(owner, 'flushIntervalMs', o.flushIntervalMs, 100, { min: 1, max: 60_000 }),
    timeoutMs: numberOption(owner, 'timeoutMs', o.timeoutMs, 100, { min: 1, max: 10_000 }),
    recoverIntervalMs: numberOption(owner, 'recoverIntervalMs', o.recoverIntervalMs, 1000, { min: 10, max: 600_000 }),
    keyTtlMs,
    onFallback: o.onFallback,
    onRecover: o.onRecover,
  };
}

function hasFunctions(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' && typeof value !== 'function') return false;
  if (value === null) return false;
  for (const name of names) if (typeof (value as Record<string, unknown>)[name] !== 'function') return false;
  return true;
}

/** One view per node-redis client, so that every budget on it shares one script cache (one SCRIPT LOAD). */
const nodeRedisViews = /* @__PURE__ */ new WeakMap<NodeRedisScriptClient, RedisScriptClient>();

/**
 * The client as the budgets speak to it: an ioredis client as it is; a node-redis client through a
 * view that turns ioredis's `(numKeys, ...keysAndArgs)` into node-redis's `{ keys, arguments }`
 * (node-redis routes a cluster command by its first key: the budget's, hash-tagged). `undefined`
 * for anything else.
 */
function scriptClient(client: unknown): RedisScriptClient | undefined {
  if (hasFunctions(client, ['evalsha', 'eval', 'script'])) return client as RedisScriptClient;
  if (!hasFunctions(client, ['evalSha', 'eval', 'scriptLoad'])) return undefined;
  const nodeRedis = client as NodeRedisScriptClient;
  let view = nodeRedisViews.get(nodeRedis);
  if (view === undefined) {
    const split = (numKeys: number, args: (string | number)[]): { keys: string[]; arguments: string[] } => ({
      keys: args.slice(0, numKeys).map(String),
      arguments: args.slice(numKeys).map(String),
    });
    view = {
      evalsha: (sha, numKeys, ...args) => nodeRedis.evalSha(sha, split(numKeys, args)),
      eval: (script, numKeys, ...args) => nodeRedis.eval(script, split(numKeys, args)),
      script: (_subcommand, script) => nodeRedis.scriptLoad(script),
    };
    nodeRedisViews.set(nodeRedis, view);
  }
  return view;
}
