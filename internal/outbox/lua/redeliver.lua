-- redeliver.lua: queues a stored notification again (an operator's redelivery
-- or redrive of a dead letter). It goes to the end of its lane, keeps its id,
-- and the delivery record goes back to pending. The lane refers to the
-- event's stream entry, which must still be there.
--
-- KEYS[1] the lane   KEYS[2] the partition's delivery stream   KEYS[3] the delivery record
-- KEYS[4] the task's event stream   KEYS[5] a previous relay's attempt list of the record
-- KEYS[6..10] the partition's status indexes: pending, failed, dead, disabled,
--   dropped (layout.Keys.StatusIndexes; the record leaves the one of its status)
-- KEYS[11] the partition's outbox, given on the outbox path: the notification
--   goes to the end of the outbox instead (marked r: a redelivery, whose
--   record exists), and its owner queues it behind the lane's others
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- redeliverArgs in records.go declares them):
--   event   the event's stream id
--   task    the task id
--   config  the config id
--   now     ms
--   nid     the notification id
-- Returns 1, or the error "NOTFOUND ..." when the record or its event expired.
local r = recRead(KEYS[3], KEYS[5])
local entries = redis.call('XRANGE', KEYS[4], event, event)
if not r or #entries == 0 then
  return redis.error_reply('NOTFOUND delivery or its event expired')
end
local index = statusIndexes(6)
if index[r.status] then
  redis.call('ZREM', index[r.status], nid)
end
r.status, r.updated, r.next = 'pending', now, '0'
recWrite(KEYS[3], r, 0)
redis.call('ZADD', index.pending, now, nid)
if KEYS[11] then
  redis.call('XADD', KEYS[11], '*', 't', task, 'c', config, 'e', event, 'n', nid, 'r', 1)
elseif redis.call('RPUSH', KEYS[1], event .. ' ' .. nid) == 1 then
  redis.call('XADD', KEYS[2], '*', 't', task, 'c', config, 'a', 1, 'f', 0)
end
return 1
