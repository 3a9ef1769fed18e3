-- renew.lua: keeps, ends or hands back a worker's lease on a task.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV[1] lease id   ARGV[2] what to do: renew | done | release
-- ARGV[3] lease ms (renew; release: the idle time to set, so the entry is
--   offered to the next claim at once)
-- renew resets the entry's idle time too, so the reclaimer leaves it alone;
-- done acknowledges and deletes the entry; release drops the lease and makes
-- the entry look abandoned.
-- Returns 1, or 0 when the lease is not (or no longer) this one.
local cur = redis.call('GET', KEYS[2])
if not cur or string.sub(cur, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then
  return 0
end
local rest = string.sub(cur, #ARGV[1] + 2)
local sp = string.find(rest, ' ', 1, true)
local entry, consumer = string.sub(rest, 1, sp - 1), string.sub(rest, sp + 1)
if ARGV[2] == 'renew' then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entry, 'JUSTID')
elseif ARGV[2] == 'done' then
  redis.call('DEL', KEYS[2])
  redis.call('XACK', KEYS[1], 'workers', entry)
  redis.call('XDEL', KEYS[1], entry)
  redis.call('HDEL', KEYS[3], entry)
else
  redis.call('DEL', KEYS[2])
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entry, 'IDLE', ARGV[3], 'JUSTID')
end
return 1
