-- Decides one reservation atomically: the idempotency check, the claim, the job.
-- Seat states in ev:{e}:seat: 'A', 'H|<job>|<expires ms>', 'S|<job>'. A hold past its deadline
-- is claimable; ev:{e}:holds (deadline-scored) finds lapsed holds to put back into the free sets
-- ev:{e}:free:{section}, which section requests draw from. Single-instance peer: keys beyond
-- KEYS are derived from KEYS[1].
-- KEYS: ev:{e}, ev:{e}:seat, ev:{e}:holds, idem:{key}, job:{new job id}
-- ARGV: now_ms, job_id, event_id, buyer_id, fingerprint, 'seats', seat ids...
--                                                    or 'section', section, quantity
-- Returns {outcome, job_id, event, buyer, status, seats (comma-joined), expires_ms, reason}
-- with outcome NEW or DUP, or {NO_EVENT}, {REUSED}, {UNKNOWN, what}.
local now = tonumber(ARGV[1])
local hold_ms = redis.call('HGET', KEYS[1], 'hold_ms')
if not hold_ms then return {'NO_EVENT'} end
local prior = redis.call('GET', KEYS[4])
if prior then
    local job = 'job:' .. prior
    local f = redis.call('HMGET', job, 'fp', 'event', 'buyer', 'status', 'seats', 'exp', 'reason')
    if f[1] ~= ARGV[5] then return {'REUSED'} end
    return {'DUP', prior, f[2], f[3], f[4], f[5], f[6], f[7]}
end

local free_prefix = KEYS[1] .. ':free:'
local function section_of(seat) return string.match(seat, '^(.*)%-[^-]*%-[^-]*$') end
local function lapsed(state)
    local expires = state and tonumber(string.match(state, '^H|[^|]*|(%d+)$'))
    return expires ~= nil and expires <= now
end

for _, seat in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1000)) do
    if lapsed(redis.call('HGET', KEYS[2], seat)) then
        redis.call('HSET', KEYS[2], seat, 'A')
        redis.call('SADD', free_prefix .. section_of(seat), seat)
    end
    redis.call('ZREM', KEYS[3], seat)
end

local seats, reason = {}, ''
if ARGV[6] == 'seats' then
    for i = 7, #ARGV do
        local state = redis.call('HGET', KEYS[2], ARGV[i])
        if not state then return {'UNKNOWN', 'seat ' .. ARGV[i] .. ' does not exist'} end
        if state ~= 'A' and not lapsed(state) then reason = 'seat no longer available' end
        seats[#seats + 1] = ARGV[i]
    end
else
    local section, quantity = ARGV[7], tonumber(ARGV[8])
    if redis.call('HEXISTS', KEYS[1], 'sec:' .. section) == 0 then
        return {'UNKNOWN', section .. ' does not exist in this event'}
    end
    if redis.call('SCARD', free_prefix .. section) < quantity then
        reason = 'not enough seats available in section ' .. section
    else
        seats = redis.call('SPOP', free_prefix .. section, quantity)
    end
end

local status, expires = 'REJECTED', ''
if reason == '' then
    status = 'HELD'
    expires = string.format('%d', now + tonumber(hold_ms))
    local state = 'H|' .. ARGV[2] .. '|' .. expires
    for _, seat in ipairs(seats) do
        redis.call('HSET', KEYS[2], seat, state)
        redis.call('SREM', free_prefix .. section_of(seat), seat)
        redis.call('ZADD', KEYS[3], expires, seat)
    end
else
    seats = {}
end
local list = table.concat(seats, ',')
redis.call('HSET', KEYS[5], 'fp', ARGV[5], 'event', ARGV[3], 'buyer', ARGV[4], 'status', status,
    'seats', list, 'exp', expires, 'reason', reason)
redis.call('SET', KEYS[4], ARGV[2])
return {'NEW', ARGV[2], ARGV[3], ARGV[4], status, list, expires, reason}
