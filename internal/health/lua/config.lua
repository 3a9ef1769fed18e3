-- config.lua: adds a batch of delivery outcomes to the health of their
-- push configs, all of one task partition (so of one hash slot).
--
-- KEYS[i] the health hash of config i of ARGV.configs (layout ConfigHealth)
-- ARGV[1] one JSON object (Store.RecordConfigs lays it out):
--   keepMs   how long a config's health outlives its last outcome
--   configs  [{endpoint, url, ok, lastOk, fail, firstFail, lastFail,
--              runFail, runStart, err}]: as record.lua's endpoints, per
--            config
-- A success resets the failure run unless a failure later than it is
-- stored already: the run then goes on. Returns the number of configs.
local a = cjson.decode(ARGV[1])
local function ms(x) return string.format('%d', x) end
for i, c in ipairs(a.configs) do
  local h = KEYS[i]
  local f = redis.call('HMGET', h, 'ok', 'failed', 'consec', 'since', 'lastErrAt', 'lastOk')
  local okN, failN = tonumber(f[1]) or 0, tonumber(f[2]) or 0
  local consec, since = tonumber(f[3]) or 0, tonumber(f[4]) or 0
  local lastErrAt, lastOk = tonumber(f[5]) or 0, tonumber(f[6]) or 0
  -- One HSET of every field that changes (the hash is written by this
  -- script only).
  local set = {'endpoint', c.endpoint, 'url', c.url, 'ok', okN + c.ok, 'failed', failN + c.fail}
  if c.ok > 0 and c.lastOk >= lastErrAt then
    consec = c.runFail
    since = c.runFail > 0 and c.runStart or 0
  else
    consec = consec + c.fail
    if since == 0 and c.fail > 0 then
      since = c.firstFail
    end
  end
  if c.ok > 0 then
    table.insert(set, 'lastOk'); table.insert(set, ms(math.max(lastOk, c.lastOk)))
  end
  if c.fail > 0 then
    table.insert(set, 'lastErr'); table.insert(set, c.err)
    table.insert(set, 'lastErrAt'); table.insert(set, ms(math.max(lastErrAt, c.lastFail)))
  end
  table.insert(set, 'consec'); table.insert(set, consec)
  table.insert(set, 'since'); table.insert(set, ms(since))
  redis.call('HSET', h, unpack(set))
  redis.call('PEXPIRE', h, a.keepMs)
end
return #a.configs
