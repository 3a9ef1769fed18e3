-- enable.lua: enables an endpoint again; its failure run starts over.
--
-- KEYS[1] the endpoint's health hash   KEYS[2] the set of disabled endpoint ids
-- KEYS[3] the endpoint index
-- ARGV[1] one JSON object: id, now (ms), keepMs (as record.lua's)
-- Returns 0 when the endpoint has no health record, 1 when it was enabled
-- (or was not disabled). One still in the disabled set without its record
-- (evicted) is taken out of the set: 1.
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.call('SREM', KEYS[2], a.id)
end
redis.call('HSET', KEYS[1], 'state', 'enabled', 'consec', 0, 'since', 0, 'enabledAt', string.format('%d', a.now))
redis.call('HDEL', KEYS[1], 'disabledAt', 'cause')
redis.call('SREM', KEYS[2], a.id)
redis.call('PEXPIRE', KEYS[1], a.keepMs)
redis.call('ZADD', KEYS[3], a.now, a.id)
return 1
