-- wrk script for the admission benchmark: every request is a new reservation with its own
-- Idempotency-Key and buyer, so the real endpoint makes each one durable.
local counter = 0
local thread_id = 0
setup = function(thread)
    thread:set("id", thread_id)
    thread_id = thread_id + 1
end
request = function()
    counter = counter + 1
    local key = string.format("wrk-%d-%d", id, counter)
    local seat = string.format("S0-%d-%d", (counter % 50) + 1, (counter % 20) + 1)
    local body = string.format('{"buyer_id": "%s", "seat_ids": ["%s"]}', key, seat)
    return wrk.format("POST", wrk.path, {["Content-Type"] = "application/json", ["Idempotency-Key"] = key}, body)
end
