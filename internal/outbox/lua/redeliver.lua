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
-- ARGV[1] event id   ARGV[2] task id   ARGV[3] config id
-- ARGV[4] now ms   ARGV[5] notification id
-- Returns 1, or the error "NOTFOUND ..." when the record or its event expired.
local r = recRead(KEYS[3], KEYS[5])
local entries = redis.call('XRANGE', KEYS[4], ARGV[1], ARGV[1])
if not r or #entries == 0 then
  return redis.error_reply('NOTFOUND delivery or its event expired')
end
local index = statusIndexes(6)
if index[r.status] then
  redis.call('ZREM', index[r.status], ARGV[5])
end
r.status, r.updated, r.next = 'pending', ARGV[4], '0'
recWrite(KEYS[3], r, 0)
redis.call('ZADD', index.pending, ARGV[4], ARGV[5])
if KEYS[11] then
  redis.call('XADD', KEYS[11], '*', 't', ARGV[2], 'c', ARGV[3], 'e', ARGV[1], 'n', ARGV[5], 'r', 1)
elseif redis.call('RPUSH', KEYS[1], ARGV[1] .. ' ' .. ARGV[5]) == 1 then
  redis.call('XADD', KEYS[2], '*', 't', ARGV[2], 'c', ARGV[3], 'a', 1, 'f', 0)
end
return 1
