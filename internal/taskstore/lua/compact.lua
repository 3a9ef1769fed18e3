-- compact.lua: cuts a task's event stream and stores, as its checkpoint,
-- the task as it was after the last entry cut (folded by the caller from
-- what TaskAt gave for that version), atomically, if nothing changed
-- since the plan (compactplan.lua): the checkpoint is the one the fold
-- started from, the last entry is still there, and no lane refers to an
-- entry before the cut.
--
-- KEYS[1] task hash   KEYS[2] task event stream   KEYS[3] task push-config hash
-- KEYS[4] task checkpoint hash   KEYS[5] the partition's compaction zset
-- KEYS[6] the partition's outbox (what waits there holds the cut back too)
-- KEYS[7] the task's delivery index: the notifications the entries cut
--   name (field d, layout/event.go) are listed there from now on (below)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- compactArgs in compact.go declares them):
--   task        the task id
--   lanes       the task's lane prefix (layout.Keys.LanePrefix)
--   last        the last entry cut
--   version     its version
--   first       the first entry kept
--   from        the checkpoint id the fold started from ("" for none)
--   checkpoint  the new checkpoint ("": none could be folded, as in a
--               stream a previous relay cut: it is trimmed all the same)
--   compactLen  the compaction length
--   records     the partition's record prefix (layout.Keys.RecordPrefix)
--   part        the partition number, which heads notification ids
--   now         ms, by the caller's clock
--   keep        delivery record retention in ms
-- The task's lanes (a list per push config, read with HKEYS) are named
-- from lanes and the config ids, and the records of the notifications the
-- entries cut name from records and the notification ids (as commit.lua
-- computes them): they cannot be in KEYS, as they are known only once
-- read, but they share the hash tag of the task's partition, so they live
-- in the same slot as KEYS.
-- Returns 1 when cut, 0 when something changed (plan again).
if (redis.call('HGET', KEYS[4], 'id') or '') ~= from or #redis.call('XRANGE', KEYS[2], last, last) == 0 then
  return 0
end
for _, cfg in ipairs(redis.call('HKEYS', KEYS[3])) do
  for _, head in ipairs(redis.call('LRANGE', lanes .. cfg, 0, -1)) do
    if not string.find(head, '\n', 1, true) and before(entryOf(head), first) then
      return 0
    end
  end
end
local floor = outboxFloor(KEYS[6], task)
if floor and not before(last, floor) then
  return 0 -- the cut reaches what a notification in the outbox may refer to
end
if checkpoint ~= '' then
  redis.call('HSET', KEYS[4], 'snap', checkpoint, 'ver', version, 'id', last)
  redis.call('HSET', KEYS[1], 'ck', '1') -- commit.lua expires the checkpoint with the task
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[4], ttl)
  end
elseif from ~= '' then
  return 0 -- (a stream with a checkpoint always folds)
end
-- A task's deliveries are listed from the configs its stream's entries
-- name (commit.lua): the notifications of the entries cut whose records
-- still live are listed in the task's delivery index instead, under their
-- entry's ms (as the stream listed them), and the index lives as long as
-- the longest-lived of those records. Members older than 1.5 retentions
-- whose records have expired are cut (up to 128 at a time), so that the
-- index of a task compacted for ever does not grow for ever.
local longest = 0
for _, e in ipairs(redis.call('XRANGE', KEYS[2], '-', '(' .. first)) do
  local d = entryConfigs(e)
  if d then
    local ms = string.sub(e[1], 1, string.find(e[1], '-', 1, true) - 1)
    for cfg in string.gmatch(d .. '\n', '([^\n]*)\n') do
      local nid = part .. '.' .. string.sub(redis.sha1hex(task .. '|' .. e[1] .. '|' .. cfg), 1, 32)
      local ttl = redis.call('PTTL', records .. nid)
      if ttl ~= -2 then
        redis.call('ZADD', KEYS[7], 'NX', ms, nid)
        longest = math.max(longest, ttl < 0 and keep or ttl)
      end
    end
  end
end
if longest > 0 then
  local left = redis.call('PTTL', KEYS[7])
  if left < longest then
    redis.call('PEXPIRE', KEYS[7], longest)
  end
  local cutoff = string.format('%d', tonumber(now) - math.floor(keep * 1.5))
  for _, nid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', '(' .. cutoff, 'LIMIT', 0, 128)) do
    if redis.call('EXISTS', records .. nid) == 0 then
      redis.call('ZREM', KEYS[7], nid)
    end
  end
end
redis.call('XTRIM', KEYS[2], 'MINID', first)
if redis.call('XLEN', KEYS[2]) <= compactLen then
  redis.call('ZREM', KEYS[5], task)
end
return 1
