-- pushset.lua: stores one push config of an existing task, atomically with
-- the checks that the task exists and has room for another config.
--
-- KEYS[1] task hash
-- KEYS[2] task push-config hash
-- ARGV[1] config id
-- ARGV[2] config
-- ARGV[3] maximum number of configs per task
-- ARGV[4] "1": only replace a config that exists (a rewrite must not bring
--   back a config deleted meanwhile); returns 0 when there is none
-- Returns 1 when stored, or an error starting "NOTFOUND " / "FULL ". (Each
-- message needs a space: Redis 7 prefixes a one-word error reply with "ERR ".)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOTFOUND task does not exist')
end
if ARGV[4] == '1' and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 0
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then
  return redis.error_reply('FULL push config limit reached')
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
