-- acquire.lua: lets one delivery to a webhook URL start now, or says how
-- long to wait, under the URL's and its host's limits (throttle.go).
--
-- KEYS[1] the URL's rate state at this delivery's rate (a hash, one per URL
--   and rate: t, the time its next delivery may start; h, the latest
--   start a waiter was told)   KEYS[2] the URL's
--   deliveries in flight (zset: lease id -> expiry ms)
-- KEYS[3] the host's rate state                     KEYS[4] the host's
--   deliveries in flight
-- Every key is given; a limit of 0 leaves its key alone.
-- ARGV[1] one JSON object, its fields named:
--   urlRate, hostRate  deliveries per second (0: no limit)
--   urlMax, hostMax    deliveries in flight at most (0: no limit)
--   lease              the lease id to record in flight when allowed
--   leaseMs            how long a lease holds its slot unless released (a
--                      relay that dies frees it then)
--   pollMs             the longest wait told while a cap is full (a slot
--                      frees when a delivery ends, which no one announces)
--   now                ms, for tests (0: Redis's clock)
-- Time is Redis's (TIME), so relays whose clocks differ agree.
-- Rates are spaced (GCRA without burst): a delivery may start once the
-- previous one started 1/rate s earlier, so any second holds at most rate
-- starts. A step is at most maxStep (a rate under one a day counts as one
-- a day), so that every sum and expiry stays a finite number of ms. A waiter is told a start no other waiter was told (h), so that
-- waiters come back one after another, not all at once.
-- Returns {1} when the delivery may start (its lease recorded), or
-- {0, wait ms, 'rate' | 'concurrency'}.
local a = cjson.decode(ARGV[1])
local now = a.now
if now <= 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
end
-- busy returns the ms until the first lease of key ends when key holds
-- max leases, else nil.
local function busy(key, max)
  if max <= 0 then
    return nil
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) < max then
    return nil
  end
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(first[2]) - now)
end
local full = busy(KEYS[2], a.urlMax) or busy(KEYS[4], a.hostMax)
if full then
  return {0, math.min(full, a.pollMs), 'concurrency'}
end
-- The rates: the delivery may start at the later of their next starts.
local maxStep = 86400000
local function stepOf(rate)
  return math.min(1000 / rate, maxStep)
end
local function state(key, rate)
  if rate <= 0 then
    return 0, 0
  end
  local s = redis.call('HMGET', key, 't', 'h')
  return tonumber(s[1] or '0'), tonumber(s[2] or '0')
end
local ut, uh = state(KEYS[1], a.urlRate)
local ht, hh = state(KEYS[3], a.hostRate)
local start = math.max(ut, ht)
if start > now then
  -- Wait: told the later of the next start and one step after the last
  -- waiter's, which becomes the last waiter's.
  local step = 0
  for _, rate in ipairs({a.urlRate, a.hostRate}) do
    if rate > 0 then
      step = math.max(step, stepOf(rate))
    end
  end
  local told = math.max(start, math.max(uh, hh) + step)
  told = math.min(told, now + 60000)
  for i, k in ipairs({KEYS[1], KEYS[3]}) do
    local rate = i == 1 and a.urlRate or a.hostRate
    if rate > 0 then
      redis.call('HSET', k, 'h', string.format('%d', told))
      redis.call('PEXPIRE', k, math.floor(told - now + 2000))
    end
  end
  return {0, math.max(1, math.floor(told - now)), 'rate'}
end
for i, k in ipairs({KEYS[1], KEYS[3]}) do
  local rate = i == 1 and a.urlRate or a.hostRate
  if rate > 0 then
    local nxt = now + stepOf(rate)
    redis.call('HSET', k, 't', string.format('%.3f', nxt))
    redis.call('PEXPIRE', k, math.floor(stepOf(rate) + 60000))
  end
end
for i, k in ipairs({KEYS[2], KEYS[4]}) do
  local max = i == 1 and a.urlMax or a.hostMax
  if max > 0 then
    redis.call('ZADD', k, now + a.leaseMs, a.lease)
    redis.call('PEXPIRE', k, a.leaseMs + 1000)
  end
end
return {1}
