-- adopt.lua: lists, once per partition, the lanes that hold notifications
-- from the lanes path as parked (outbox.go: AdoptLanes). A lane with work
-- has a token in the delivery stream or in the retry set; both are read
-- in this one script, so that no token moving between them (the mover, a
-- finish) is missed.
--
-- KEYS[1] the partition's delivery stream   KEYS[2] the partition's retry zset
-- KEYS[3] the partition's parked-lane set    KEYS[4] the partition's adoption mark
-- ARGV[1] the partition key prefix (lane names: see keys.go, lane)
-- Returns the lanes listed (none once the partition was adopted).
if redis.call('EXISTS', KEYS[4]) == 1 then
  return {}
end
local seen, out = {}, {}
local function add(t, c)
  if t and c then
    local lane = ARGV[1] .. 'lane:' .. #t .. ':' .. t .. ':' .. c
    if not seen[lane] then
      seen[lane] = true
      out[#out + 1] = lane
      redis.call('SADD', KEYS[3], lane)
    end
  end
end
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f, t, c = e[2], nil, nil
  for j = 1, #f, 2 do
    if f[j] == 't' then t = f[j + 1] elseif f[j] == 'c' then c = f[j + 1] end
  end
  add(t, c)
end
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local ok, r = pcall(cjson.decode, m)
  if ok and type(r) == 'table' then
    add(r.t, r.c)
  end
end
redis.call('SET', KEYS[4], '1')
return out
