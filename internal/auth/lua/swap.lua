-- swap.lua: makes a new signing key current, if the current key is still the
-- one the caller saw (compare and swap), so that instances starting or
-- rotating at the same moment agree on one key: the first wins, the others
-- load the winner's key.
--
-- KEYS[1] key hash (kid -> entry JSON {alg, pem, created, retireAt})
-- KEYS[2] current kid (string)
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- swapArgs in store.go declares them):
--   expected  the current kid the caller saw ("": there must be none)
--   newKid    the new kid
--   newEntry  the new entry (JSON)
--   prevEntry the entry of expected with its retireAt set ("": leave
--             it alone)
-- Returns the current kid after the call: newKid when the swap happened,
-- otherwise the kid that is current ("" if none), and nothing is written.
local cur = redis.call('GET', KEYS[2]) or ''
if cur ~= expected then
  return cur
end
redis.call('HSET', KEYS[1], newKid, newEntry)
if expected ~= '' and prevEntry ~= '' then
  redis.call('HSET', KEYS[1], expected, prevEntry)
end
redis.call('SET', KEYS[2], newKid)
return newKid
