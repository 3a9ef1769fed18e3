-- commit.lua: the one atomic write of a task change (DESIGN.md "The flow of one task").
-- The caller computed the new snapshot from version ARGV[1]; if another commit
-- got in first, nothing is written and the caller retries from the new version.
--
-- KEYS[1] task hash (fields: snap, ver, ck when the task has a checkpoint, and caller fields)
-- KEYS[2] task event stream
-- KEYS[3] partition task index (zset: score = update time ms, member = task id)
-- KEYS[4] task push-config hash (config id -> config)
-- ARGV[1] expected version ("0": the task must not exist yet)
-- ARGV[2] new snapshot
-- ARGV[3] index score (update time in ms)
-- ARGV[4] task id (index member)
-- ARGV[5] approximate MAXLEN of the event stream
-- ARGV[6] expire the task's keys after this many ms (0: keep)
-- ARGV[7] F, the number of extra task-hash field pairs that follow
-- ARGV[8 .. 7+2F] field, value pairs written to the task hash
-- ARGV[8+2F] C, the number of push-config pairs that follow
-- ARGV[9+2F .. 8+2F+2C] config id, config pairs written to the push hash
-- ARGV[9+2F+2C] D, a string of one flag per event: "1" when the event is
--   delivered to the task's push configs, "0" when not
-- ARGV[10+2F+2C] the partition key prefix ("relay:{p}:") for delivery keys
-- ARGV[11+2F+2C] the partition number, which heads notification ids
-- ARGV[12+2F+2C] delivery record retention in ms
-- ARGV[13+2F+2C] the commit's id: a commit sent again (a client retry after a
--   lost reply) finds its own id stored and gets its stream ids back
-- ARGV[14+2F+2C ..] the events, appended in order
-- Storage grows with what happened, not with copies of it: an event
-- stream entry holds the event and its task version ('e', 'v'), never a
-- task; lanes hold references to entries, never copies. The task after
-- any version is the snapshot when it is the current one, else the fold
-- of the stream from the task's creation (or from the checkpoint 'base',
-- below) up to that version.
-- Delivery keys (all in the task's partition, so in its hash slot):
--   <p>lane:<len(task)>:<task>:<config>  list of "eventId notificationId", oldest first (a
--                                        previous relay wrote "…\n<event>\n<snapshot>")
--   <p>deliveries                        stream of lane tokens (consumer group "workers")
--   <p>dl:<notificationId>               hash: the delivery record
--   <p>dl:task:<task>                    zset of the task's notification ids by creation ms
--   <p>dl:status:<status>                zset of notification ids by update ms, for every
--                                        status but delivered (listed per task)
-- Trimming: once the stream is a quarter (at least 16 entries) over ARGV[5]
-- (looked at every 8th version),
-- it is cut back to ARGV[5] entries (what SSE resumes from) but never past
-- an entry a lane still refers to, nor past what a fold needs: entries
-- after the checkpoint. The checkpoint (KEYS[5]: the snapshot at version
-- 'ver', whose last stream entry is 'id') moves to this commit's
-- snapshot when no lane waits on an older entry; without a checkpoint the
-- stream is not trimmed (the fold starts at the creation).
-- Returns the event stream ids, or the error "CONFLICT <current version>".
local stored = redis.call('HMGET', KEYS[1], 'ver', 'ck')
local cur = tonumber(stored[1] or '0')
local checkpointed = stored[2] ~= false
if cur ~= tonumber(ARGV[1]) then
  local nf0 = tonumber(ARGV[7])
  local cid = ARGV[8 + 2 * nf0 + 1 + 2 * tonumber(ARGV[8 + 2 * nf0]) + 4]
  if redis.call('HGET', KEYS[1], 'cid') == cid then
    return cjson.decode(redis.call('HGET', KEYS[1], 'cids')) -- this very commit, applied already
  end
  return redis.error_reply('CONFLICT ' .. cur)
end
local ver = cur + 1
-- The task hash is written once, at the end: snapshot, version, the
-- caller's fields and the commit id.
local fields = {'snap', ARGV[2], 'ver', ver}
local i = 8
local nf = tonumber(ARGV[7])
for _ = 1, nf do
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  i = i + 2
end
local nc = tonumber(ARGV[i])
i = i + 1
for _ = 1, nc do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  i = i + 2
end
local flags = ARGV[i]
local pfx = ARGV[i + 1]
local part = ARGV[i + 2]
local keep = tonumber(ARGV[i + 3])
local commitID = ARGV[i + 4]
i = i + 5
local task = ARGV[4]
local now = ARGV[3]
local configs = {}
if string.find(flags, '1', 1, true) then
  configs = redis.call('HKEYS', KEYS[4])
end
local ids = {}
local n = 0
while i <= #ARGV do
  n = n + 1
  local deliver = string.sub(flags, n, n) == '1' and #configs > 0
  local id = redis.call('XADD', KEYS[2], '*', 'e', ARGV[i], 'v', ver)
  ids[#ids + 1] = id
  if deliver then
    for _, cfg in ipairs(configs) do
      local nid = part .. '.' .. string.sub(redis.sha1hex(task .. '|' .. id .. '|' .. cfg), 1, 32)
      local lane = pfx .. 'lane:' .. #task .. ':' .. task .. ':' .. cfg
      local dl = pfx .. 'dl:' .. nid
      redis.call('HSET', dl, 'task', task, 'config', cfg, 'event', id, 'status', 'pending',
        'created', now, 'updated', now, 'attempts', 0)
      redis.call('PEXPIRE', dl, keep)
      redis.call('ZADD', pfx .. 'dl:task:' .. task, now, nid)
      redis.call('PEXPIRE', pfx .. 'dl:task:' .. task, keep)
      redis.call('ZADD', pfx .. 'dl:status:pending', now, nid)
      if redis.call('RPUSH', lane, id .. ' ' .. nid) == 1 then
        redis.call('XADD', pfx .. 'deliveries', '*', 't', task, 'c', cfg, 'a', 1, 'f', 0)
      end
    end
  end
  i = i + 1
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
-- Stream ids order as (ms, seq) pairs.
local function idParts(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local function before(a, b)
  local am, as = idParts(a)
  local bm, bs = idParts(b)
  return am < bm or (am == bm and as < bs)
end
local maxLen = tonumber(ARGV[5])
local size = 0
if #ids > 0 and ver % 8 == 0 then -- (looked at every 8 versions: the slack is wider)
  size = redis.call('XLEN', KEYS[2])
end
if size > maxLen + math.max(16, math.floor(maxLen / 4)) then
  -- The oldest entry a lane refers to (a redelivered one may stand
  -- behind newer ones).
  local oldest
  for _, cfg in ipairs(redis.call('HKEYS', KEYS[4])) do
    for _, head in ipairs(redis.call('LRANGE', pfx .. 'lane:' .. #task .. ':' .. task .. ':' .. cfg, 0, -1)) do
      local eid = string.sub(head, 1, string.find(head, ' ', 1, true) - 1)
      if not oldest or before(eid, oldest) then
        oldest = eid
      end
    end
  end
  local bid
  if not oldest or not before(oldest, ids[1]) then
    bid = ids[#ids]
    redis.call('HSET', KEYS[5], 'snap', ARGV[2], 'ver', ver, 'id', bid)
    if not checkpointed then
      fields[#fields + 1] = 'ck' -- the task has a checkpoint, to expire with it
      fields[#fields + 1] = '1'
      checkpointed = true
    end
  else
    bid = redis.call('HGET', KEYS[5], 'id')
  end
  if bid then
    -- Entries up to bid are in the checkpoint; keep the newest maxLen.
    local bm, bs = idParts(bid)
    local cut = bm .. '-' .. (bs + 1)
    local window = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', size - maxLen + 1)
    local first = window[#window][1]
    if before(first, cut) then
      cut = first
    end
    if oldest and before(oldest, cut) then
      cut = oldest
    end
    redis.call('XTRIM', KEYS[2], 'MINID', cut)
  end
end
fields[#fields + 1] = 'cid'
fields[#fields + 1] = commitID
fields[#fields + 1] = 'cids'
fields[#fields + 1] = cjson.encode(ids)
redis.call('HSET', KEYS[1], unpack(fields))
local ttl = tonumber(ARGV[6])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
  if checkpointed then
    redis.call('PEXPIRE', KEYS[5], ttl)
  end
end
return ids
