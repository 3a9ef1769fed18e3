-- renew.lua: keeps, ends or hands back a worker's lease on a task.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- KEYS[3] the queue's hash of grants per entry
-- ARGV, each named (Renew, in claims.go, lays them out in this order):
--   ARGV[1] leaseID  the lease id
--   ARGV[2] action   what to do: renew | done | release
--   ARGV[3] ms       renew: lease ms; release: the idle time to set, so the
--                    entry is offered to the next claim at once
-- renew resets the entry's idle time too, so the reclaimer leaves it alone;
-- done acknowledges and deletes the entry; release drops the lease and makes
-- the entry look abandoned.
-- Returns 1, or 0 when the lease is not (or no longer) this one.
local leaseID, action, ms = ARGV[1], ARGV[2], ARGV[3]
local cur = redis.call('GET', KEYS[2])
if not cur or string.sub(cur, 1, #leaseID + 1) ~= leaseID .. ' ' then
  return 0
end
local rest = string.sub(cur, #leaseID + 2)
local sp = string.find(rest, ' ', 1, true)
local entry, consumer = string.sub(rest, 1, sp - 1), string.sub(rest, sp + 1)
if action == 'renew' then
  redis.call('PEXPIRE', KEYS[2], ms)
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entry, 'JUSTID')
elseif action == 'done' then
  redis.call('DEL', KEYS[2])
  redis.call('XACK', KEYS[1], 'workers', entry)
  redis.call('XDEL', KEYS[1], entry)
  redis.call('HDEL', KEYS[3], entry)
else
  redis.call('DEL', KEYS[2])
  redis.call('XCLAIM', KEYS[1], 'workers', consumer, 0, entry, 'IDLE', ms, 'JUSTID')
end
return 1
