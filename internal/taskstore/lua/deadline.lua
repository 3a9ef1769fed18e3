-- deadline.lua: a task turn's deadline record, outside the commits that
-- start and end turns (commit.lua, ARGV deadline, says what the record is).
-- KEYS[1] the task hash (its 'dl' field is the record)
-- KEYS[2] the partition's deadline zset (member task id, score due ms)
-- ARGV, each named (deadline.go lays them out in this order):
--   ARGV[1] action  claim | drop
--   ARGV[2] task    the task id (KEYS[2]'s member)
--   ARGV[3] now     the caller's clock, ms
-- claim: a worker (or an in-process agent) takes the turn. A turn still
--   waiting moves to its run deadline (phase r since now, listed at now +
--   runMs, or unlisted without a run limit); a turn claimed before (its
--   lease was taken over) keeps the run deadline it has. Returns {'none'}
--   (no record), {'ok'}, or {'expired', record} when the wait limit had
--   passed: nothing is changed, and the caller fails the task.
-- drop: unlists a task whose turn has no record any more (its hash
--   expired or was deleted): a listing whose record is live stays. Returns
--   1 when it unlisted the task.
local action, task, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local dl = redis.call('HGET', KEYS[1], 'dl')
if action == 'drop' then
  if dl and dl ~= '' then
    return 0
  end
  return redis.call('ZREM', KEYS[2], task)
end
if not dl or dl == '' then
  return {'none'}
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
