-- commit.lua: the one atomic write of a task change (DESIGN.md "The flow of one task").
-- The caller computed the new snapshot from version expected; if another commit
-- got in first, nothing is written and the caller retries from the new version.
--
-- KEYS[1] task hash (fields: snap, ver, ck when the task has a checkpoint, and caller fields;
--   pf: the event filters of KEYS[4]'s configs that filter, a JSON object
--   of config id -> the classes it takes (taskstore/filter.go), written by
--   this script (setAccept) and pushset.lua; an entry of a config deleted
--   since is ignored (the configs come from pc) and replaced when a config
--   of that id is stored again;
--   pc: the ids of KEYS[4]'s configs, a JSON array, kept by this script
--   so that it need not read them (HKEYS). Every other writer of KEYS[4]
--   (pushset.lua, DeletePushConfig, the 410 paths of finish.lua and
--   outbox_finish.lua) drops pc with its change; a commit that finds no pc
--   reads KEYS[4] and stores pc again)
-- KEYS[2] task event stream
-- KEYS[3] the owner's task index of the partition (layout.Keys.Index; zset:
--   score = the ms of the task's latest status change, or of its creation;
--   member = task id)
-- KEYS[4] task push-config hash (config id -> config)
-- KEYS[5] the task's checkpoint   KEYS[6] the partition's compaction zset
-- KEYS[7] the task's delivery index (zset of notification ids by ms), written
--   only with ARGV indexed: then the commit lists each notification in it
--   instead of naming its config in the event's entry, and keeps it from
--   expiring (below)
-- KEYS[8] the partition's delivery stream (lane tokens, consumer group
--   "workers"), on the lanes path
-- KEYS[9] the partition's status index of pending records, on the lanes path
-- KEYS[10] the task's idempotency record (layout.TaskKeys.Idempotency), always
--   given, touched only by a commit with an idempotency key (once, below):
--   a hash of 'k' .. key -> request hash .. answer, and a ring of the keys
--   it holds ('n': keys recorded so far, 's' .. (n % onceMax) -> key), so
--   that the key recorded onceMax keys ago is forgotten when a new one comes
-- KEYS[11] the partition's offers zset (layout.Keys.Offers), always given,
--   touched only by a commit that records an offer (ARGV offer, below)
-- KEYS[12] the partition's deadline zset (layout.Keys.Deadlines), always
--   given, touched only when the commit starts a turn under a deadline or
--   ends a turn that has one (deadline, below)
-- KEYS[13] the partition's outbox stream, given only when notifications go
--   through the outbox (RELAY_DELIVERY_PATH=outbox, internal/outbox) instead of
--   lanes: each gets an outbox entry, and its record is made when the
--   outbox's owner reports it. The event's entry names its config (or,
--   with ARGV indexed, the commit lists it in KEYS[7] under its outbox entry's
--   ms, the record's creation time), so that the owner's report of a
--   delivered first attempt is the record alone (internal/outbox); the
--   outbox entry says so with its field i: 's' named by the event's entry,
--   '1' listed in KEYS[7]
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- commitArgs in store.go declares them, the numbers through tonumber):
--   expected   the version the change was computed from ("0": the
--              task must not exist yet)
--   snapshot   the new snapshot
--   now        the commit's time, ms: the task's score in KEYS[3] (unless
--              keepPlace), and the time of its records, offer and deadline
--   task       the task id (index member)
--   maxLen     approximate MAXLEN of the event stream
--   ttl        expire the task's keys after this many ms (0: keep)
--   extra      extra task-hash fields, a JSON object ("": none)
--   setConfigs push configs to store first, a JSON object of
--              config id -> config ("": none)
--   flags      one flag per event: "0" when the event is not
--              delivered to the task's push configs, else its class
--              (filter.go): a config with a filter (pf) gets it only
--              when its entry lists the class, the others always
--   lanes      the task's lane prefix (layout.Keys.LanePrefix): the
--              lane of config c is lanes .. c
--   records    the partition's record prefix (layout.Keys.RecordPrefix):
--              the record of notification n is records .. n
--   part       the partition number, which heads notification ids
--   keep       delivery record retention in ms
--   indexed    "1": list each notification in the task's delivery index
--              (KEYS[7]) instead of naming its config in the event's
--              entry: the task's event stream may expire before the
--              notifications' records (a task retention shorter than
--              keep). "0": name them (the listing reads the stream;
--              compact.lua lists those of the entries it cuts)
--   commitID   the commit's id: a commit sent again (a client retry
--              after a lost reply) finds its own id stored and gets
--              its reply back (its stream ids and add)
--   inline     on the outbox path, the largest event (bytes) that
--              the outbox entry of its first config carries ('b',
--              with its version 'v'), so that the owner need not
--              read it back from the event stream (0: none). The
--              copy lives only while the entry waits in the outbox,
--              which is trimmed behind its owner; the other configs'
--              entries of the event follow it and refer to it
--   usage      bytes the commit stores, but for its notifications:
--              the snapshot's growth, the events, the push configs
--   bucket     the usage bucket of the commit (usage.go)
--   noteBytes  bytes counted for each notification made (its
--              record, its outbox or lane entry, its index entries)
--   once       the commit's idempotency key ("": none). A commit
--              whose key the task's record holds writes nothing and
--              returns {'once', <request hash .. answer> stored},
--              whatever the version: the caller compares the hashes
--   onceHash   the request's hash (the caller's; fixed length)
--   onceAnswer what the request answers, recorded for a replay
--   onceMax    how many keys the task's record holds at most
--   onceTTL    ms the record lives after its latest key (a finished
--              task's record expires with the task if sooner)
--   offer      the task's turn this commit makes claimable in a work
--              queue, recorded in KEYS[11] (member offer, score now)
--              in this same step ("": none; taskstore's Offer, its
--              format), so that a relay dying before it offers the
--              turn to the queue leaves it to be offered by another
--              (ingest.Reofferer)
--   deadline   what the commit does to the task's turn deadline
--              (taskstore/deadline.go; the task hash's 'dl' is the
--              turn's record, "<phase> <waitMs> <runMs> <sinceMs>",
--              phase w (waiting) or r (claimed), "" for none):
--              "" nothing; "turn <waitMs> <runMs>" the commit
--              starts a turn under these limits (phase w since now,
--              listed in KEYS[12] at now + waitMs when waitMs > 0),
--              unless the task's record is of a claimed turn
--              (phase r: a turn claimed while the task was
--              interrupted, whose agent takes the task up again),
--              which is kept; "run <waitMs> <runMs>" the same,
--              but the turn starts claimed (phase r since now,
--              listed at now + runMs when runMs > 0): the agent
--              that holds the turn's claim takes an interrupted
--              task up again;
--              "end" the commit ends the turn (a final or
--              interrupted state): a record it has goes;
--              "end <record>" the same, applied only while the
--              task's record is <record> (the deadline sweeper's
--              failure of the turn it saw expire), else the error
--              "DEADLINE"
--   setAccept  the event filters of the configs of setConfigs that
--              filter, a JSON object of config id -> classes ("":
--              none); a config of setConfigs not in it takes every
--              event (its pf entry goes)
--   trace      the W3C traceparent of the task turn the commit
--              belongs to ("": none, as when tracing is off): each
--              event's stream entry keeps it ('t'), and so does
--              the outbox entry that carries the event ('p'), so
--              that its deliveries join the turn's trace
--   keepPlace  "1": the task keeps its place in KEYS[3] (its score): the
--              commit changes no status (listings are ordered by each
--              task's latest status change); "0": it is listed at now
--   firstEvent where in ARGV the events start: they follow the arguments
--              above, one per argument, appended in order (as many as
--              flags has flags)
-- Usage (usage.go): the task hash keeps 'us', the bytes counted for the task
-- so far, and 'ub', the bucket they were last counted in. A commit counts
-- what it stores (usage.lua's countUsage); the first commit of a task in a
-- new bucket counts the task's whole count again, so that a task's bytes
-- stay counted for a usage window after its last commit, which is as long
-- as they live. The script writes no usage counter: it returns what the
-- owner's counter of bucket gains (add, below), and relay's tally adds it
-- (usage_tally.go), summed with other commits' about once a second.
-- Storage grows with what happened, not with copies of it: an event
-- stream entry holds the event and its task version ('e', 'v'), never a
-- task; lanes hold references to entries, never copies. The task after
-- any version is the snapshot when it is the current one, else the fold
-- of the stream from its first entry (the task's creation, or after the
-- checkpoint, below) up to that version.
-- Delivery keys (all in the task's partition, so in its hash slot; named
-- in layout/keys.go). A notification's lane and record are named from
-- lanes and records here: which there are depends on the push configs
-- the script reads (pc, or HKEYS) and on the notification ids it computes, so the
-- caller cannot list them in KEYS; they carry the partition's hash tag, as
-- KEYS do, so they live in the same slot.
--   <p>lane:<len(task)>:<task>:<config>  list of "eventId notificationId", oldest first (a
--                                        previous relay wrote "…\n<event>\n<snapshot>")
--   <p>deliveries                        stream of lane tokens (KEYS[8])
--   <p>dl:<notificationId>               the delivery record (lib.lua: recWrite)
--   <p>dl:task:<task>                    the task's delivery index (KEYS[7]): the
--                                        notifications the task's event stream does not
--                                        name (with indexed, cut by compact.lua, replayed
--                                        for a config the entry does not name, or made
--                                        by a previous relay), and those replayed while
--                                        the stream expires within a retention (replay.lua)
--   <p>dl:status:<status>                zset of notification ids by update ms, for every
--                                        status but delivered (listed per task; a new
--                                        record is pending: KEYS[9])
-- Trimming is not done here: a stream a quarter over maxLen entries is
-- listed in KEYS[6], and the compactor (compact.lua) cuts it back, folding
-- what it cuts into the task's checkpoint (KEYS[5]: the task as it was just
-- before the stream's first entry), so that every entry still stored can
-- be rendered exactly.
-- Returns the event stream ids followed by add, the bytes the owner's usage
-- counter of bucket gains (countUsage; "0" for none), or the error
-- "CONFLICT <current version>", or {'once', <what the key's first commit
-- recorded>} (ARGV once). The task hash keeps the reply (cids), which a
-- commit sent again gets back whole: its first run's reply was lost, so
-- the add it carries is counted once.
local outbox = KEYS[13]
local onceN
if once ~= '' then
  local got = redis.call('HMGET', KEYS[10], 'k' .. once, 'n')
  if got[1] then
    return {'once', got[1]} -- this key was committed already: the caller replays its answer
  end
  onceN = tonumber(got[2] or '0') + 1
end
local stored = redis.call('HMGET', KEYS[1], 'ver', 'ck', 'dx', 'ub', 'us', 'pc', 'dl', 'pf')
local cur = tonumber(stored[1] or '0')
if cur ~= tonumber(expected) then
  if redis.call('HGET', KEYS[1], 'cid') == commitID then
    return cjson.decode(redis.call('HGET', KEYS[1], 'cids')) -- this very commit, applied already
  end
  return redis.error_reply('CONFLICT ' .. cur)
end
if deadline ~= '' and string.sub(deadline, 1, 4) == 'end ' and (stored[7] or '') ~= string.sub(deadline, 5) then
  return redis.error_reply('DEADLINE the turn moved on')
end
local ver = cur + 1
-- Numbers go to redis.call as strings made once: Redis turns a Lua number
-- argument into a string through printf's %.17g at every call.
local verS = string.format('%d', ver)
-- The task hash is written once, at the end: snapshot, version, the
-- caller's fields and the commit id.
local fields = {'snap', snapshot, 'ver', verS}
if extra ~= '' then
  for f, v in pairs(cjson.decode(extra)) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v
  end
end
-- The config ids: pc, or none for a new task (its configs all come with
-- setConfigs); else KEYS[4]'s fields, read once and stored in pc.
-- pc without a backslash holds no escaped character: its ids are the
-- strings between its quotes, read without decoding the JSON.
local configs
if stored[6] and not string.find(stored[6], '\\', 1, true) then
  configs = {}
  for id in string.gmatch(stored[6], '"([^"]*)"') do
    configs[#configs + 1] = id
  end
elseif stored[6] then
  configs = cjson.decode(stored[6])
elseif cur == 0 then
  configs = {}
end
local listed = configs ~= nil
if setConfigs ~= '' then
  local set = {}
  for id, c in pairs(cjson.decode(setConfigs)) do
    set[#set + 1] = id
    set[#set + 1] = c
    if listed then
      local seen = false
      for _, have in ipairs(configs) do
        seen = seen or have == id
      end
      if not seen then
        configs[#configs + 1] = id
      end
    end
  end
  redis.call('HSET', KEYS[4], unpack(set))
end
-- The event filters (pf): what is stored, with setConfigs' configs' own.
local accept = stored[8] and cjson.decode(stored[8])
if setConfigs ~= '' and (accept or setAccept ~= '') then
  local given = setAccept ~= '' and cjson.decode(setAccept) or {}
  accept = accept or {}
  for id in pairs(cjson.decode(setConfigs)) do
    accept[id] = given[id]
  end
  if next(accept) then
    fields[#fields + 1] = 'pf'
    fields[#fields + 1] = cjson.encode(accept)
  else
    accept = nil
    redis.call('HDEL', KEYS[1], 'pf')
  end
end
if not listed and (setConfigs ~= '' or string.find(flags, '[^0]')) then
  configs = redis.call('HKEYS', KEYS[4])
end
if configs and (setConfigs ~= '' or not stored[6]) then
  fields[#fields + 1] = 'pc'
  fields[#fields + 1] = #configs > 0 and cjson.encode(configs) or '[]'
end
configs = configs or {}
local i = firstEvent
-- Each notification is named in its event's entry ('d': the ids of the
-- configs queued for, joined by newlines, layout/event.go), so that the
-- task's deliveries are listed from its event stream; with indexed (or for
-- a config whose id holds a newline, which no valid id does) it is listed
-- in the task's delivery index instead.
-- (The index's renewal, below, first cuts its members older than 1.5
-- retentions: their records have expired, with half a retention to spare
-- for clocks that differ, as this relay's and Redis's may: a record
-- expires by Redis's clock, a retention after its commit.)
local index = KEYS[7]
local indexing = indexed == '1'
local renew = tonumber(stored[3] or '0') < tonumber(now) + keep
local made = false
local function list(score, nid)
  if not made and renew and cur > 0 then
    redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. string.format('%d', tonumber(now) - math.floor(keep * 1.5)))
  end
  made = true
  redis.call('ZADD', index, score, nid)
end
local ids = {}
local n = 0
local notes = 0
while i <= #ARGV do
  n = n + 1
  local class = string.sub(flags, n, n)
  local ev = ARGV[i]
  local takers = {}
  local named = {}
  if class ~= '0' then
    for _, cfg in ipairs(configs) do
      if not accept or not accept[cfg] or string.find(accept[cfg], class, 1, true) then
        takers[#takers + 1] = cfg
        if not indexing and not string.find(cfg, '\n', 1, true) then
          named[#named + 1] = cfg
        end
      end
    end
  end
  local id
  if #named > 0 and trace ~= '' then
    id = redis.call('XADD', KEYS[2], '*', 'e', ev, 'v', verS, 't', trace, 'd', table.concat(named, '\n'))
  elseif #named > 0 then
    id = redis.call('XADD', KEYS[2], '*', 'e', ev, 'v', verS, 'd', table.concat(named, '\n'))
  elseif trace ~= '' then
    id = redis.call('XADD', KEYS[2], '*', 'e', ev, 'v', verS, 't', trace)
  else
    id = redis.call('XADD', KEYS[2], '*', 'e', ev, 'v', verS)
  end
  ids[n] = id
  local carry = outbox and #ev <= inline
  local of = task .. '|' .. id .. '|'
  for _, cfg in ipairs(takers) do
    local nid = part .. '.' .. string.sub(redis.sha1hex(of .. cfg), 1, 32)
    local listed = indexing or string.find(cfg, '\n', 1, true)
    local mark = listed and '1' or 's'
    notes = notes + 1
    if outbox then
      local oid
      if carry and trace ~= '' then
        oid = redis.call('XADD', outbox, '*', 't', task, 'c', cfg, 'e', id, 'n', nid, 'i', mark, 'b', ev, 'v', verS, 'p', trace)
        carry = false
      elseif carry then
        oid = redis.call('XADD', outbox, '*', 't', task, 'c', cfg, 'e', id, 'n', nid, 'i', mark, 'b', ev, 'v', verS)
        carry = false
      else
        oid = redis.call('XADD', outbox, '*', 't', task, 'c', cfg, 'e', id, 'n', nid, 'i', mark)
      end
      if listed then
        list(string.sub(oid, 1, string.find(oid, '-', 1, true) - 1), nid)
      end
    else
      recWrite(records .. nid, recNew(task, cfg, id, now), keep)
      if listed then
        list(now, nid)
      end
      redis.call('ZADD', KEYS[9], now, nid)
      if redis.call('RPUSH', lanes .. cfg, id .. ' ' .. nid) == 1 then
        redis.call('XADD', KEYS[8], '*', 't', task, 'c', cfg, 'a', 1, 'f', 0)
      end
    end
  end
  i = i + 1
end
-- The task's delivery index, when the commit writes it, lives at least the
-- retention after its newest notification: set to 1.5 retentions and renewed (its deadline kept in
-- the task hash, 'dx') once less than a retention is left, not at every
-- commit. Its members past the retention point at expired records, which
-- listings skip; they are cut at each renewal, so that the index of a task
-- that commits for ever holds no more than about two retentions of members.
if made and renew then
  redis.call('PEXPIRE', index, string.format('%d', math.floor(keep * 1.5)))
  fields[#fields + 1] = 'dx'
  fields[#fields + 1] = string.format('%d', tonumber(now) + math.floor(keep * 1.5))
end
if keepPlace ~= '1' then
  redis.call('ZADD', KEYS[3], now, task)
end
if offer ~= '' then
  redis.call('ZADD', KEYS[11], now, offer)
end
if stored[4] ~= bucket then
  fields[#fields + 1] = 'ub'
  fields[#fields + 1] = bucket
end
local counted, add = countUsage(bucket, stored[4], stored[5], usage + notes * noteBytes)
fields[#fields + 1] = 'us'
fields[#fields + 1] = counted
-- A stream a quarter (at least 16 entries) over its length is listed for
-- compaction (looked at every 8th version).
if #ids > 0 and ver % 8 == 0 and redis.call('XLEN', KEYS[2]) > maxLen + math.max(16, math.floor(maxLen / 4)) then
  redis.call('ZADD', KEYS[6], 'NX', now, task)
end
if once ~= '' then
  local slot = 's' .. (onceN % onceMax)
  local old = redis.call('HGET', KEYS[10], slot)
  if old then
    redis.call('HDEL', KEYS[10], 'k' .. old)
  end
  redis.call('HSET', KEYS[10], 'n', onceN, slot, once, 'k' .. once, onceHash .. onceAnswer)
  redis.call('PEXPIRE', KEYS[10], (ttl > 0 and math.min(ttl, onceTTL)) or onceTTL)
end
if deadline == '' then
  -- the turn's deadline stays as it is
elseif string.sub(deadline, 1, 3) == 'end' then
  if (stored[7] or '') ~= '' then
    redis.call('ZREM', KEYS[12], task)
    fields[#fields + 1] = 'dl'
    fields[#fields + 1] = ''
  end
elseif string.sub(stored[7] or '', 1, 2) ~= 'r ' then
  local kind, waitMs, runMs = string.match(deadline, '^(%a+) (%d+) (%d+)$')
  fields[#fields + 1] = 'dl'
  if kind == 'run' then
    fields[#fields + 1] = 'r ' .. waitMs .. ' ' .. runMs .. ' ' .. now
    if tonumber(runMs) > 0 then
      redis.call('ZADD', KEYS[12], string.format('%d', tonumber(now) + tonumber(runMs)), task)
    end
  else
    fields[#fields + 1] = 'w ' .. waitMs .. ' ' .. runMs .. ' ' .. now
    if tonumber(waitMs) > 0 then
      redis.call('ZADD', KEYS[12], string.format('%d', tonumber(now) + tonumber(waitMs)), task)
    end
  end
end
ids[#ids + 1] = add
fields[#fields + 1] = 'cid'
fields[#fields + 1] = commitID
-- cids, the reply, as cjson.encode writes it: stream ids and add need no
-- escaping.
fields[#fields + 1] = 'cids'
fields[#fields + 1] = '["' .. table.concat(ids, '","') .. '"]'
redis.call('HSET', KEYS[1], unpack(fields))
if ttl > 0 then
  local ttlS = string.format('%d', ttl)
  redis.call('PEXPIRE', KEYS[1], ttlS)
  redis.call('PEXPIRE', KEYS[2], ttlS)
  redis.call('PEXPIRE', KEYS[4], ttlS)
  if stored[2] then
    redis.call('PEXPIRE', KEYS[5], ttlS)
  end
end
return ids
