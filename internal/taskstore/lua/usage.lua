-- usage.lua: the one Lua owner of usage counting (usage.go); Go puts this
-- file before each script that stores bytes (commit.lua, pushset.lua).
--
-- countUsage counts n more bytes stored for a task whose hash holds 'us',
-- the bytes counted for the task so far, and 'ub', the usage bucket they
-- were last counted in (us and ub as read, nil when absent). It adds to the
-- owner's counter (counter: layout.Keys.Usage of bucket) what the task
-- stores; the task's first write in a new bucket adds its whole count
-- again, so that its bytes stay counted for a usage window after its last
-- write. n is negative when a commit gives back bytes counted ahead
-- (usage.go, Reservations). The counter lives ttl ms once made. Returns
-- what the caller writes as 'us' (with 'ub' = bucket): the task's new
-- count.
local function countUsage(counter, bucket, ttl, ub, us, n)
  local counted = tonumber(us or '0') + n
  local add = n
  if ub ~= bucket then
    add = counted -- the task's first write in this bucket: its bytes move here
  end
  -- (add goes as a string: Redis would format a number through %.17g)
  if add ~= 0 and redis.call('INCRBY', counter, string.format('%d', add)) == add then
    redis.call('PEXPIRE', counter, ttl)
  end
  return string.format('%d', counted)
end
