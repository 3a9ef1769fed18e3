-- mover.lua: moves retries that are due back onto the delivery stream.
--
-- KEYS[1] the partition's retry zset   KEYS[2] the partition's delivery stream
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- moveArgs in delivery.go declares them):
--   now    ms
--   limit  the most to move in one call
-- Returns {how many were moved, the due ms of the earliest retry left or false}.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
for _, m in ipairs(due) do
  local t = cjson.decode(m)
  redis.call('XADD', KEYS[2], '*', 't', t.t, 'c', t.c, 'a', t.a, 'f', t.f, 'n', t.n or '')
  redis.call('ZREM', KEYS[1], m)
end
local left = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {#due, left[2] or false}
