-- finish.lua: records one delivery attempt and moves the lane on, atomically.
-- The lane lease and the token's XACK decide: while another Begin holds the
-- lease, only the attempt is logged; a token that was already acked (a
-- reclaimed duplicate) changes nothing.
--
-- KEYS[1] the partition's delivery stream     KEYS[2] the lane
-- KEYS[3] the partition's retry zset           KEYS[4] the partition's dead-letter stream
-- KEYS[5] the delivery record                  KEYS[6] a previous relay's attempt list of it
-- KEYS[7] the task's push-config hash       KEYS[8] the lane's lease (released here, or renewed by a run step)
-- KEYS[9] the task's event stream            KEYS[10] the partition's parked-lane set (outbox.go)
-- KEYS[11..15] the partition's status indexes: pending, failed, dead, disabled, dropped
--   (layout.Keys.StatusIndexes; a record leaves the one of the status it had)
-- KEYS[16] the task hash: a 410 drops its pc (the config ids commit.lua keeps)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- finishArgs in delivery.go declares them):
--   tokenID      the token's stream id
--   attempted    the head this attempt delivered ("eventId notificationId";
--                a head a previous relay wrote goes on with "\n<event>\n<snapshot>")
--   outcome      delivered | retry | dead | gone (410: disable the config) |
--                drop (the config was deleted: drop the lane) | skip (the event
--                expired: drop the head) | wait (not attempted: the webhook's
--                limits hold it; the lane waits until retryDue, like a retry,
--                but the record is left as it is, no attempt is logged, and
--                nextAttempt is the same attempt's number)
--   task         task id
--   config       config id
--   nextAttempt  the next attempt's number
--   firstMs      the first attempt's time, ms
--   now          ms
--   retryDue     when the next attempt is due, ms (retry)
--   attemptRec   the attempt record (JSON, or "" for none)
--   kept         attempts kept per delivery
--   records      the partition's record prefix (layout.Keys.RecordPrefix)
--   nid          notification id
--   reason       why (dead, gone)
--   keep         delivery record retention in ms
--   goOn         "1" when the caller would go on with the lane's next head
--   leaseMs      lease ms
--   consumer     the caller's consumer name
--   leaseValue   the caller's lease value
--   restartIdle  "1" when a run step is to restart the token's idle time
--   unpark       "1" when lanes are parked from an outbox: a lane left
--                empty is taken off the parked set
--   legacy       the partition's prefix of a previous relay's attempt
--                lists (layout.Keys.LegacyAttemptsPrefix)
-- A lane that is dropped (gone, drop) takes the records of its other heads
-- with it: they are named from records and legacy and the notification ids
-- the lane holds, which the caller cannot know to list in KEYS; they carry
-- the partition's hash tag, as KEYS do, so they live in the same slot.
-- Going on (a lane run): after a delivered or skipped head, when the lane
-- has another head and the caller still holds the lane's lease, the token
-- is not acknowledged but stays the caller's (re-claimed, so its idle time
-- restarts), the lease is renewed, and the next head is returned. This
-- saves a token's trip through the stream, and a Begin, per notification
-- of a busy lane. A worker that dies during a run leaves the token pending:
-- it is reclaimed like any other and the run resumes at the lane's head.
-- Acked token entries stay in the stream until the trimmer removes them.
-- Returns {0} for a stale token (nothing changed), {1} when applied,
-- {3, next head, config or false, event or false, version or false} when
-- applied and the run goes on, or {4, …} (the same) when this run step was
-- applied already.
-- isHead tells whether lane entry h is the head this attempt was for.
local function isHead(h)
  return h == attempted or string.sub(h, 1, #attempted + 1) == attempted .. '\n'
end
-- next answers a run's next head h: {status, h, config, event, version,
-- false, traceparent}, the event read from the stream entry h refers to
-- (unless h carries it).
local function nextHead(status, h)
  local ev, ver, tp = eventOf(KEYS[9], h)
  return {status, h, redis.call('HGET', KEYS[7], config), ev, ver, false, tp}
end
-- The attempt log is the record's (lib.lua): its last kept attempts;
-- the record counts them all. logAttempt logs the attempt alone, leaving
-- the record's status be; an expired record logs nothing.
local function logAttempt()
  local r = attemptRec ~= '' and recRead(KEYS[5], KEYS[6])
  if r then
    recLog(r, attemptRec, tonumber(kept))
    recWrite(KEYS[5], r, keep)
  end
end
-- The lease is taken off at once (GETDEL): a finish releases it, and a
-- run step sets it again, renewed.
local holder = redis.call('GETDEL', KEYS[8])
-- Another worker holds the lane: this caller's lease ran out while it was
-- paused between its POST and this finish, and the token was taken over.
-- The lane, its token and its record are that worker's now: give the
-- lease back (for a whole lease: at worst a dead holder's lane is
-- reclaimed a little later), log the attempt that happened, change
-- nothing else (acking the token or moving the lane here would end the
-- other worker's run or give the lane a second token).
if holder and holder ~= leaseValue then
  redis.call('SET', KEYS[8], holder, 'PX', leaseMs)
  logAttempt()
  return {0}
end
-- A run step sent twice (go-redis sends a pipeline again after a lost
-- reply): the caller still holds the lease, which only its own run steps
-- renew, but the lane's head is no longer the one this attempt was for:
-- the first execution popped it. Record nothing again, and answer as the
-- first execution did: {4, the lane's head, config}, go on with it.
-- Asking to go on, the caller reads the lane's first two heads at once:
-- the first tells a replay, the second whether the run can go on.
local want = goOn == '1' and holder == leaseValue
local second
if want and attempted ~= '' then
  local two = redis.call('LRANGE', KEYS[2], 0, 1)
  local head = two[1]
  if not head then
    return {0}
  end
  if not isHead(head) then
    redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, tokenID, 'JUSTID')
    redis.call('SET', KEYS[8], leaseValue, 'PX', leaseMs)
    return nextHead(4, head)
  end
  second = two[2]
end
-- A run needs a second head in the lane and the caller's lease: a lease
-- value is unique to one Begin, so while the caller holds it no other
-- worker has begun (or finished) this token, and the token is still pending.
-- (The first head is this attempt's, checked above: the pop below takes
-- it, and the second is the next.)
local run = want and (outcome == 'delivered' or outcome == 'skip') and second ~= nil
if not run then
  if redis.call('XACK', KEYS[1], 'workers', tokenID) == 0 then
    return {0}
  end
end
-- index names the zset of each status kept in one of its own.
local index = statusIndexes(11)
-- setStatus logs the attempt and moves the record to status st, due
-- next at ms due (a retry); an expired record is left alone.
local function setStatus(st, due)
  local r = recRead(KEYS[5], KEYS[6])
  if not r then
    return -- the record expired
  end
  if index[r.status] then
    redis.call('ZREM', index[r.status], nid)
  end
  if attemptRec ~= '' then
    recLog(r, attemptRec, tonumber(kept))
  end
  r.status, r.updated, r.next = st, now, due or '0'
  recWrite(KEYS[5], r, keep)
  if index[st] then
    redis.call('ZADD', index[st], now, nid)
  end
end
-- activate gives a lane with heads left a token. Having read the lane's
-- first two heads above, the caller knows without asking again.
local function activate()
  local more
  if want and attempted ~= '' then
    more = second ~= nil
  else
    more = redis.call('LLEN', KEYS[2]) > 0
  end
  if more then
    redis.call('XADD', KEYS[1], '*', 't', task, 'c', config, 'a', 1, 'f', 0)
  elseif unpark == '1' then
    redis.call('SREM', KEYS[10], KEYS[2])
  end
end
if outcome == 'wait' then
  redis.call('ZADD', KEYS[3], retryDue, cjson.encode({t = task, c = config, a = tonumber(nextAttempt), f = tonumber(firstMs), n = nid}))
  return {1}
end
if outcome == 'retry' then
  setStatus('failed', retryDue)
  -- n names the notification the retry is for: a token that delivered
  -- other heads in a run since (and was then reclaimed) is not its retry.
  redis.call('ZADD', KEYS[3], retryDue, cjson.encode({t = task, c = config, a = tonumber(nextAttempt), f = tonumber(firstMs), n = nid}))
  return {1}
end
local head = redis.call('LPOP', KEYS[2])
if head and (attempted == '' or not isHead(head)) then
  redis.call('LPUSH', KEYS[2], head) -- not the head this attempt was for: put it back
end
if outcome == 'delivered' then
  setStatus('delivered')
elseif outcome == 'dead' then
  setStatus('dead')
  redis.call('XADD', KEYS[4], '*', 'n', nid, 't', task, 'c', config, 'r', reason)
elseif outcome == 'skip' then
  setStatus('dropped')
else -- gone or drop: nothing more goes to this config
  setStatus(outcome == 'gone' and 'disabled' or 'dropped')
  if outcome == 'gone' then
    redis.call('HDEL', KEYS[7], config)
    redis.call('HDEL', KEYS[16], 'pc')
  end
  for _, h in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    local sp = string.find(h, ' ', 1, true)
    local other = string.sub(h, sp + 1, (string.find(h, '\n', sp, true) or #h + 1) - 1)
    local rec = records .. other
    local r = recRead(rec, legacy .. other)
    if r then
      if index[r.status] then
        redis.call('ZREM', index[r.status], other)
      end
      r.status, r.updated = 'dropped', now
      recWrite(rec, r, keep)
      redis.call('ZADD', index.dropped, now, other)
    end
  end
  redis.call('DEL', KEYS[2])
  if unpark == '1' then
    redis.call('SREM', KEYS[10], KEYS[2])
  end
  return {1}
end
if run then
  -- The token stays the caller's. Its idle time restarts when the caller
  -- asks (its last claim is a good part of the reclaim idle time ago),
  -- so that it is not reclaimed while the run goes on.
  if restartIdle == '1' then
    redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, tokenID, 'JUSTID')
  end
  redis.call('SET', KEYS[8], leaseValue, 'PX', leaseMs)
  return nextHead(3, second)
end
activate()
return {1}
