-- pushset.lua: stores one push config of an existing task, atomically with
-- the checks that the task exists and has room for another config.
--
-- KEYS[1] task hash (a new config id drops its pc, the config ids commit.lua
--   keeps: the next commit reads them again; pf, the configs' event filters
--   (commit.lua), gets the config's accept string, or loses its entry, and
--   the entries of configs deleted since)
-- KEYS[2] task push-config hash
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- pushSetArgs in store.go declares them):
--   id           the config id
--   config       the config
--   max          the maximum number of configs per task
--   onlyReplace  "1": only replace a config that exists (a rewrite must
--                not bring back a config deleted meanwhile); returns 0
--                when there is none
--   usage        bytes to count for the config (0: count nothing), by
--                usage.lua's countUsage, as commit.lua counts a commit's
--   bucket       the usage bucket of the write (usage.go)
--   accept       the event classes the config takes (taskstore/filter.go;
--                "": every event). A rewrite (onlyReplace) keeps the
--                config's filter and ignores it
-- Returns, when stored, add: the bytes the owner's usage counter of bucket
-- gains (countUsage; "0" for none), which relay's tally adds to it
-- (usage_tally.go); 0 when onlyReplace finds no config; or an error
-- starting "NOTFOUND " / "FULL ". (Each message needs a space: Redis 7
-- prefixes a one-word error reply with "ERR ".)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOTFOUND task does not exist')
end
if onlyReplace == '1' and redis.call('HEXISTS', KEYS[2], id) == 0 then
  return 0
end
local new = redis.call('HEXISTS', KEYS[2], id) == 0
if new and redis.call('HLEN', KEYS[2]) >= max then
  return redis.error_reply('FULL push config limit reached')
end
redis.call('HSET', KEYS[2], id, config)
if new then
  redis.call('HDEL', KEYS[1], 'pc')
end
if onlyReplace ~= '1' then
  local pf = redis.call('HGET', KEYS[1], 'pf')
  if pf or accept ~= '' then
    local filters = pf and cjson.decode(pf) or {}
    for other in pairs(filters) do
      if redis.call('HEXISTS', KEYS[2], other) == 0 then
        filters[other] = nil
      end
    end
    filters[id] = accept ~= '' and accept or nil
    if next(filters) then
      redis.call('HSET', KEYS[1], 'pf', cjson.encode(filters))
    else
      redis.call('HDEL', KEYS[1], 'pf')
    end
  end
end
local add = '0'
if usage > 0 then
  local stored = redis.call('HMGET', KEYS[1], 'ub', 'us')
  local counted
  counted, add = countUsage(bucket, stored[1], stored[2], usage)
  redis.call('HSET', KEYS[1], 'ub', bucket, 'us', counted)
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return add
