-- lib.lua: functions several scripts share; Go puts those a script uses
-- before it (layout.Script, libFor: each function with the comment above
-- it, up to its own line "end"), so a script is still one self-contained
-- body, and Redis does not define at each call functions it never calls.

-- statusIndexes maps each indexed status to its status index, the zsets
-- that layout.Keys.StatusIndexes lists (in the order of
-- layout.IndexedStatuses) and the caller passes in KEYS from KEYS[first] on.
-- A status without an index (delivered) maps to nil.
local function statusIndexes(first)
  return {pending = KEYS[first], failed = KEYS[first + 1], dead = KEYS[first + 2], disabled = KEYS[first + 3],
    dropped = KEYS[first + 4]}
end

-- laneOf is the lane of (task, config) among the lanes named from lanes
-- (layout.Keys.Lanes of their partition): the same name as layout.Keys.Lane,
-- for a script that reads the pair from data. A script that knows the task
-- is given the task's layout.Keys.LanePrefix instead, and appends the config.
local function laneOf(lanes, task, config)
  return lanes .. #task .. ':' .. task .. ':' .. config
end

-- idParts splits a stream id "ms-seq" into its two numbers.
local function idParts(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end

-- before orders stream ids.
local function before(a, b)
  local am, as = idParts(a)
  local bm, bs = idParts(b)
  return am < bm or (am == bm and as < bs)
end

-- entryOf is the stream id a lane entry ("eventId notificationId…") refers to.
local function entryOf(h)
  return string.sub(h, 1, string.find(h, ' ', 1, true) - 1)
end

-- outboxFloor is the oldest event of task that a notification waiting in
-- the partition's outbox (KEYS name outbox) refers to (a redelivery's is
-- old), false when none does, or "0-0" (keep everything) when the outbox
-- holds more than 4096 entries: a lagging owner holds compaction back.
local function outboxFloor(outbox, task)
  local entries = redis.call('XRANGE', outbox, '-', '+', 'COUNT', 4097)
  if #entries > 4096 then
    return '0-0'
  end
  local floor = false
  for _, e in ipairs(entries) do
    local f, t, ev = e[2], nil, nil
    for j = 1, #f, 2 do
      if f[j] == 't' then t = f[j + 1] elseif f[j] == 'e' then ev = f[j + 1] end
    end
    if t == task and ev and (not floor or before(ev, floor)) then
      floor = ev
    end
  end
  return floor
end

-- eventOf reads the event, its version, its turn's traceparent and the
-- configs its commit queued it for ('e', 'v', 't', 'd': layout/event.go)
-- from the entry of stream that lane entry h refers to: false, false,
-- false, false when it is gone, or when h carries its event (written by a
-- previous relay); the traceparent is false when the commit had none, the
-- configs when it named none.
local function eventOf(stream, h)
  local ev, ver, tp, cf = false, false, false, false
  if h and not string.find(h, '\n', 1, true) then
    local eid = entryOf(h)
    local entry = redis.call('XRANGE', stream, eid, eid)[1]
    if entry then
      local f = entry[2]
      for j = 1, #f, 2 do
        if f[j] == 'e' then ev = f[j + 1] elseif f[j] == 'v' then ver = f[j + 1] elseif f[j] == 't' then tp = f[j + 1]
        elseif f[j] == 'd' then cf = f[j + 1] end
      end
    end
  end
  return ev, ver, tp, cf
end

-- entryConfigs is field 'd' of an event stream entry as XRANGE returns it
-- ({id, {field, value, ...}}): the ids of the configs its commit queued
-- it for, joined by newlines (layout.EventConfigSep), or false.
local function entryConfigs(entry)
  local f = entry[2]
  for j = 1, #f, 2 do
    if f[j] == 'd' then
      return f[j + 1]
    end
  end
  return false
end

-- namesConfig tells whether d, an entry's field 'd' (or false), names
-- config.
local function namesConfig(d, config)
  return d and string.find('\n' .. d .. '\n', '\n' .. config .. '\n', 1, true) ~= nil
end


-- Delivery records. A record is one string (codec "d1", the format
-- layout/record.go documents and decodes):
--   d1 <status> <attempts> <created ms> <updated ms> <next ms or 0> <event id> <len task> <len config>
--   "\n" <task><config>, then "\n" <attempt> for each logged attempt, oldest first.
-- A previous relay kept a hash (these fields) and the attempts in a list
-- of their own: recRead reads that too, and recWrite replaces it.

-- recNew is a pending record of a new notification.
local function recNew(task, config, event, now)
  return {status = 'pending', attempts = 0, created = now, updated = now, next = '0', event = event,
    task = task, config = config, log = '', fresh = true}
end

-- recRead returns the record at key (la: a previous relay's attempt list),
-- or nil when it expired.
local function recRead(key, la)
  local s = redis.pcall('GET', key)
  if type(s) == 'table' and s.err then -- a previous relay's hash
    local h = redis.call('HGETALL', key)
    local r = {next = '0', attempts = 0, log = '', legacy = la, ttl = redis.call('PTTL', key)}
    for j = 1, #h, 2 do
      r[h[j]] = h[j + 1]
    end
    for _, a in ipairs(redis.call('LRANGE', la, 0, -1)) do
      r.log = r.log .. '\n' .. a
    end
    r.attempts = tonumber(r.attempts) or 0
    return r
  end
  if not s then
    return nil
  end
  local st, at, cr, up, nx, ev, lt, lc, body = string.match(s, '^d1 (%S+) (%d+) (%d+) (%d+) (%d+) (%S+) (%d+) (%d+)\n()')
  lt, lc = tonumber(lt), tonumber(lc)
  return {status = st, attempts = tonumber(at), created = cr, updated = up, next = nx, event = ev,
    task = string.sub(s, body, body + lt - 1), config = string.sub(s, body + lt, body + lt + lc - 1),
    log = string.sub(s, body + lt + lc)}
end

-- recLog appends attempt a to r's log, keeping the last kept attempts (the
-- log holds at most as many as the record counts: only then is it counted).
local function recLog(r, a, kept)
  r.attempts = r.attempts + 1
  r.log = r.log .. '\n' .. a
  if r.attempts <= kept then
    return
  end
  local _, n = string.gsub(r.log, '\n', '')
  while n > kept do
    local second = string.find(r.log, '\n', 2, true)
    r.log = string.sub(r.log, second)
    n = n - 1
  end
end

-- recWrite stores r at key: a new record expires keepMs later (at r.at, a
-- time in ms, when it has one), a stored one keeps its expiry.
local function recWrite(key, r, keepMs)
  local s = 'd1 ' .. r.status .. ' ' .. r.attempts .. ' ' .. r.created .. ' ' .. r.updated .. ' ' .. r.next .. ' ' ..
    r.event .. ' ' .. #r.task .. ' ' .. #r.config .. '\n' .. r.task .. r.config .. r.log
  if r.fresh and r.at then
    redis.call('SET', key, s, 'PXAT', r.at)
  elseif r.fresh then
    redis.call('SET', key, s, 'PX', keepMs)
  elseif r.legacy then
    redis.call('DEL', key, r.legacy)
    if r.ttl > 0 then
      redis.call('SET', key, s, 'PX', r.ttl)
    else
      redis.call('SET', key, s)
    end
  else
    redis.call('SET', key, s, 'KEEPTTL')
  end
end
