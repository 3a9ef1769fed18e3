-- trim.lua: trims a partition's delivery stream of its acked tokens
-- (delivery.go: TrimAcked), unless the outbox is adopting the partition's
-- lanes (adopt.lua), which finds a lane by a token's stream entry, even one
-- acked since.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the partition's adopting mark
-- ARGV, by name (layout.Named binds it to the local of its name, as
-- trimArgs in delivery.go declares it):
--   minID  the oldest entry to keep
-- Returns the number of entries trimmed.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
return redis.call('XTRIM', KEYS[1], 'MINID', minID)
