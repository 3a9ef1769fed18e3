-- named.lua: reads a task's event stream newest first for the listing of
-- its deliveries (records.go): of up to count entries from 'from' (an id,
-- "(" id, or "+") back, those that name the configs their commit queued
-- them for (field d, layout/event.go), with just that field, so that the
-- events themselves need not travel.
--
-- KEYS[1] the task's event stream
-- ARGV, by name (layout.Named binds each to the local of its name, as
-- namedArgs in records.go declares them):
--   from   the newest entry to read
--   count  how many entries to read at most
-- Returns {the id of the last entry read ("" when none), "1" when there may
-- be more (count were read) else "0", the id of the first entry read (""
-- when none), then id, d of each entry that names configs}.
local entries = redis.call('XREVRANGE', KEYS[1], from, '-', 'COUNT', count)
local out = {'', '0', ''}
if #entries > 0 then
  out[1] = entries[#entries][1]
  out[3] = entries[1][1]
end
if #entries == count then
  out[2] = '1'
end
for _, e in ipairs(entries) do
  local d = entryConfigs(e)
  if d then
    out[#out + 1] = e[1]
    out[#out + 1] = d
  end
end
return out
