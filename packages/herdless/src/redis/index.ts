/**
 * herdless/redis — retry budgets shared by a fleet of processes, kept in Redis.
 *
 * gRFC A6's token bucket and the SRE retry ratio with their state in Redis (atomic Lua scripts,
 * a batched success path, a bounded wait and a per-process fallback), for fleets of short-lived
 * or lightly loaded processes whose per-process budgets see too little traffic to hold back an
 * outage. The Redis client (ioredis, or node-redis) is an optional peer dependency: install one to use this entry.
 * @packageDocumentation
 */
export {
  redisRetryThrottlingBudget,
  redisRetryRatioBudget,
  type RedisRetryThrottlingBudget,
  type RedisRetryRatioBudget,
  type RedisRetryThrottlingOptions,
  type RedisRetryRatioOptions,
} from './budgets.js';
export type { RedisScriptClient, NodeRedisScriptClient, RedisBudgetCommonOptions, RedisBudgetFallbackEvent, RedisBudgetRecoverEvent } from './options.js';
export { RedisBudgetTimeoutError, type RedisBudgetStats, type SharedBudget } from './shared-budget.js';
