-- grant.lua: gives a claimed work entry to a worker under a lease.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- grantArgs in claims.go declares them):
--   entryID   the work entry's stream id
--   leaseID   the lease id
--   leaseMs   lease ms
--   consumer  the worker's consumer name
--   turn      the entry's turn number (the task version of the commit
--             that opened the turn; 0: unknown, an entry written
--             before turns were numbered)
-- KEYS[2] holds a lease, "<lease id> <entry id>[/<turn>] <consumer>" (no
-- "/<turn>" when the turn is unknown), or, once a turn is over (renew.lua),
-- the done marker "done <entry id> <turn>": every turn of the task up to
-- <turn> is over.
-- Returns {1, times delivered} when granted, {0} when not. An entry whose
-- turn is known is dropped (acknowledged and deleted: {0}) when its turn is
-- at or below the done marker's, or at or below the turn of a live lease on
-- another entry (an older turn, or a duplicate offer of the held one), so
-- that a turn runs once and its duplicates do not linger. An entry of a
-- later turn, or of an unknown one, while a live lease holds another entry
-- stays pending and is offered again later: it runs after the held turn.
local function drop()
  redis.call('XACK', KEYS[1], 'workers', entryID)
  redis.call('XDEL', KEYS[1], entryID)
  redis.call('HDEL', KEYS[3], entryID)
  return {0}
end
local cur = redis.call('GET', KEYS[2])
if cur then
  local a = string.find(cur, ' ', 1, true)
  local b = string.find(cur, ' ', a + 1, true)
  local entry = string.sub(cur, a + 1, b - 1)
  if string.sub(cur, 1, a - 1) == 'done' then
    local over = tonumber(string.sub(cur, b + 1)) or 0
    if turn > 0 and turn <= over then
      return drop()
    end
  else
    local held = 0
    local sl = string.find(entry, '/', 1, true)
    if sl then
      held = tonumber(string.sub(entry, sl + 1)) or 0
      entry = string.sub(entry, 1, sl - 1)
    end
    if entry ~= entryID then
      if turn > 0 and turn <= held then
        return drop()
      end
      return {0}
    end
  end
end
local at = entryID
if turn > 0 then
  at = entryID .. '/' .. turn
end
redis.call('SET', KEYS[2], leaseID .. ' ' .. at .. ' ' .. consumer, 'PX', leaseMs)
return {1, redis.call('HINCRBY', KEYS[3], entryID, 1)}
