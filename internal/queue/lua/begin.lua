-- begin.lua: starts work on a lane token, and returns the lane's head.
-- A token handed out twice (a reclaim while the first copy still waited in
-- memory) must be worked on once: re-claiming it resets its idle time and
-- tells whether it is still pending, and the lane lease lets only one
-- worker at a time deliver a lane.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the lane's lease
-- KEYS[3] the lane                          KEYS[4] the task's push-config hash
-- ARGV[1] token stream id   ARGV[2] consumer   ARGV[3] lease ms   ARGV[4] config id
-- ARGV[5] the lease's value: unique to this Begin, so that only its holder
--   releases or renews it
-- ARGV[6] "1" for a fresh token (read by this consumer well within the
--   reclaim idle time: no one else can have claimed or finished it), which
--   is not re-claimed: that saves an XCLAIM per token
-- Returns {0} when the token was already finished, {2} when another worker
-- holds the lane, or {1, head or false, config or false, Redis TIME} (the
-- time tells how long the token waited, on the clock that stamped its id).
if ARGV[6] ~= '1' and #redis.call('XCLAIM', KEYS[1], 'workers', ARGV[2], 0, ARGV[1], 'JUSTID') == 0 then
  return {0}
end
if not redis.call('SET', KEYS[2], ARGV[5], 'NX', 'PX', ARGV[3]) and redis.call('GET', KEYS[2]) ~= ARGV[5] then
  return {2} -- (a lease of this very Begin, sent twice after a lost reply, is the caller's)
end
return {1, redis.call('LINDEX', KEYS[3], 0), redis.call('HGET', KEYS[4], ARGV[4]), redis.call('TIME')}
