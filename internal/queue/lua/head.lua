-- head.lua: what a worker needs to deliver the head of a lane, in one round trip.
--
-- KEYS[1] the lane (list of "eventId notificationId")
-- KEYS[2] the task's push-config hash
-- KEYS[3] the task's event stream
-- ARGV[1] the config id
-- Returns {head, config, event, snapshot}; head is false when the lane is
-- empty, config false when the config was deleted, event false when the
-- event is no longer stored.
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  return {false, false, false, false}
end
local cfg = redis.call('HGET', KEYS[2], ARGV[1])
local sp = string.find(head, ' ', 1, true)
local entries = redis.call('XRANGE', KEYS[3], string.sub(head, 1, sp - 1), string.sub(head, 1, sp - 1))
local ev, snap = false, false
if #entries == 1 then
  local f = entries[1][2]
  for j = 1, #f, 2 do
    if f[j] == 'e' then ev = f[j + 1] elseif f[j] == 's' then snap = f[j + 1] end
  end
end
return {head, cfg, ev, snap}
