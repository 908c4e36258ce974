/**
 * The Lua scripts of the shared budgets. Each runs atomically in Redis (one script at a time per
 * shard), so concurrent processes never overdraw: a decision reads and writes the state in one
 * step. Both touch exactly one key, so they run on Redis Cluster (the key's hash tag picks its slot).
 *
 * Internal: the budgets in this folder call them; not part of the public API.
 */

/**
 * gRFC A6's token bucket, in thousandths of a token (as gRPC's core keeps it, so `+0.1` never
 * drifts). A missing key is a full bucket (A6: the bucket starts full).
 *
 * KEYS[1] the bucket. ARGV: maxMilli, ratioMilli, successes, failures, decide (1/0), ttlMs.
 * The batch is applied as its successes first, then its failures — the same result as that many
 * `onSuccess()` then `onFailure()` calls on one in-process bucket. With decide = 1 it returns 1 if
 * a retry is allowed after the batch (tokens > max / 2), else 0; with decide = 0 the tokens.
 */
export const THROTTLING_SCRIPT = `
local max = tonumber(ARGV[1])
local t = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
local s = tonumber(ARGV[3])
if s > 0 then t = math.min(max, t + s * tonumber(ARGV[2])) end
local f = tonumber(ARGV[4])
if f > 0 then t = math.max(0, t - f * 1000) end
redis.call('SET', KEYS[1], string.format('%d', t), 'PX', ARGV[6])
if ARGV[5] == '1' then
  if t * 2 > max then return 1 end
  return 0
end
return t
`;

/**
 * The SRE retry ratio over a sliding window kept as a fixed ring of `buckets` slots in one hash
 * (fields k<i> = the slot's bucket number, q<i> = requests, r<i> = retries), timed by the Redis
 * server's clock (TIME), so processes whose clocks differ still share one window. Memory is fixed:
 * 3 × buckets fields, whatever the traffic.
 *
 * KEYS[1] the hash. ARGV: ratio, minRetriesPerWindow, bucketMs, buckets, requests, decide (1/0),
 * ttlMs. Adds the batch's requests (first tries) to the current bucket; with decide = 1, grants a
 * retry iff, counting it as a retry and as a request, retries ≤ ratio × requests + floor over the
 * window, records it, and returns 1 (else 0). With decide = 0 it returns the window's requests.
 */
export const RATIO_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucketMs = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local k = math.floor(now / bucketMs)
local slot = k % n
local fields = {}
for i = 0, n - 1 do
  fields[3 * i + 1] = 'k' .. i
  fields[3 * i + 2] = 'q' .. i
  fields[3 * i + 3] = 'r' .. i
end
local v = redis.call('HMGET', KEYS[1], unpack(fields))
local q, r, curQ, curR = 0, 0, 0, 0
for i = 0, n - 1 do
  local stamp = tonumber(v[3 * i + 1])
  if stamp and stamp > k - n and stamp <= k then
    local qi = tonumber(v[3 * i + 2]) or 0
    local ri = tonumber(v[3 * i + 3]) or 0
    q = q + qi
    r = r + ri
    if i == slot and stamp == k then
      curQ = qi
      curR = ri
    end
  end
end
local add = tonumber(ARGV[5])
local granted = 0
if ARGV[6] == '1' and r + 1 <= tonumber(ARGV[1]) * (q + add + 1) + tonumber(ARGV[2]) then granted = 1 end
if add + granted > 0 then
  redis.call('HSET', KEYS[1], 'k' .. slot, k, 'q' .. slot, curQ + add + granted, 'r' .. slot, curR + granted)
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if ARGV[6] == '1' then return granted end
return q + add
`;
