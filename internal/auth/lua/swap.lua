-- swap.lua: makes a new signing key current, if the current key is still the
-- one the caller saw (compare and swap), so that instances starting or
-- rotating at the same moment agree on one key: the first wins, the others
-- load the winner's key.
--
-- KEYS[1] key hash (kid -> entry JSON {alg, pem, created, retireAt})
-- KEYS[2] current kid (string)
-- ARGV[1] the current kid the caller saw ("": there must be none)
-- ARGV[2] new kid
-- ARGV[3] new entry (JSON)
-- ARGV[4] the entry of ARGV[1] with its retireAt set ("": leave it alone)
-- Returns the current kid after the call: ARGV[2] when the swap happened,
-- otherwise the kid that is current ("" if none), and nothing is written.
local cur = redis.call('GET', KEYS[2]) or ''
if cur ~= ARGV[1] then
  return cur
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
if ARGV[1] ~= '' and ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
end
redis.call('SET', KEYS[2], ARGV[2])
return ARGV[2]
