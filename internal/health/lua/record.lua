-- record.lua: adds a batch of delivery outcomes to the health of their
-- endpoints, and disables those that keep failing, atomically.
--
-- KEYS[1] the endpoint index (zset: id -> ms of the last outcome)
-- KEYS[2] the set of disabled endpoint ids
-- KEYS[3..] per endpoint of ARGV.endpoints, in its order, two keys: its
--           health hash and the zset of its configs (layout
--           EndpointConfigs)
-- ARGV[1] one JSON object (Store.Record lays it out):
--   now            ms
--   afterFailures  consecutive failures that disable an endpoint (0: never)
--   afterMs        ms of failing without a success that disable it (0: never)
--   alertEveryMs   least ms between two "failing" changes of one endpoint
--   bucketMs       length of one window bucket; buckets: how many are kept
--   keepMs         how long an enabled endpoint's health outlives its last outcome,
--                  and a disabled one's the time it was disabled (the
--                  endpoint index drops it at the first new bucket after)
--   configKeepMs   how long a config stays in its endpoint's configs zset
--                  (dropped at the endpoint's first new bucket after)
--   maxConfigs     most configs that zset keeps (the latest)
--   endpoints      [{id, url, owner, ok, lastOk, fail, firstFail, lastFail,
--                    runFail, runStart, err, configs}]: per endpoint, the successes
--                  and failures seen since the last batch; runFail and
--                  runStart count the failures after the batch's last
--                  success (ms are 0 when there is none); configs names
--                  the configs that sent to it (zset members)
-- A success resets the failure run unless a failure later than it is
-- stored already (another relay's): the run then goes on.
-- Returns the changes as JSON: [{id, url, event = failing | disabled,
-- failures, since, cause = failures | time}].
local a = cjson.decode(ARGV[1])
local now = a.now
local bucket = math.floor(now / a.bucketMs)
local oldest = bucket - a.buckets + 1
local changes = {}
local function ms(x) return string.format('%d', x) end
-- prune drops the window buckets that fell out of the window.
local function prune(h)
  for _, f in ipairs(redis.call('HKEYS', h)) do
    local b = tonumber(string.match(f, '^ok:(%d+)$') or string.match(f, '^fail:(%d+)$'))
    if b and b < oldest then
      redis.call('HDEL', h, f)
    end
  end
  redis.call('HSET', h, 'bucket', bucket)
end
local pruned = false
for i, e in ipairs(a.endpoints) do
  local h = KEYS[1 + 2 * i]
  local f = redis.call('HMGET', h, 'state', 'consec', 'since', 'lastErrAt', 'alertedAt', 'bucket', 'lastOk')
  local newBucket = tonumber(f[6]) ~= bucket
  if #e.configs > 0 then
    local cz = KEYS[2 + 2 * i]
    local add = {}
    for _, m in ipairs(e.configs) do
      table.insert(add, now); table.insert(add, m)
    end
    -- Bounded by count when a config was added (the zset holds at most
    -- maxConfigs after each write), by age once a bucket: a config older
    -- than configKeepMs has no health left to list (config.lua).
    if redis.call('ZADD', cz, unpack(add)) > 0 then
      redis.call('ZREMRANGEBYRANK', cz, 0, -(a.maxConfigs + 1))
    end
    if newBucket then
      redis.call('ZREMRANGEBYSCORE', cz, '-inf', '(' .. ms(now - a.configKeepMs))
    end
    redis.call('PEXPIRE', cz, a.configKeepMs)
  end
  local state = f[1] or 'enabled'
  local consec, since = tonumber(f[2]) or 0, tonumber(f[3]) or 0
  local lastErrAt, alertedAt = tonumber(f[4]) or 0, tonumber(f[5]) or 0
  local was = consec
  if newBucket then
    prune(h)
    pruned = true
  end
  -- One HSET of the fields every batch writes, and of those it changes.
  local set = {'url', e.url, 'owner', e.owner or ''}
  if e.ok > 0 then
    redis.call('HINCRBY', h, 'ok:' .. bucket, e.ok)
    table.insert(set, 'lastOk'); table.insert(set, ms(math.max(tonumber(f[7]) or 0, e.lastOk)))
  end
  if e.fail > 0 then
    redis.call('HINCRBY', h, 'fail:' .. bucket, e.fail)
  end
  if e.ok > 0 and e.lastOk >= lastErrAt then
    was = 0 -- the stored run ended with this batch's success: a run after it is a new one
    consec = e.runFail
    since = e.runFail > 0 and e.runStart or 0
  else
    consec = consec + e.fail
    if since == 0 and e.fail > 0 then
      since = e.firstFail
    end
  end
  if e.fail > 0 then
    table.insert(set, 'lastErr'); table.insert(set, e.err)
    table.insert(set, 'lastErrAt'); table.insert(set, ms(math.max(lastErrAt, e.lastFail)))
  end
  table.insert(set, 'consec'); table.insert(set, consec)
  table.insert(set, 'since'); table.insert(set, ms(since))
  table.insert(set, 'state'); table.insert(set, state)
  redis.call('HSET', h, unpack(set))
  if state == 'enabled' and was == 0 and consec > 0 and now - alertedAt >= a.alertEveryMs then
    redis.call('HSET', h, 'alertedAt', ms(now))
    table.insert(changes, {id = e.id, url = e.url, event = 'failing', failures = consec, since = since})
  end
  if state == 'enabled' and consec > 0 then
    local cause
    if a.afterFailures > 0 and consec >= a.afterFailures then
      cause = 'failures'
    elseif a.afterMs > 0 and now - since >= a.afterMs then
      cause = 'time'
    end
    if cause then
      state = 'disabled'
      redis.call('HSET', h, 'state', state, 'disabledAt', ms(now), 'cause', cause)
      redis.call('SADD', KEYS[2], e.id)
      table.insert(changes, {id = e.id, url = e.url, event = 'disabled', failures = consec, since = since, cause = cause})
    end
  end
  if state ~= 'disabled' or tonumber(redis.call('PTTL', h)) < 0 then
    -- (a disabled one's is kept a keep after it was disabled, not after
    -- its last outcome: then it is forgotten, disabled.lua)
    redis.call('PEXPIRE', h, a.keepMs)
  end
  redis.call('ZADD', KEYS[1], now, e.id)
end
if pruned then
  -- (once a bucket: an endpoint older than a keep has no health left to
  -- list, and List skips it meanwhile)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ms(now - a.keepMs))
end
if #changes == 0 then
  return '[]'
end
return cjson.encode(changes)
