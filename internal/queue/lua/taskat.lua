-- taskat.lua: what it takes to know a task as it was after one version (the
-- body of a v0.3 or v0.1 notification), reading no more than needed.
--
-- KEYS[1] task hash   KEYS[2] task event stream   KEYS[3] task checkpoint hash
-- ARGV[1] the stream id of an event of that version   ARGV[2] the version
--   ("0": whatever the current one is)
-- Returns {1, snapshot} when the version is the task's current one (the
-- common case: the webhook keeps up) or the checkpoint's, {1, snapshot} from
-- a stream entry that a previous relay wrote with its snapshot ('s'), or {2, checkpoint
-- snapshot or false, event, event, …}: the events to fold, in order, onto
-- the checkpoint (or, without one, from the task's creation event) up to
-- and including every event of the version. {0} when the task is gone.
local cur = redis.call('HGET', KEYS[1], 'ver')
if not cur then
  return {0}
end
if cur == ARGV[2] or ARGV[2] == '0' then
  return {1, redis.call('HGET', KEYS[1], 'snap')}
end
local target = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])[1]
if target then
  local f = target[2]
  for j = 1, #f, 2 do
    if f[j] == 's' then
      return {1, f[j + 1]}
    end
  end
end
local version = tonumber(ARGV[2])
local out = {2, false}
local from = '-'
local base = redis.call('HMGET', KEYS[3], 'ver', 'id')
if base[1] and tonumber(base[1]) <= version then
  out[2] = redis.call('HGET', KEYS[3], 'snap')
  if tonumber(base[1]) == version then
    return {1, out[2]}
  end
  from = '(' .. base[2]
end
-- add appends an entry's event unless it is of a later version.
local function add(entry)
  local e, v
  local f = entry[2]
  for j = 1, #f, 2 do
    if f[j] == 'e' then e = f[j + 1] elseif f[j] == 'v' then v = f[j + 1] end
  end
  if tonumber(v) > version then
    return false
  end
  out[#out + 1] = e
  return true
end
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], from, ARGV[1])) do
  add(entry)
end
-- The version's later events (a commit may append several).
local after = ARGV[1]
while true do
  local more = redis.call('XRANGE', KEYS[2], '(' .. after, '+', 'COUNT', 8)
  for _, entry in ipairs(more) do
    if not add(entry) then
      return out
    end
    after = entry[1]
  end
  if #more < 8 then
    return out
  end
end
