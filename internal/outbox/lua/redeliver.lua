-- redeliver.lua: queues a stored notification again (an operator's redelivery
-- or redrive of a dead letter). It goes to the end of its lane, keeps its id,
-- and the delivery record goes back to pending. The lane refers to the
-- event's stream entry, which must still be there.
--
-- KEYS[1] the lane   KEYS[2] the partition's delivery stream   KEYS[3] the delivery record
-- KEYS[4] the task's event stream   KEYS[5] a previous relay's attempt list of the record
-- KEYS[6] the partition's outbox, given on the outbox path: the notification
--   goes to the end of the outbox instead (marked r: a redelivery, whose
--   record exists), and its owner queues it behind the lane's others
-- ARGV[1] event id   ARGV[2] task id   ARGV[3] config id
-- ARGV[4] now ms   ARGV[5] the partition key prefix   ARGV[6] notification id
-- Returns 1, or the error "NOTFOUND ..." when the record or its event expired.
local r = recRead(KEYS[3], KEYS[5])
local entries = redis.call('XRANGE', KEYS[4], ARGV[1], ARGV[1])
if not r or #entries == 0 then
  return redis.error_reply('NOTFOUND delivery or its event expired')
end
redis.call('ZREM', ARGV[5] .. 'dl:status:' .. r.status, ARGV[6])
r.status, r.updated, r.next = 'pending', ARGV[4], '0'
recWrite(KEYS[3], r, 0)
redis.call('ZADD', ARGV[5] .. 'dl:status:pending', ARGV[4], ARGV[6])
if KEYS[6] then
  redis.call('XADD', KEYS[6], '*', 't', ARGV[2], 'c', ARGV[3], 'e', ARGV[1], 'n', ARGV[6], 'r', 1)
elseif redis.call('RPUSH', KEYS[1], ARGV[1] .. ' ' .. ARGV[6]) == 1 then
  redis.call('XADD', KEYS[2], '*', 't', ARGV[2], 'c', ARGV[3], 'a', 1, 'f', 0)
end
return 1
