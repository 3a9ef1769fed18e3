-- lib.lua: functions several scripts share; Go puts this file before each
-- of them (see scripts.go), so a script is still one self-contained body.

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

-- eventOf reads the event and its version ('e', 'v') from the entry of
-- stream that lane entry h refers to: false, false when it is gone, or when
-- h carries its event (written by a previous relay).
local function eventOf(stream, h)
  local ev, ver = false, false
  if h and not string.find(h, '\n', 1, true) then
    local eid = entryOf(h)
    local entry = redis.call('XRANGE', stream, eid, eid)[1]
    if entry then
      local f = entry[2]
      for j = 1, #f, 2 do
        if f[j] == 'e' then ev = f[j + 1] elseif f[j] == 'v' then ver = f[j + 1] end
      end
    end
  end
  return ev, ver
end

