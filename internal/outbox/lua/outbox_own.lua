-- outbox_own.lua: the lease of a partition's outbox owner (outbox.go).
--
-- KEYS[1] the owner lease   KEYS[2] the outbox offset   KEYS[3] the outbox stream
-- KEYS[4] the partition's parked-lane set
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- ownArgs in outbox.go declares them):
--   holder   the lease value (unique to one owner)
--   leaseMs  lease ms
--   action   what to do:
--     "own"     take the lease when it is free (or this owner's): returns
--               {1, offset, the stream's last id, parked lanes...} or {0}
--     "keep"    renew the lease and store offset (when not ""), trimming the
--               stream's entries before it: {1}, or {0} when the lease is
--               another's (nothing is written then)
--     "release" as keep, then give the lease up
--   offset   the offset to store (keep, release; "" for own)
local mine = redis.call('GET', KEYS[1])
if action == 'own' then
  if mine ~= holder and not redis.call('SET', KEYS[1], holder, 'NX', 'PX', leaseMs) then
    return {0}
  end
  redis.call('PEXPIRE', KEYS[1], leaseMs)
  local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
  local out = {1, redis.call('GET', KEYS[2]) or '0-0', last and last[1] or '0-0'}
  for _, l in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    out[#out + 1] = l
  end
  return out
end
if mine ~= holder then
  return {0}
end
if offset ~= '' then
  redis.call('SET', KEYS[2], offset)
  redis.call('XTRIM', KEYS[3], 'MINID', offset)
end
if action == 'release' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], leaseMs)
end
return {1}
