-- replay.lua: queues again, in order, notifications of one task that an
-- operator replays (internal/delivery, replay.go): each goes to the end of
-- its lane (through the outbox on the outbox path, as redeliver.lua sends
-- one), after whatever is queued for its (task, config) pair already, and
-- keeps its id. A replayed notification may have no record left (expired,
-- or never made: its first attempt was skipped or lost): one is made,
-- pending; one that has a record keeps it (and its attempts), back to
-- pending; either lives a retention from now. Each is listed in the task's
-- delivery index unless its event's stream entry names its config (field
-- d, layout/event.go), whence the task's deliveries are listed already;
-- when the stream expires within a retention, it is listed in the index
-- too, under its event's ms (as the stream lists it), so that it is
-- listed for as long as its record lives, once. One still queued (its
-- record pending or failed) is left where it is: it goes out anyway, and
-- queuing it twice would put it twice in its lane. Notifications whose
-- event has been cut from the task's stream meanwhile are left out.
-- One call queues all its notifications atomically, so that two replays
-- do not interleave within a call.
--
-- KEYS[1] the partition's delivery stream (lane tokens), on the lanes path
-- KEYS[2] the partition's outbox, on the outbox path (always given)
-- KEYS[3] the task's delivery index   KEYS[4] the task's event stream
-- KEYS[5 .. 4+args.statuses] the partition's status indexes: pending,
--   failed, dead, disabled, dropped (layout.Keys.StatusIndexes, all of them,
--   in its order)
-- then the lane of each config of args.configs, in order
-- then per notification of args.notes, in order: its delivery record and a
--   previous relay's attempt list of it
-- ARGV[1] one JSON object:
--   task     the task id
--   now      ms (a string: Lua keeps it exact)
--   keep     delivery record retention, ms (a string)
--   outbox   true on the outbox path
--   statuses how many status indexes KEYS holds (from KEYS[5])
--   configs  the config ids the notes name (by index, from 1)
--   notes    [{e = event stream id, c = index into configs, n = notification id}]
-- Returns {queued, already queued, event gone}.
local args = cjson.decode(ARGV[1])
local now, keep = args.now, tonumber(args.keep)
local index = statusIndexes(5)
local firstLane = 5 + args.statuses
local firstNote = firstLane + #args.configs
local queued, waiting, gone = 0, 0, 0
local indexed = false
-- outlives tells whether a record given a retention now may outlive the
-- task's event stream (read once per call).
local streamTTL
local function outlives()
  streamTTL = streamTTL or redis.call('PTTL', KEYS[4])
  return streamTTL >= 0 and streamTTL < keep
end
for i, note in ipairs(args.notes) do
  local rk, la = KEYS[firstNote + 2 * (i - 1)], KEYS[firstNote + 2 * (i - 1) + 1]
  local config = args.configs[note.c]
  local r = recRead(rk, la)
  local entry = not (r and (r.status == 'pending' or r.status == 'failed')) and redis.call('XRANGE', KEYS[4], note.e, note.e)[1]
  if r and (r.status == 'pending' or r.status == 'failed') then
    waiting = waiting + 1
  elseif not entry then
    gone = gone + 1
  else
    if r then
      if index[r.status] then
        redis.call('ZREM', index[r.status], note.n)
      end
      r.status, r.updated, r.next = 'pending', now, '0'
      recWrite(rk, r, 0)
      redis.call('PEXPIRE', rk, keep)
    else
      recWrite(rk, recNew(args.task, config, note.e, now), keep)
    end
    if not namesConfig(entryConfigs(entry), config) then
      redis.call('ZADD', KEYS[3], 'NX', now, note.n)
      indexed = true
    elseif outlives() then
      -- named, but the record now lives a retention from now, which may be
      -- past the stream's expiry: listed in the index too, under its
      -- event's ms, as the stream lists it (so that it is listed once)
      redis.call('ZADD', KEYS[3], 'NX', string.sub(note.e, 1, string.find(note.e, '-', 1, true) - 1), note.n)
      indexed = true
    end
    redis.call('ZADD', index.pending, now, note.n)
    if args.outbox then
      redis.call('XADD', KEYS[2], '*', 't', args.task, 'c', config, 'e', note.e, 'n', note.n, 'r', 1)
    elseif redis.call('RPUSH', KEYS[firstLane + note.c - 1], note.e .. ' ' .. note.n) == 1 then
      redis.call('XADD', KEYS[1], '*', 't', args.task, 'c', config, 'a', 1, 'f', 0)
    end
    queued = queued + 1
  end
end
if indexed and redis.call('PTTL', KEYS[3]) < keep then
  redis.call('PEXPIRE', KEYS[3], math.floor(keep * 1.5))
end
return {queued, waiting, gone}
