-- deadline.lua: a task turn's deadline record, outside the commits that
-- start and end turns (commit.lua, ARGV deadline, says what the record is).
-- KEYS[1] the task hash (its 'dl' field is the record)
-- KEYS[2] the partition's deadline zset (member task id, score due ms)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- deadlineArgs in deadline.go declares them):
--   action     claim | drop
--   task       the task id (KEYS[2]'s member)
--   now        the caller's clock, ms
--   waitLimit  claim: the turn limits of the caller for the task, ms (0:
--   runLimit   none), for a turn without a record
-- claim: a worker (or an in-process agent) takes the turn. A turn still
--   waiting moves to its run deadline (phase r since now, listed at now +
--   runMs, or unlisted without a run limit); a turn claimed before (its
--   lease was taken over) keeps the run deadline it has. A turn without a
--   record (claimed while the task is interrupted: a message queued while
--   the task worked; or started where no limit was set) starts its run
--   deadline from ARGV's limits (nothing without a run limit, nor for a
--   task that is finished or gone): a claimed turn always runs under its
--   run limit. Returns {'none'} (no record, and
--   none made), {'ok'}, or {'expired', record} when the wait limit had
--   passed: nothing is changed, and the caller fails the task.
-- drop: unlists a task whose turn has no record any more (its hash
--   expired or was deleted): a listing whose record is live stays. Returns
--   1 when it unlisted the task.
local dl = redis.call('HGET', KEYS[1], 'dl')
if action == 'drop' then
  if dl and dl ~= '' then
    return 0
  end
  return redis.call('ZREM', KEYS[2], task)
end
if not dl or dl == '' then
  local waitMs, runMs = waitLimit, runLimit
  -- A task hash with a time to live is finished (commit.lua sets one only
  -- then), or gone (-2): no turn of it runs.
  if runMs <= 0 or redis.call('PTTL', KEYS[1]) ~= -1 then
    return {'none'}
  end
  redis.call('HSET', KEYS[1], 'dl', 'r ' .. string.format('%d', waitMs) .. ' ' .. string.format('%d', runMs) .. ' ' .. string.format('%d', now))
  redis.call('ZADD', KEYS[2], string.format('%d', now + runMs), task)
  return {'ok'}
end
local phase, waitMs, runMs, since = string.match(dl, '^(%a) (%d+) (%d+) (%d+)$')
if phase ~= 'w' then
  return {'ok'}
end
waitMs, runMs = tonumber(waitMs), tonumber(runMs)
if waitMs > 0 and now >= tonumber(since) + waitMs then
  return {'expired', dl}
end
if runMs > 0 then
  redis.call('HSET', KEYS[1], 'dl', 'r ' .. waitMs .. ' ' .. runMs .. ' ' .. string.format('%d', now))
  redis.call('ZADD', KEYS[2], string.format('%d', now + runMs), task)
else
  redis.call('HSET', KEYS[1], 'dl', '')
  redis.call('ZREM', KEYS[2], task)
end
return {'ok'}
