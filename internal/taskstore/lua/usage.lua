-- usage.lua: the one Lua owner of usage counting (usage.go); Go puts this
-- file before each script that stores bytes (commit.lua, pushset.lua).
--
-- countUsage counts n more bytes stored for a task whose hash holds 'us',
-- the bytes counted for the task so far, and 'ub', the usage bucket they
-- were last counted in (us and ub as read, nil when absent); n is negative
-- when a commit gives back bytes counted ahead (usage.go, Reservations).
-- It returns what the caller writes as 'us' (with 'ub' = bucket), the
-- task's new count, and add, what the owner's counter of bucket
-- (layout.Keys.Usage) gains: n, or the task's whole count on its first
-- write in a new bucket, so that its bytes stay counted for a usage window
-- after its last write. It writes no counter: the caller returns add to
-- relay, whose tally adds it to the counter (usage_tally.go). Both are
-- strings (Redis would format a number through %.17g).
local function countUsage(bucket, ub, us, n)
  local counted = tonumber(us or '0') + n
  local add = n
  if ub ~= bucket then
    add = counted -- the task's first write in this bucket: its bytes move here
  end
  return string.format('%d', counted), string.format('%d', add)
end
