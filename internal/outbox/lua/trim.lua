-- trim.lua: trims a partition's delivery stream of its acked tokens
-- (delivery.go: TrimAcked), unless the outbox is adopting the partition's
-- lanes (adopt.lua), which finds a lane by a token's stream entry, even one
-- acked since.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the partition's adopting mark
-- ARGV, named (TrimAcked, in delivery.go):
--   ARGV[1] minID  the oldest entry to keep
-- Returns the number of entries trimmed.
local minID = ARGV[1]
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
return redis.call('XTRIM', KEYS[1], 'MINID', minID)
