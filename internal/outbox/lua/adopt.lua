-- adopt.lua: one step of listing, once per partition, the lanes that hold
-- notifications from the lanes path as parked (outbox.go: AdoptLanes). A
-- lane with work has a token in the delivery stream or in the retry set.
-- The steps read a bounded number of tokens each, so that a large backlog
-- does not hold Redis for long: first the retry set (ZSCAN: a token there
-- for the whole scan is seen), then the delivery stream from its start to
-- its end (by id). While the steps run, the partition is marked adopting
-- and its stream is not trimmed (delivery.go, TrimAcked), so every token
-- that moves meanwhile is seen: one moved from the retry set to the stream
-- is appended to it, and one moved from the stream to the retry set leaves
-- its stream entry behind.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the partition's retry zset
-- KEYS[3] the partition's parked-lane set    KEYS[4] the partition's adoption mark
-- KEYS[5] the partition's adopting mark (while the steps run)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- adoptArgs in outbox.go declares them):
--   lanes   the partition's lane prefix (layout.Keys.Lanes)
--   phase   "retries" or "stream"
--   cursor  where the step goes on: a ZSCAN cursor ("0" to start), or
--           the last stream id read ("-" to start)
--   count   tokens to read in this step, about
--   markMs  how long the adopting mark lives without a next step
-- The lanes are named (lib.lua: laneOf) from lanes and the task and
-- config ids of the tokens read: the caller cannot know them to list them
-- in KEYS; they carry the partition's hash tag, as KEYS do, so they live in
-- the same slot.
-- Returns {phase, cursor, lanes listed…}: the next step's phase and cursor,
-- or phase "done" (also at once when the partition was adopted).
if redis.call('EXISTS', KEYS[4]) == 1 then
  return {'done', ''}
end
redis.call('SET', KEYS[5], '1', 'PX', markMs)
local out, seen = {'', ''}, {}
local function add(t, c)
  if t and c then
    local lane = laneOf(lanes, t, c)
    if not seen[lane] then
      seen[lane] = true
      out[#out + 1] = lane
      redis.call('SADD', KEYS[3], lane)
    end
  end
end
if phase == 'retries' then
  local res = redis.call('ZSCAN', KEYS[2], cursor, 'COUNT', count)
  local members = res[2]
  for j = 1, #members, 2 do
    local ok, r = pcall(cjson.decode, members[j])
    if ok and type(r) == 'table' then
      add(r.t, r.c)
    end
  end
  if res[1] == '0' then
    out[1], out[2] = 'stream', '-'
  else
    out[1], out[2] = 'retries', res[1]
  end
  return out
end
local start = cursor == '-' and '-' or '(' .. cursor
local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', count)
for _, e in ipairs(entries) do
  local f, t, c = e[2], nil, nil
  for j = 1, #f, 2 do
    if f[j] == 't' then t = f[j + 1] elseif f[j] == 'c' then c = f[j + 1] end
  end
  add(t, c)
end
if #entries < count then
  redis.call('SET', KEYS[4], '1')
  redis.call('DEL', KEYS[5])
  out[1], out[2] = 'done', ''
else
  out[1], out[2] = 'stream', entries[#entries][1]
end
return out
