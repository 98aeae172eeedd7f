-- Redis baseline for the claim step: an atomic conditional claim in one script.
if redis.call('GET', KEYS[1]) == 'AVAILABLE' then
    redis.call('SET', KEYS[1], ARGV[1])
    return 1
end
return 0
