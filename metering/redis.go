package metering

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// rediser lists the only Redis commands the meters use: the script
// commands of redis.Scripter that redis.Script.Run needs, PING, and XADD
// for usage events.
// redis.UniversalClient (single node, Sentinel or Cluster) satisfies it.
type rediser interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Ping(ctx context.Context) *redis.StatusCmd
	XAdd(ctx context.Context, a *redis.XAddArgs) *redis.StringCmd
	Time(ctx context.Context) *redis.TimeCmd
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// luaPrelude holds what both scripts share: the clock and the choice of the
// usage counter.
//
// The counter's key must be passed in KEYS (Redis Cluster requires scripts
// to declare their keys), but the month must come from Redis TIME, not from
// the replica's clock. So the client passes the counters of the previous,
// current and next month by its own clock, with their yyyymm in ARGV, and
// the script picks the one that Redis TIME falls in. A replica clock more
// than a month off makes the script fail instead of counting in the wrong
// month.
const luaPrelude = `
-- now returns the time in µs since the Unix epoch: Redis TIME, or the
-- override when one is given (tests only).
local function now_us(override)
  if override ~= nil and override ~= "" then
    return tonumber(override)
  end
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- yyyymm names the calendar month (UTC) of a Unix time in seconds
-- (civil_from_days, H. Hinnant).
local function yyyymm(secs)
  local z = math.floor(secs / 86400) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  if m <= 2 then y = y + 1 end
  return string.format("%04d%02d", y, m)
end

-- usage_key returns the candidate KEYS[k+i] whose ARGV[a+i] (i = 0..2)
-- names the month of now, or nil.
local function usage_key(now, k, a)
  local ym = yyyymm(math.floor(now / 1000000))
  for i = 0, 2 do
    if ARGV[a + i] == ym then return KEYS[k + i] end
  end
  return nil
end

-- pick returns i (0..2) such that ARGV[a+i] <= now < ARGV[a+i+1]: which
-- of three consecutive candidate periods, given by their boundaries in µs,
-- holds now; nil when none does.
local function pick(now, a)
  for i = 0, 2 do
    if tonumber(ARGV[a + i]) <= now and now < tonumber(ARGV[a + i + 1]) then return i end
  end
  return nil
end

local skew_error = "ERR restmcp: replica clock and Redis TIME are more than a month apart"
`

// admitScript checks the rate limit and counts the call, atomically.
//
//	KEYS[1]     GCRA state (TAT, µs)
//	KEYS[2..4]  usage counters of the previous, current, next month by the replica's clock
//	ARGV[1]     emission interval, µs; 0 disables rate limiting
//	ARGV[2]     tau = interval × limit, µs
//	ARGV[3..5]  yyyymm of KEYS[2..4]
//	ARGV[6]     usage counter TTL, s
//	ARGV[7]     "" (use Redis TIME) or now in µs (tests only)
//
// It returns {allowed, remaining, reset µs, retry-after µs, count}. The
// arithmetic is that of params.step; all values are integers below 2^53, so
// Lua's doubles hold them exactly.
var admitScript = redis.NewScript(luaPrelude + `
local now = now_us(ARGV[7])
local ukey = usage_key(now, 2, 3)
if not ukey then return redis.error_reply(skew_error) end

local interval = tonumber(ARGV[1])
local remaining, reset = 0, 0
if interval > 0 then
  local tau = tonumber(ARGV[2])
  local tat = tonumber(redis.call("GET", KEYS[1]) or 0)
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - tau
  if now < allow_at then
    local count = tonumber(redis.call("GET", ukey) or 0)
    return {0, 0, tat - now, allow_at - now, count}
  end
  reset = new_tat - now
  remaining = math.floor((tau - reset) / interval)
  redis.call("SET", KEYS[1], string.format("%d", new_tat), "PX", math.ceil(reset / 1000))
end

local count = redis.call("INCR", ukey)
if count == 1 then redis.call("EXPIRE", ukey, ARGV[6]) end
return {1, remaining, reset, 0, count}
`)

// usageScript reads the counter of the month Redis TIME falls in.
//
//	KEYS[1..3]  usage counters of the previous, current, next month by the replica's clock
//	ARGV[1..3]  yyyymm of KEYS[1..3]
//	ARGV[4]     "" (use Redis TIME) or now in µs (tests only)
var usageScript = redis.NewScript(luaPrelude + `
local ukey = usage_key(now_us(ARGV[4]), 1, 1)
if not ukey then return redis.error_reply(skew_error) end
return tonumber(redis.call("GET", ukey) or 0)
`)

// RedisMeter is a [Meter] whose state lives in Redis, so every replica
// shares each key's limit and counter. Each Admit is one EVALSHA of one
// script. Create it with [NewRedis]; it is safe for concurrent use.
type RedisMeter struct {
	rdb rediser
	p   params

	// clientNow is the replica's clock, used only to name the candidate
	// usage counters. Nil means time.Now.
	clientNow func() time.Time
	// serverNow, when set, replaces Redis TIME inside the scripts. Tests
	// only; nil in production.
	serverNow func() time.Time

	eventStream string
	eventMaxLen int64 // < 0: events off

	// offset is Redis TIME minus the replica's clock (see scriptDeadline).
	offset clockOffset
}

// NewRedis returns a meter backed by client, which may be a single node,
// Sentinel or Cluster client and must not be nil. See [Options] for the
// defaults; opts.Now is ignored, because the clock is Redis TIME.
func NewRedis(client redis.UniversalClient, opts Options) *RedisMeter {
	if client == nil {
		panic("metering: NewRedis with a nil client")
	}
	m := &RedisMeter{rdb: client, p: opts.resolve(), eventStream: opts.EventStream, eventMaxLen: opts.EventMaxLen}
	if m.eventStream == "" {
		m.eventStream = DefaultEventStream
	}
	if m.eventMaxLen == 0 {
		m.eventMaxLen = DefaultEventMaxLen
	}
	return m
}

// Admit checks keyID's rate limit and, when allowed, counts the call, in
// one atomic script. Redis failures are returned wrapped with
// [ErrUnavailable]; the call is then neither admitted nor counted.
func (m *RedisMeter) Admit(ctx context.Context, keyID string) (Decision, error) {
	if !validKeyID(keyID) {
		return Decision{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	usageKeys, periods := m.candidates(keyID)
	keys := []string{rateKey(keyID), usageKeys[0], usageKeys[1], usageKeys[2]}
	args := []any{
		m.p.interval, m.p.tau,
		periods[0], periods[1], periods[2],
		int64(UsageTTL / time.Second),
		m.serverClock(),
	}
	r, err := admitScript.Run(ctx, m.rdb, keys, args...).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("%w: admitting key_id %s: %w", ErrUnavailable, keyID, err)
	}
	if len(r) != 5 {
		return Decision{}, fmt.Errorf("%w: admitting key_id %s: script returned %d values, want 5", ErrUnavailable, keyID, len(r))
	}
	v := verdict{allowed: r[0] == 1, remaining: r[1], reset: r[2], retryAfter: r[3]}
	return m.p.decision(v, r[4]), nil
}

// Usage returns keyID's counter for the current calendar month (UTC, by
// Redis TIME). Redis failures are wrapped with [ErrUnavailable].
func (m *RedisMeter) Usage(ctx context.Context, keyID string) (int64, error) {
	if !validKeyID(keyID) {
		return 0, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	usageKeys, periods := m.candidates(keyID)
	n, err := usageScript.Run(ctx, m.rdb, usageKeys[:], periods[0], periods[1], periods[2], m.serverClock()).Int64()
	if err != nil {
		return 0, fmt.Errorf("%w: reading usage of key_id %s: %w", ErrUnavailable, keyID, err)
	}
	return n, nil
}

// Ping reports whether Redis answers, for a readiness probe. Failures are
// wrapped with [ErrUnavailable].
func (m *RedisMeter) Ping(ctx context.Context) error {
	if err := m.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// candidates returns the usage counters of the previous, current and next
// month by the replica's clock, and their yyyymm.
func (m *RedisMeter) candidates(keyID string) (keys, periods [3]string) {
	now := time.Now
	if m.clientNow != nil {
		now = m.clientNow
	}
	t := now()
	for i := range 3 {
		periods[i] = period(monthStart(t, i-1))
		keys[i] = usageKey(keyID, monthStart(t, i-1))
	}
	return keys, periods
}

// serverClock is the scripts' time argument: "" for Redis TIME, or the
// test override in µs.
func (m *RedisMeter) serverClock() string {
	if m.serverNow == nil {
		return ""
	}
	return strconv.FormatInt(m.serverNow().UnixMicro(), 10)
}
