-- begin.lua: starts work on a lane token, and returns the lane's head.
-- A token handed out twice (a reclaim while the first copy still waited in
-- memory) must be worked on once: re-claiming it resets its idle time and
-- tells whether it is still pending, and the lane lease lets only one
-- worker at a time deliver a lane.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the lane's lease
-- KEYS[3] the lane                          KEYS[4] the task's push-config hash
-- KEYS[5] the task's event stream
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- beginArgs in delivery.go declares them):
--   tokenID     the token's stream id
--   consumer    the caller's consumer name
--   leaseMs     lease ms
--   config      the config id
--   leaseValue  the lease's value: unique to this Begin, so that only
--               its holder releases or renews it
--   fresh       "1" for a fresh token: one this consumer read from the
--     stream itself, a short while ago. If the token is still pending, this
--     consumer's, and was never delivered to anyone else (delivery count 1),
--     no other worker can have begun or finished it: it is not re-claimed
--     (XPENDING reads that, for less than an XCLAIM costs). Otherwise, or
--     for any other token, it is re-claimed as above. The check is Redis's,
--     so it holds whatever the caller's clock and however late the script
--     runs.
-- Returns {0} when the token was already finished, {2} when another worker
-- holds the lane, or {1, head or false, config or false, event or false,
-- its task version or false, Redis TIME, the event's traceparent or false}
-- (the time tells how long the token waited, on the clock that stamped its id). The event is read from the
-- stream entry the head refers to; a head a previous relay wrote carries it.
local claim = true
if fresh == '1' then
  local p = redis.call('XPENDING', KEYS[1], 'workers', tokenID, tokenID, 1)
  if #p == 0 then
    return {0}
  end
  claim = p[1][2] ~= consumer or p[1][4] ~= 1
end
if claim and #redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, tokenID, 'JUSTID') == 0 then
  return {0}
end
if not redis.call('SET', KEYS[2], leaseValue, 'NX', 'PX', leaseMs) and redis.call('GET', KEYS[2]) ~= leaseValue then
  return {2} -- (a lease of this very Begin, sent twice after a lost reply, is the caller's)
end
local head = redis.call('LINDEX', KEYS[3], 0)
local ev, ver, tp = eventOf(KEYS[5], head)
return {1, head, redis.call('HGET', KEYS[4], config), ev, ver, redis.call('TIME'), tp}
