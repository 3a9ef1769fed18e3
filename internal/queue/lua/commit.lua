-- commit.lua: the one atomic write of a task change (DESIGN.md "The flow of one task").
-- The caller computed the new snapshot from version ARGV[1]; if another commit
-- got in first, nothing is written and the caller retries from the new version.
--
-- KEYS[1] task hash (fields: snap, ver, and caller fields)
-- KEYS[2] task event stream
-- KEYS[3] partition task index (zset: score = update time ms, member = task id)
-- KEYS[4] task push-config hash (config id -> config)
-- ARGV[1] expected version ("0": the task must not exist yet)
-- ARGV[2] new snapshot
-- ARGV[3] index score (update time in ms)
-- ARGV[4] task id (index member)
-- ARGV[5] approximate MAXLEN of the event stream
-- ARGV[6] expire the task's keys after this many ms (0: keep)
-- ARGV[7] F, the number of extra task-hash field pairs that follow
-- ARGV[8 .. 7+2F] field, value pairs written to the task hash
-- ARGV[8+2F] C, the number of push-config pairs that follow
-- ARGV[9+2F .. 8+2F+2C] config id, config pairs written to the push hash
-- ARGV[9+2F+2C ..] the events, appended in order
-- Returns the event stream ids, or the error "CONFLICT <current version>".
local cur = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if cur ~= tonumber(ARGV[1]) then
  return redis.error_reply('CONFLICT ' .. cur)
end
local ver = cur + 1
redis.call('HSET', KEYS[1], 'snap', ARGV[2], 'ver', ver)
local i = 8
local nf = tonumber(ARGV[7])
for _ = 1, nf do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
local nc = tonumber(ARGV[i])
i = i + 1
for _ = 1, nc do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  i = i + 2
end
local ids = {}
while i <= #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'e', ARGV[i], 'v', ver)
  i = i + 1
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
local ttl = tonumber(ARGV[6])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
return ids
