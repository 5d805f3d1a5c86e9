package clusterstate

import "github.com/redis/go-redis/v9"

// chargeScript adds ARGV[2..] (field, delta pairs) to the usage hash
// KEYS[1] in one atomic step, starts its window (ARGV[1] ms) when it has
// none, and returns the window's time left and every counter after the
// charge. Each concurrent caller thus sees its own total: two calls can
// never both take the last unit of a limit. With no pairs it only reads.
var chargeScript = redis.NewScript(`
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
if #ARGV > 1 and redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return {redis.call('PTTL', KEYS[1]), redis.call('HGETALL', KEYS[1])}
`)

// refundScript takes back a charge (ARGV: field, delta pairs) of a call
// the guard then denied, unless the window it was charged in has ended.
var refundScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], 0 - tonumber(ARGV[i + 1]))
end
return 1
`)
