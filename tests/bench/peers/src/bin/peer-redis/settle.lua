-- Confirms (HELD -> SOLD) or cancels (HELD -> CANCELLED, seats freed) a job whose hold is live;
-- a repeat is DONE. Single-instance peer: the event's keys are derived from the job.
-- KEYS: job:{id}. ARGV: now_ms, 'confirm' or 'cancel', job_id.
-- Returns {outcome, job_id, event, buyer, status, seats, expires_ms, reason}, outcome DONE or
-- CONFLICT, or {NOT_FOUND}.
local f = redis.call('HMGET', KEYS[1], 'event', 'buyer', 'status', 'seats', 'exp', 'reason')
if not f[1] then return {'NOT_FOUND'} end
local now, job_id = tonumber(ARGV[1]), ARGV[3]
local target = ARGV[2] == 'confirm' and 'SOLD' or 'CANCELLED'
local function reply(outcome, status) return {outcome, job_id, f[1], f[2], status, f[4], f[5], f[6]} end
if f[3] == target then return reply('DONE', target) end
local expires = tonumber(f[5])
if f[3] ~= 'HELD' or not expires or expires <= now then return reply('CONFLICT', f[3]) end

local event = 'ev:' .. f[1]
local seat_key, holds = event .. ':seat', event .. ':holds'
local mine = 'H|' .. job_id .. '|' .. f[5]
local seats = {}
for seat in string.gmatch(f[4], '[^,]+') do
    if redis.call('HGET', seat_key, seat) ~= mine then return reply('CONFLICT', f[3]) end
    seats[#seats + 1] = seat
end
for _, seat in ipairs(seats) do
    if target == 'SOLD' then
        redis.call('HSET', seat_key, seat, 'S|' .. job_id)
    else
        redis.call('HSET', seat_key, seat, 'A')
        redis.call('SADD', event .. ':free:' .. string.match(seat, '^(.*)%-[^-]*%-[^-]*$'), seat)
    end
    redis.call('ZREM', holds, seat)
end
redis.call('HSET', KEYS[1], 'status', target)
return reply('DONE', target)
