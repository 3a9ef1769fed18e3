-- grant.lua: gives a claimed work entry to a worker under a lease, when the
-- task's lease key is not free (a lease or a done marker is there), or when
-- the entry was taken over from an expired lease (its attempt is read from
-- the pending list). A fresh entry of a task with a free lease key is
-- granted without it, by SET NX (claims.go).
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- grantArgs in claims.go declares them):
--   entryID    the work entry's stream id
--   leaseID    the lease id, but its attempt: the lease's id is
--              "<leaseID>.<attempt>"
--   leaseMs    lease ms
--   consumer   the worker's consumer name
--   turn       the entry's turn number (the task version of the commit
--              that opened the turn; 0: unknown, an entry written
--              before turns were numbered)
--   delivered  how often the entry was delivered, this delivery included,
--              when the caller knows (1: read new); 0: read it from the
--              pending list
-- KEYS[2] holds a lease, "<lease id> <entry id>[/<turn>] <consumer>" (no
-- "/<turn>" when the turn is unknown), or, once a turn is over (renew.lua),
-- the done marker "done <entry id> <turn>": every turn of the task up to
-- <turn> is over.
-- The entry's delivery count in the pending list counts its grants: a
-- delivery that is not granted (the entry waits) is taken back from it, so
-- the count is the attempt number of the next grant. The lease id carries
-- it, so that renew.lua keeps it as it is: an XCLAIM ... JUSTID leaves the
-- count alone on Redis, and raises it on the embedded store (miniredis),
-- unless told the count (RETRYCOUNT). A grant over a live lease on this
-- very entry (a takeover from a holder late to renew, or, on the embedded
-- store, whose keys do not expire, from one that is gone) is at least the
-- held lease's attempt plus one, and sets the count to it: the holder may
-- have renewed (the count back to its attempt) since the claim's
-- XAUTOCLAIM raised it.
-- Returns {1, attempt} when granted, {0} when not. An entry whose turn is
-- known is dropped (acknowledged and deleted: {0}) when its turn is at or
-- below the done marker's, or at or below the turn of a live lease on
-- another entry (an older turn, or a duplicate offer of the held one), so
-- that a turn runs once and its duplicates do not linger. An entry of a
-- later turn, or of an unknown one, while a live lease holds another entry
-- stays pending and is offered again later: it runs after the held turn.
local function deliveries()
  if delivered > 0 then
    return delivered
  end
  local p = redis.call('XPENDING', KEYS[1], 'workers', entryID, entryID, 1)
  if p[1] then
    return tonumber(p[1][4]) or 1
  end
  return 1
end
local function drop()
  redis.call('XACK', KEYS[1], 'workers', entryID)
  redis.call('XDEL', KEYS[1], entryID)
  return {0}
end
local function wait()
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entryID, 'RETRYCOUNT', math.max(deliveries() - 1, 0), 'JUSTID')
  return {0}
end
local cur = redis.call('GET', KEYS[2])
-- The attempt of the lease this grant takes over, when KEYS[2] holds a
-- live lease on this very entry (its holder late to renew; on the embedded
-- store, whose keys do not expire, gone): this grant is a later attempt,
-- even if the holder renewed since this claim's XAUTOCLAIM raised the
-- count (a renewal sets it back to the held attempt).
local heldAttempt
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
      return wait()
    end
    if string.sub(cur, 1, #leaseID + 1) ~= leaseID .. '.' then -- (not this claim's own SET NX, sent again)
      heldAttempt = tonumber(string.match(string.sub(cur, 1, a - 1), '^[^.]*%.[^.]*%.(%d+)$'))
    end
  end
end
local at = entryID
if turn > 0 then
  at = entryID .. '/' .. turn
end
local n = deliveries()
if heldAttempt and n <= heldAttempt then
  n = heldAttempt + 1
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entryID, 'RETRYCOUNT', n, 'JUSTID')
end
redis.call('SET', KEYS[2], leaseID .. '.' .. n .. ' ' .. at .. ' ' .. consumer, 'PX', leaseMs)
return {1, n}
