-- outbox_finish.lua: what became of notifications the partition's outbox
-- owner worked on, several at once (outbox.go). Each op is one JSON object
-- in ARGV (named fields, below) with six keys of its own in KEYS.
--
-- KEYS[1] the partition's outbox owner lease   KEYS[2] the partition's retry zset
-- KEYS[3] the partition's dead-letter stream   KEYS[4] the partition's parked-lane set
-- KEYS[5..9] the partition's status zsets: pending, failed, dead, disabled, dropped
--   (layout.Keys.StatusIndexes)
-- KEYS[10] the partition's delivery stream (lane tokens)
-- then per op i (from 0): KEYS[11+6i] the delivery record, KEYS[12+6i] the lane,
--   KEYS[13+6i] the task's push-config hash, KEYS[14+6i] a previous relay's attempt
--   list of the record, KEYS[15+6i] the task's delivery index, KEYS[16+6i] the
--   task hash (a 410 drops its pc, the config ids commit.lua keeps)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- outboxFinishArgs in outbox.go declares them, the numbers through
-- tonumber), then a variable list of ops:
--   holder   the owner's lease value
--   kept     attempts kept per delivery
--   keep     delivery record retention in ms
--   firstOp  where in ARGV the ops start: they follow the arguments above,
--            one JSON object each, op i (from 0) at ARGV[firstOp + i]
--            with its keys at KEYS[11+6i ..]: {k = kind, n = notification id, t = task, c = config,
--   e = event id, o = outcome, a = attempt record (JSON) or "", w = now ms,
--   m = the notification's commit ms, d = due ms (park), f = first attempt
--   ms (park), r = reason (dead),
--   x = true: the op may repeat a previous owner's (see below),
--   i = true: the commit listed the notification already, in the task's
--   delivery index or by naming its config in its event's stream entry
--   (commit.lua)}, kind:
--   "done"   an attempt ended: delivered, dead, gone (410: the config is
--            disabled), drop (the config was deleted) or skip (the event expired)
--   "park"   an attempt failed and is to be retried: the notification goes
--            to its lane (a retry token due at d when the lane was empty)
--            and the lane is listed as parked
--   "append" a notification of a lane the owner knows parked goes behind
--            the lane's others, pending; a lane found empty is no longer parked
--   "spill"  a notification not yet attempted goes to its lane, pending, and
--            the lane is parked; a lane that was empty gets a token (the
--            owner hands a lane too busy to hold in memory to the lanes)
--   "hold"   a spill whose lane waits until d (the webhook's limits hold the
--            notification, not yet attempted): a lane that was empty gets a
--            retry due at d for its first attempt, instead of a token
-- A notification has no record until the owner reports it: the op makes
-- one (and lists it in the task's delivery index unless marked i; one
-- marked i expires a retention after its commit). Only
-- an op marked x reads the record first (a previous owner may have made
-- it, or this very report: its attempt is not logged twice), and an append
-- marked x leaves a lane that holds the notification already as it is. (A
-- delivered first attempt of an entry marked i is reported without this
-- script when it can be: outbox.go.)
-- Parking and appending order a lane, so only the owner may: while the
-- lease is another's they are refused. An attempt's outcome is a fact,
-- logged whoever reports it (a former owner's is added to the record the
-- new owner may have made).
-- Returns one number per op: 1 done, 0 (append) the lane was empty: the
-- caller delivers the notification itself, -1 refused (not the owner).
local owner = redis.call('GET', KEYS[1]) == holder
local index = statusIndexes(5)
local statusOf = {delivered = 'delivered', retry = 'failed', dead = 'dead', gone = 'disabled', drop = 'dropped', skip = 'dropped'}
-- record returns op's record, made (and indexed, unless the commit listed
-- it) when there is none. The task's delivery index lives at least the
-- retention after its newest record (as commit.lua keeps it): it is set to
-- 1.5 retentions once less than a retention is left, looked at once per
-- index and call.
local expiring = {}
local function record(op, b)
  local r = op.x and recRead(KEYS[b], KEYS[b + 3])
  if not r then
    r = recNew(op.t, op.c, op.e, op.m)
    if op.i then
      -- The commit listed it: in its event's stream entry, or in the index
      -- it keeps at least a retention after the commit. The record
      -- expires a retention after the commit (as one the lanes path makes
      -- at the commit), so that it is listed for as long as it lives,
      -- however late it is reported.
      r.at = string.format('%d', tonumber(op.m) + tonumber(keep))
      return r
    end
    local idx = KEYS[b + 4]
    redis.call('ZADD', idx, op.m, op.n)
    if not expiring[idx] then
      expiring[idx] = true
      if redis.call('PTTL', idx) < tonumber(keep) then
        redis.call('PEXPIRE', idx, math.floor(tonumber(keep) * 1.5))
      end
    end
  end
  return r
end
-- setStatus logs op's attempt (if any) and gives the record status st.
local function setStatus(op, b, r, st, nxt)
  if index[r.status] and not r.fresh then
    redis.call('ZREM', index[r.status], op.n)
  end
  if op.a ~= '' and not (op.x and string.find(r.log, op.a, 1, true)) then
    recLog(r, op.a, kept)
  end
  r.status, r.updated, r.next = st, op.w, nxt
  recWrite(KEYS[b], r, keep)
  if index[st] then
    redis.call('ZADD', index[st], op.w, op.n)
  end
end
-- pushed tells whether op's notification is in lane already: anywhere for
-- a replay, else among the lane's last 64 (this very call sent again:
-- go-redis sends a pipeline again after a lost reply).
local function pushed(op, lane)
  local entry = op.e .. ' ' .. op.n
  if op.x then
    return redis.call('LPOS', lane, entry) ~= false
  end
  return redis.call('LPOS', lane, entry, 'RANK', -1, 'MAXLEN', 64) ~= false
end
local out = {}
for i = firstOp, #ARGV do
  local op = cjson.decode(ARGV[i])
  local b = 11 + 6 * (i - firstOp)
  local lane = KEYS[b + 1]
  local res = 1
  if not owner then
    op.x = true -- another relay owns the partition now: its record stays, this attempt is added to it
  end
  if op.k ~= 'done' and not owner then
    res = -1
  elseif op.k == 'spill' or op.k == 'hold' then
    -- A spilled notification has no record but the one the spill makes (a
    -- record means this call ran before, and the lanes may have delivered
    -- it since), unless it is a replay (a redelivery's record): then only
    -- a pending one not in the lane yet is spilled.
    local seen = recRead(KEYS[b], KEYS[b + 3])
    if seen and (not op.x or seen.status ~= 'pending') then
      -- spilled or reported already
    elseif not pushed(op, lane) then
      if redis.call('RPUSH', lane, op.e .. ' ' .. op.n) == 1 then
        if op.k == 'hold' then
          redis.call('ZADD', KEYS[2], op.d, cjson.encode({t = op.t, c = op.c, a = 1, f = 0, n = op.n}))
        else
          redis.call('XADD', KEYS[10], '*', 't', op.t, 'c', op.c, 'a', 1, 'f', 0)
        end
      end
      local r = record(op, b)
      if r.fresh then
        setStatus(op, b, r, 'pending', '0')
      end
    end
    redis.call('SADD', KEYS[4], lane)
  elseif op.k == 'append' then
    local seen = op.x and recRead(KEYS[b], KEYS[b + 3])
    if seen and seen.status ~= 'pending' then
      -- a replay of a notification reported since (the lanes delivered it): nothing to do
    elseif redis.call('LLEN', lane) == 0 then
      redis.call('SREM', KEYS[4], lane)
      res = 0
    elseif not pushed(op, lane) then
      redis.call('RPUSH', lane, op.e .. ' ' .. op.n)
      local r = record(op, b)
      if r.fresh then
        setStatus(op, b, r, 'pending', '0')
      end
    end
  else
    local r = record(op, b)
    if op.k == 'park' then
      setStatus(op, b, r, 'failed', op.d)
      if not pushed(op, lane) and redis.call('RPUSH', lane, op.e .. ' ' .. op.n) == 1 then
        redis.call('ZADD', KEYS[2], op.d, cjson.encode({t = op.t, c = op.c, a = 2, f = tonumber(op.f), n = op.n}))
      end
      redis.call('SADD', KEYS[4], lane)
    else
      setStatus(op, b, r, statusOf[op.o], '0')
      if op.o == 'dead' then
        redis.call('XADD', KEYS[3], '*', 'n', op.n, 't', op.t, 'c', op.c, 'r', op.r)
      elseif op.o == 'gone' then
        redis.call('HDEL', KEYS[b + 2], op.c)
        redis.call('HDEL', KEYS[b + 5], 'pc')
      end
    end
  end
  out[#out + 1] = res
end
return out
