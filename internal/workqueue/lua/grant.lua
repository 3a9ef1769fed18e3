-- grant.lua: gives a claimed work entry to a worker under a lease.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV[1] entry id   ARGV[2] lease id   ARGV[3] lease ms   ARGV[4] consumer
-- The lease value is "<lease id> <entry id> <consumer>".
-- Returns {1, times delivered} when granted, {0} when another live lease holds
-- the task (the entry stays pending and is offered again later).
local cur = redis.call('GET', KEYS[2])
if cur then
  local sp = string.find(cur, ' ', 1, true)
  local entry = string.sub(cur, sp + 1, string.find(cur, ' ', sp + 1, true) - 1)
  if entry ~= ARGV[1] then
    return {0}
  end
end
redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. ARGV[1] .. ' ' .. ARGV[4], 'PX', ARGV[3])
return {1, redis.call('HINCRBY', KEYS[3], ARGV[1], 1)}
