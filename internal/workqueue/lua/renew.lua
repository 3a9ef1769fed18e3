-- renew.lua: keeps, ends or hands back a worker's lease on a task.
-- KEYS[1] the queue's claim stream   KEYS[2] the task's lease
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- renewArgs in claims.go declares them):
--   leaseID  the lease id
--   action   what to do: renew | done | final | release
--   ms       renew: lease ms; release: the idle time to set, so the
--            entry is offered to the next claim at once
--   doneMs   how long the done marker is kept (DoneHorizon)
-- The lease value is "<lease id> <entry id>[/<turn>] <consumer>" (grant.lua).
-- renew resets the entry's idle time too, so the reclaimer leaves it alone.
-- done acknowledges and deletes the entry, and replaces the lease with the
-- done marker "done <entry id> <turn>" for doneMs: grant.lua drops the
-- offers of turns up to <turn> that come later (duplicates). A lease whose
-- turn is unknown is deleted instead.
-- final is done for a turn that finished its task: the lease is deleted,
-- with no marker (a claim drops the later offers of a finished task's
-- turns by the task's state). (A caller that holds the claim's Work ends
-- such a turn without this script: Claims.Final.)
-- release makes the entry look abandoned, so the next claim takes it; its
-- turn is not over, but every earlier one is: the lease is replaced by the
-- marker "done <entry id> <turn - 1>" (deleted when the turn is unknown).
-- Returns 1, or 0 when the lease is not (or no longer) this one (a done
-- marker never is: lease ids are never "done").
-- A lease id holds no space: one that does (a worker's, made up) could
-- match the value's lease id and part of what follows it, and the rest
-- read as another entry (a consumer name may hold spaces).
local cur = redis.call('GET', KEYS[2])
if not cur or string.find(leaseID, ' ', 1, true) or string.sub(cur, 1, #leaseID + 1) ~= leaseID .. ' ' then
  return 0
end
local rest = string.sub(cur, #leaseID + 2)
-- The lease's attempt, the entry's delivery count (grant.lua), which the
-- XCLAIMs below keep (nil for a lease id without it: a3a5dfe's or older).
local attempt = tonumber(string.match(leaseID, '^[^.]*%.[^.]*%.(%d+)$'))
local function keep(args)
  if attempt then
    table.insert(args, 'RETRYCOUNT')
    table.insert(args, attempt)
  end
  table.insert(args, 'JUSTID')
  return args
end
local sp = string.find(rest, ' ', 1, true)
local entry, consumer = string.sub(rest, 1, sp - 1), string.sub(rest, sp + 1)
local turn = 0
local sl = string.find(entry, '/', 1, true)
if sl then
  turn = tonumber(string.sub(entry, sl + 1)) or 0
  entry = string.sub(entry, 1, sl - 1)
end
local function over(upTo)
  if turn > 0 and action ~= 'final' then
    redis.call('SET', KEYS[2], 'done ' .. entry .. ' ' .. upTo, 'PX', doneMs)
  else
    redis.call('DEL', KEYS[2])
  end
end
if action == 'renew' then
  redis.call('PEXPIRE', KEYS[2], ms)
  redis.call('XCLAIM', unpack(keep({KEYS[1], 'workers', consumer, 0, entry})))
elseif action == 'done' or action == 'final' then
  over(turn)
  redis.call('XACK', KEYS[1], 'workers', entry)
  redis.call('XDEL', KEYS[1], entry)
else
  over(turn - 1)
  redis.call('XCLAIM', unpack(keep({KEYS[1], 'workers', consumer, 0, entry, 'IDLE', ms})))
end
return 1
