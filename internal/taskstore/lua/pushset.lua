-- pushset.lua: stores one push config of an existing task, atomically with
-- the checks that the task exists and has room for another config.
--
-- KEYS[1] task hash
-- KEYS[2] task push-config hash
-- ARGV, each named (store.go, pushSetArgs, lays them out in this order):
--   ARGV[1] id           the config id
--   ARGV[2] config       the config
--   ARGV[3] max          the maximum number of configs per task
--   ARGV[4] onlyReplace  "1": only replace a config that exists (a rewrite must
--                        not bring back a config deleted meanwhile); returns 0
--                        when there is none
-- Returns 1 when stored, or an error starting "NOTFOUND " / "FULL ". (Each
-- message needs a space: Redis 7 prefixes a one-word error reply with "ERR ".)
local id, config, max, onlyReplace = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOTFOUND task does not exist')
end
if onlyReplace == '1' and redis.call('HEXISTS', KEYS[2], id) == 0 then
  return 0
end
if redis.call('HEXISTS', KEYS[2], id) == 0 and redis.call('HLEN', KEYS[2]) >= max then
  return redis.error_reply('FULL push config limit reached')
end
redis.call('HSET', KEYS[2], id, config)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
