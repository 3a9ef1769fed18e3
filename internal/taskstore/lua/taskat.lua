-- taskat.lua: what it takes to know a task as it was after one version (the
-- body of a v0.3 or v0.1 notification, or a new checkpoint), reading no more
-- than needed. The stream starts at the task's creation, or right after its
-- checkpoint (the task after the last entry compaction cut), so every
-- version with an entry still stored can be rebuilt exactly.
--
-- KEYS[1] task hash   KEYS[2] task event stream   KEYS[3] task checkpoint hash
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- taskAtArgs in history.go declares them):
--   eventID  the stream id of an event of that version
--   ver      the version ("0": whatever the current one is)
-- Returns {1, snapshot} when the version is the task's current one (the
-- common case: the webhook keeps up) or the checkpoint's; {2, base or
-- false, event, event, …}: the events to fold, in order, onto the base
-- (without one, the first is the task's creation) up to and including every
-- event of the version; {0} when the task or the event is gone. A stream a
-- previous relay wrote carries the task after each delivered entry ('s'):
-- the last such entry is the base.
local cur = redis.call('HGET', KEYS[1], 'ver')
if not cur then
  return {0}
end
if cur == ver or ver == '0' then
  return {1, redis.call('HGET', KEYS[1], 'snap')}
end
if #redis.call('XRANGE', KEYS[2], eventID, eventID) == 0 then
  return {0}
end
local version = tonumber(ver)
local ck = redis.call('HMGET', KEYS[3], 'ver', 'snap')
if ck[1] and tonumber(ck[1]) == version then
  return {1, ck[2]}
end
-- The checkpoint is the task before the stream's first entry: a base for
-- later versions only.
local out, baseVer = {2, false}, 0
if ck[1] and tonumber(ck[1]) < version then
  out, baseVer = {2, ck[2]}, tonumber(ck[1])
end
-- add appends an entry's event, unless it is of a later version or
-- already in the base; an entry that carries its task becomes the base.
local function add(entry)
  local e, v, s
  local f = entry[2]
  for j = 1, #f, 2 do
    if f[j] == 'e' then e = f[j + 1] elseif f[j] == 'v' then v = tonumber(f[j + 1]) elseif f[j] == 's' then s = f[j + 1] end
  end
  if v > version then
    return false
  end
  if s then
    out, baseVer = {2, s}, v
  elseif v > baseVer then
    out[#out + 1] = e
  end
  return true
end
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', eventID)) do
  add(entry)
end
-- The version's later events (a commit may append several).
local after = eventID
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
