-- grant.lua: gives a claimed work entry to a worker under a lease.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV, each named (grantEntry, in claims.go, lays them out in this order):
--   ARGV[1] entryID   the work entry's stream id
--   ARGV[2] leaseID   the lease id
--   ARGV[3] leaseMs   lease ms
--   ARGV[4] consumer  the worker's consumer name
--   ARGV[5] messageID the message the entry offers a turn for ("": unknown)
-- The lease value is "<lease id> <entry id> <consumer>".
-- Returns {1, times delivered} when granted, {0} when another live lease holds
-- the task: the entry stays pending and is offered again later, unless it
-- offers the very turn the lease holds (the same message: an offer made
-- twice, by a re-offer), which is dropped (acknowledged and deleted), so
-- that a turn runs once at a time and its duplicate does not linger.
local entryID, leaseID, leaseMs, consumer, messageID = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local cur = redis.call('GET', KEYS[2])
if cur then
  local sp = string.find(cur, ' ', 1, true)
  local entry = string.sub(cur, sp + 1, string.find(cur, ' ', sp + 1, true) - 1)
  if entry ~= entryID then
    if messageID ~= '' then
      local held = redis.call('XRANGE', KEYS[1], entry, entry)
      if held[1] then
        local f = held[1][2]
        for i = 1, #f, 2 do
          if f[i] == 'm' and f[i + 1] == messageID then
            redis.call('XACK', KEYS[1], 'workers', entryID)
            redis.call('XDEL', KEYS[1], entryID)
            redis.call('HDEL', KEYS[3], entryID)
          end
        end
      end
    end
    return {0}
  end
end
redis.call('SET', KEYS[2], leaseID .. ' ' .. entryID .. ' ' .. consumer, 'PX', leaseMs)
return {1, redis.call('HINCRBY', KEYS[3], entryID, 1)}
