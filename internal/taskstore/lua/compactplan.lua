-- compactplan.lua: what a compaction of a task's event stream would cut.
-- The stream keeps its newest keepLen entries (what SSE resumes from) and
-- every entry a lane still refers to; the cut falls on a version boundary,
-- so that the checkpoint is the task after a whole version. It reads no
-- entry a lane holds back, so a stream a lagging webhook keeps long costs
-- little to look at again.
--
-- KEYS[1] task event stream   KEYS[2] task push-config hash   KEYS[3] task checkpoint hash
-- KEYS[4] the partition's compaction zset   KEYS[5] the partition's outbox
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- compactPlanArgs in compact.go declares them):
--   task        the task id
--   lanes       the task's lane prefix (layout.Keys.LanePrefix)
--   keepLen     entries to keep
--   compactLen  the length over which a stream is compacted
--   retryAt     when to look again (ms) if a lane keeps the stream from
--               being cut
-- Returns {0} when there is nothing to cut (the task leaves the zset, or
-- waits there until retryAt while a lane holds the entries back), or
-- {1, last entry to cut, its version, first entry to keep, the checkpoint's
-- id or ""}.
-- The task's lanes (a list per push config, read with HKEYS) are named
-- from lanes and the config ids: they cannot be in KEYS, as the configs
-- are known only once read, but they share the hash tag of the task's
-- partition, so they live in the same slot as KEYS.
local size = redis.call('XLEN', KEYS[1])
if size <= compactLen then
  redis.call('ZREM', KEYS[4], task)
  return {0}
end
-- The oldest entry a lane refers to (a redelivered one may stand behind
-- newer ones): the cut stays before it.
local oldest
for _, cfg in ipairs(redis.call('HKEYS', KEYS[2])) do
  for _, head in ipairs(redis.call('LRANGE', lanes .. cfg, 0, -1)) do
    if not string.find(head, '\n', 1, true) then -- (a previous relay's head carries its copy)
      local eid = entryOf(head)
      if not oldest or before(eid, oldest) then
        oldest = eid
      end
    end
  end
end
-- Nor before what a notification waiting in the outbox may refer to.
local floor = outboxFloor(KEYS[5], task)
if floor and (not oldest or before(floor, oldest)) then
  oldest = floor
end
local function version(entry)
  local f = entry[2]
  for j = 1, #f, 2 do
    if f[j] == 'v' then
      return f[j + 1]
    end
  end
end
-- The entries that may be cut: at most those over the length, and none
-- from the oldest a lane refers to on (read no further than that).
local cand = redis.call('XRANGE', KEYS[1], '-', oldest and ('(' .. oldest) or '+', 'COUNT', size - keepLen)
local cut = #cand
local kept
if cut > 0 then
  kept = redis.call('XRANGE', KEYS[1], '(' .. cand[cut][1], '+', 'COUNT', 1)[1]
end
-- Not inside a version.
while cut > 0 and kept and version(cand[cut]) == version(kept) do
  kept = cand[cut]
  cut = cut - 1
end
if cut == 0 or not kept then
  redis.call('ZADD', KEYS[4], 'XX', retryAt, task)
  return {0}
end
local last = cand[cut]
return {1, last[1], version(last), kept[1], redis.call('HGET', KEYS[3], 'id') or ''}
