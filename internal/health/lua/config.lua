-- config.lua: adds a batch of delivery outcomes to the health of their
-- push configs, all of one task partition (so of one hash slot).
--
-- KEYS[i] the health of config i of ARGV.configs (layout ConfigHealth)
-- ARGV[1] one JSON object (Store.RecordConfigs lays it out):
--   keepMs   how long a config's health outlives its last outcome
--   configs  [{endpoint, url, ok, lastOk, fail, firstFail, lastFail,
--              runFail, runStart, err}]: as record.lua's endpoints, per
--            config
-- A config's health is one string (codec h1; config.go's
-- decodeConfigHealth reads it), so that adding to it is one read and one
-- write that sets its expiry too:
--   h1 <ok> <failed> <consec> <since> <lastErrAt> <lastOk> <len endpoint> <len url>
--   "\n" <endpoint><url><last error>
-- (times in ms, 0 for none; consec is the current failure run, since when
-- it started). A hash a previous relay wrote (fields of the same names) is
-- read as it is and replaced by this form here.
-- A success resets the failure run unless a failure later than it is
-- stored already: the run then goes on. Returns the number of configs.
local a = cjson.decode(ARGV[1])
local function ms(x) return string.format('%d', x) end
local function read(h)
  local s = redis.pcall('GET', h)
  if type(s) == 'table' and s.err then -- a previous relay's hash
    local f = redis.call('HMGET', h, 'ok', 'failed', 'consec', 'since', 'lastErrAt', 'lastOk', 'lastErr')
    return tonumber(f[1]) or 0, tonumber(f[2]) or 0, tonumber(f[3]) or 0, tonumber(f[4]) or 0,
      tonumber(f[5]) or 0, tonumber(f[6]) or 0, f[7] or ''
  end
  local okN, failN, consec, since, lastErrAt, lastOk, le, lu, at
  if s then
    okN, failN, consec, since, lastErrAt, lastOk, le, lu, at =
      string.match(s, '^h1 (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)\n()')
  end
  if not okN then
    return 0, 0, 0, 0, 0, 0, ''
  end
  return tonumber(okN), tonumber(failN), tonumber(consec), tonumber(since), tonumber(lastErrAt), tonumber(lastOk),
    string.sub(s, at + tonumber(le) + tonumber(lu))
end
for i, c in ipairs(a.configs) do
  local h = KEYS[i]
  local okN, failN, consec, since, lastErrAt, lastOk, lastErr = read(h)
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
    lastOk = math.max(lastOk, c.lastOk)
  end
  if c.fail > 0 then
    lastErr = c.err
    lastErrAt = math.max(lastErrAt, c.lastFail)
  end
  local head = table.concat({'h1', ms(okN + c.ok), ms(failN + c.fail), ms(consec), ms(since), ms(lastErrAt), ms(lastOk),
    ms(#c.endpoint), ms(#c.url)}, ' ')
  redis.call('SET', h, head .. '\n' .. c.endpoint .. c.url .. lastErr, 'PX', a.keepMs)
end
return #a.configs
