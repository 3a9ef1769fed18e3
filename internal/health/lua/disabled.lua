-- disabled.lua: returns the ids of the disabled endpoints, after taking
-- out of the set a few whose health record is gone (a disabled endpoint's
-- record expires a Keep after it was disabled: the endpoint is forgotten,
-- and so enabled), so that the set every relay reads each second does not
-- grow forever. A record disabled by a relay older than this one has no
-- expiry: it is given one.
--
-- KEYS[1] the set of disabled endpoint ids
-- KEYS[2] what the health hashes' names start with (layout.Keys.EndpointHealth
--         of ""): the hash of id is KEYS[2] .. id
-- ARGV[1] one JSON object: sample (ids checked per call), keepMs
local a = cjson.decode(ARGV[1])
for _, id in ipairs(redis.call('SRANDMEMBER', KEYS[1], a.sample)) do
  local h = KEYS[2] .. id
  local ttl = redis.call('PTTL', h)
  if ttl == -2 then
    redis.call('SREM', KEYS[1], id)
  elseif ttl == -1 then
    redis.call('PEXPIRE', h, a.keepMs)
  end
end
return redis.call('SMEMBERS', KEYS[1])
