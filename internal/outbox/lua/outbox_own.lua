-- outbox_own.lua: the lease of a partition's outbox owner (outbox.go).
--
-- KEYS[1] the owner lease   KEYS[2] the outbox offset   KEYS[3] the outbox stream
-- KEYS[4] the partition's parked-lane set
-- ARGV[1] the lease value (unique to one owner)   ARGV[2] lease ms
-- ARGV[3] what to do:
--   "own"     take the lease when it is free (or this owner's): returns
--             {1, offset, the stream's last id, parked lanes...} or {0}
--   "keep"    renew the lease and store ARGV[4], the offset (when not ""),
--             trimming the stream's entries before it: {1}, or {0} when the
--             lease is another's (nothing is written then)
--   "release" as keep, then give the lease up
local mine = redis.call('GET', KEYS[1])
if ARGV[3] == 'own' then
  if mine ~= ARGV[1] and not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {0}
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
  local out = {1, redis.call('GET', KEYS[2]) or '0-0', last and last[1] or '0-0'}
  for _, l in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    out[#out + 1] = l
  end
  return out
end
if mine ~= ARGV[1] then
  return {0}
end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[2], ARGV[4])
  redis.call('XTRIM', KEYS[3], 'MINID', ARGV[4])
end
if ARGV[3] == 'release' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return {1}
