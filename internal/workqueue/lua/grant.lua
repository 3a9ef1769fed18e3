-- grant.lua: gives a claimed work entry to a worker under a lease.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV, each named (grantEntry, in claims.go, lays them out in this order):
--   ARGV[1] entryID   the work entry's stream id
--   ARGV[2] leaseID   the lease id
--   ARGV[3] leaseMs   lease ms
--   ARGV[4] consumer  the worker's consumer name
-- The lease value is "<lease id> <entry id> <consumer>".
-- Returns {1, times delivered} when granted, {0} when another live lease holds
-- the task (the entry stays pending and is offered again later).
local entryID, leaseID, leaseMs, consumer = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local cur = redis.call('GET', KEYS[2])
if cur then
  local sp = string.find(cur, ' ', 1, true)
  local entry = string.sub(cur, sp + 1, string.find(cur, ' ', sp + 1, true) - 1)
  if entry ~= entryID then
    return {0}
  end
end
redis.call('SET', KEYS[2], leaseID .. ' ' .. entryID .. ' ' .. consumer, 'PX', leaseMs)
return {1, redis.call('HINCRBY', KEYS[3], entryID, 1)}
