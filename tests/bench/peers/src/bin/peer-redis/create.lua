-- Creates an event and its seats, unless it exists. Single-instance peer: keys beyond KEYS are
-- derived from KEYS[1].
-- KEYS: ev:{e} (meta hash), ev:{e}:seat (seat -> state). ARGV: hold_ms, name, layout (JSON),
-- then (section, rows, seats_per_row) triples.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'hold_ms', ARGV[1], 'name', ARGV[2], 'layout', ARGV[3])
for i = 4, #ARGV, 3 do
    local section, rows, per_row = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    local free = KEYS[1] .. ':free:' .. section
    redis.call('HSET', KEYS[1], 'sec:' .. section, 1)
    local ids, states = {}, {}
    local function flush()
        if #ids > 0 then
            redis.call('HSET', KEYS[2], unpack(states))
            redis.call('SADD', free, unpack(ids))
            ids, states = {}, {}
        end
    end
    for row = 1, rows do
        for n = 1, per_row do
            local id = section .. '-' .. row .. '-' .. n
            ids[#ids + 1] = id
            states[#states + 1] = id
            states[#states + 1] = 'A'
            if #ids == 500 then flush() end
        end
    end
    flush()
end
return 1
