-- commit.lua: the one atomic write of a task change (DESIGN.md "The flow of one task").
-- The caller computed the new snapshot from version ARGV[1]; if another commit
-- got in first, nothing is written and the caller retries from the new version.
--
-- KEYS[1] task hash (fields: snap, ver, ck when the task has a checkpoint, and caller fields)
-- KEYS[2] task event stream
-- KEYS[3] partition task index (zset: score = update time ms, member = task id)
-- KEYS[4] task push-config hash (config id -> config)
-- KEYS[5] the task's checkpoint   KEYS[6] the partition's compaction zset
-- KEYS[7] the partition's outbox stream, given only when notifications go
--   through the outbox (RELAY_DELIVERY_PATH=outbox, outbox.go) instead of
--   lanes: each gets an outbox entry, and its record is made when the
--   outbox's owner reports it
-- KEYS[8] the task's delivery index, given with KEYS[7]: the commit lists
--   each notification in it (under its outbox entry's ms, the record's
--   creation time), and keeps it from expiring, so that the owner's report
--   of a delivered first attempt is the record alone (outbox.go); the entry
--   says so with its field i
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
-- of the stream from its first entry (the task's creation, or after the
-- checkpoint, below) up to that version.
-- Delivery keys (all in the task's partition, so in its hash slot):
--   <p>lane:<len(task)>:<task>:<config>  list of "eventId notificationId", oldest first (a
--                                        previous relay wrote "…\n<event>\n<snapshot>")
--   <p>deliveries                        stream of lane tokens (consumer group "workers")
--   <p>dl:<notificationId>               the delivery record (lib.lua: recWrite)
--   <p>dl:task:<task>                    zset of the task's notification ids by creation ms
--   <p>dl:status:<status>                zset of notification ids by update ms, for every
--                                        status but delivered (listed per task)
-- Trimming is not done here: a stream a quarter over ARGV[5] entries is
-- listed in KEYS[6], and the compactor (compact.lua) cuts it back, folding
-- what it cuts into the task's checkpoint (KEYS[5]: the task as it was just
-- before the stream's first entry), so that every entry still stored can
-- be rendered exactly.
-- Returns the event stream ids, or the error "CONFLICT <current version>".
local stored = redis.call('HMGET', KEYS[1], 'ver', 'ck', 'dx')
local cur = tonumber(stored[1] or '0')
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
-- (The index's renewal, below, first cuts its members older than 1.5
-- retentions: their records have expired, with half a retention to spare
-- for clocks that differ, as this relay's and Redis's may: a record
-- expires by Redis's clock, a retention after its commit.)
local index = KEYS[8] or (pfx .. 'dl:task:' .. task)
local renew = tonumber(stored[3] or '0') < tonumber(now) + keep
if renew and cur > 0 and #configs > 0 then
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. string.format('%d', tonumber(now) - math.floor(keep * 1.5)))
end
local ids = {}
local n = 0
local made = false
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
      if KEYS[7] then
        local oid = redis.call('XADD', KEYS[7], '*', 't', task, 'c', cfg, 'e', id, 'n', nid, 'i', 1)
        redis.call('ZADD', index, string.sub(oid, 1, string.find(oid, '-', 1, true) - 1), nid)
        made = true
      else
        recWrite(dl, recNew(task, cfg, id, now), keep)
        redis.call('ZADD', index, now, nid)
        made = true
        redis.call('ZADD', pfx .. 'dl:status:pending', now, nid)
        if redis.call('RPUSH', lane, id .. ' ' .. nid) == 1 then
          redis.call('XADD', pfx .. 'deliveries', '*', 't', task, 'c', cfg, 'a', 1, 'f', 0)
        end
      end
    end
  end
  i = i + 1
end
-- The task's delivery index lives at least the retention after its newest
-- notification: set to 1.5 retentions and renewed (its deadline kept in
-- the task hash, 'dx') once less than a retention is left, not at every
-- commit. Its members past the retention point at expired records, which
-- listings skip; they are cut at each renewal, so that the index of a task
-- that commits for ever holds no more than about two retentions of members.
if made and renew then
  redis.call('PEXPIRE', index, math.floor(keep * 1.5))
  fields[#fields + 1] = 'dx'
  fields[#fields + 1] = string.format('%d', tonumber(now) + math.floor(keep * 1.5))
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
-- A stream a quarter (at least 16 entries) over its length is listed for
-- compaction (looked at every 8th version).
local maxLen = tonumber(ARGV[5])
if #ids > 0 and ver % 8 == 0 and redis.call('XLEN', KEYS[2]) > maxLen + math.max(16, math.floor(maxLen / 4)) then
  redis.call('ZADD', KEYS[6], 'NX', now, task)
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
  if stored[2] then
    redis.call('PEXPIRE', KEYS[5], ttl)
  end
end
return ids
