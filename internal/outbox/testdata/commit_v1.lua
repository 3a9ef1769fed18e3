-- commit.lua: the one atomic write of a task change (DESIGN.md "The flow of one task").
-- The caller computed the new snapshot from version ARGV[1]; if another commit
-- got in first, nothing is written and the caller retries from the new version.
--
-- KEYS[1] task hash (fields: snap, ver, and caller fields)
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
-- Delivery keys (all in the task's partition, so in its hash slot):
--   <p>lane:<len(task)>:<task>:<config>  list of "eventId notificationId\n<event>\n<snapshot>",
--                                        oldest first (JSON never holds a raw newline)
--   <p>deliveries                        stream of lane tokens (consumer group "workers")
--   <p>dl:<notificationId>               hash: the delivery record
--   <p>dl:task:<task>                    zset of the task's notification ids by creation ms
--   <p>dl:status:<status>                zset of notification ids by update ms, for every
--                                        status but delivered (listed per task)
-- Returns the event stream ids, or the error "CONFLICT <current version>".
local cur = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
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
  local id
  if deliver then
    id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'e', ARGV[i], 'v', ver, 's', ARGV[2])
  else
    id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'e', ARGV[i], 'v', ver)
  end
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
      if redis.call('RPUSH', lane, id .. ' ' .. nid .. '\n' .. ARGV[i] .. '\n' .. ARGV[2]) == 1 then
        redis.call('XADD', pfx .. 'deliveries', '*', 't', task, 'c', cfg, 'a', 1, 'f', 0)
      end
    end
  end
  i = i + 1
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
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
end
return ids
