package metering

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
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

// luaPrelude holds what the admission and report scripts share: the clock
// and the choice of the calendar month.
//
// A month hash's key must be passed in KEYS (Redis Cluster requires
// scripts to declare their keys), but the month must come from Redis TIME,
// not from the replica's clock. So the client passes the hashes of the
// previous, current and next month by its own clock, with the months'
// boundaries in ARGV, and the script picks the one that Redis TIME falls
// in. A replica clock more than a month off makes the script fail instead
// of counting in the wrong month.
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

-- pick returns i (0..2) such that ARGV[a+i] <= now < ARGV[a+i+1]: which
-- of three consecutive candidate periods, given by their boundaries in µs,
-- holds now; nil when none does.
local function pick(now, a)
  for i = 0, 2 do
    if tonumber(ARGV[a + i]) <= now and now < tonumber(ARGV[a + i + 1]) then return i end
  end
  return nil
end

-- day_of returns the day of the month ("01".."31") of now, for the month
-- starting at start (µs); a UTC day is 86,400 s of Unix time.
local function day_of(now, start)
  return string.format("%02d", math.floor((now - start) / 86400000000) + 1)
end

local skew_error = "ERR restmcp: replica clock and Redis TIME are more than a month apart"
`

// luaMonth holds what every script that touches a month hash shares.
//
// The month hash restmcp:{keyID}:month:<yyyymm> holds one caller's usage
// in one calendar month (UTC): "m" the month's cost units, "d:<dd>" each
// day's, "cost:<tool>" and "calls:<tool>" per tool, and "rl:<window>" each
// GCRA rate limit's state. Every hash a script creates holds "m". Keeping
// them in one hash makes an admission one HMGET and one HSET instead of a
// command per counter and limit (docs/operations.md, "Redis key layout").
//
// Before this layout, the same counts lived in separate keys:
// usage:<yyyymm>, usage:<yyyymmdd>, tools:<yyyymm> and rl:<window>. A
// month hash that does not exist yet starts from what those keys hold
// (open_month), and a GCRA state the hash lacks starts from the earlier
// key's (carried), so an upgrade loses no count. The earlier keys are only
// read, and expire on their own.
const luaMonth = `
-- base_of returns "restmcp:{keyID}:" of a month hash's key.
local function base_of(h) return string.sub(h, 1, -13) end

-- earlier returns the month hash h as the earlier layout's keys hold it:
-- a flat field/value list with "m" first.
local function earlier(h)
  local base, ym = base_of(h), string.sub(h, -6)
  local flat = {"m", redis.call("GET", base .. "usage:" .. ym) or "0"}
  local days = {}
  for d = 1, 31 do days[d] = base .. "usage:" .. ym .. string.format("%02d", d) end
  local dv = redis.call("MGET", unpack(days))
  for d = 1, 31 do
    if dv[d] then flat[#flat + 1] = string.format("d:%02d", d); flat[#flat + 1] = dv[d] end
  end
  local t = redis.call("HGETALL", base .. "tools:" .. ym)
  for i = 1, #t do flat[#flat + 1] = t[i] end
  return flat
end

-- open_month makes sure the month hash h exists, starting it from the
-- earlier layout's keys with a TTL of ttl s. With must false, a hash that
-- neither layout holds is not made, and it returns false.
local function open_month(h, ttl, must)
  if redis.call("HEXISTS", h, "m") == 1 then return true end
  local flat = earlier(h)
  if not must and #flat == 2 and flat[2] == "0" then return false end
  for i = 1, #flat, 1000 do -- unpack puts every value on Lua's stack
    redis.call("HSET", h, unpack(flat, i, math.min(i + 999, #flat)))
  end
  redis.call("EXPIRE", h, ttl)
  return true
end

-- carried returns a GCRA state (µs) that the month hash lacks: the later
-- of the earlier layout's key's and the previous month hash's (prev, nil
-- when it is not among the keys), or 0.
local function carried(base, prev, field)
  local tat = tonumber(redis.call("GET", base .. field) or 0)
  if prev then
    local p = tonumber(redis.call("HGET", prev, field) or 0)
    if p > tat then tat = p end
  end
  return tat
end
`

// RedisMeter is a [Meter] whose state lives in Redis, so every replica
// shares each key's limits and counters. Each AdmitCall is one EVALSHA of
// one script. Create it with [NewRedis]; it is safe for concurrent use.
type RedisMeter struct {
	rdb rediser

	// clientNow is the replica's clock, used only to name the candidate
	// month hashes. Nil means time.Now.
	clientNow func() time.Time
	// serverNow, when set, replaces Redis TIME inside the scripts. Tests
	// only; nil in production.
	serverNow func() time.Time

	eventStream string
	eventMaxLen int64 // < 0: events off

	// offset is Redis TIME minus the replica's clock (see scriptDeadline).
	offset clockOffset

	// readTimeout bounds every script deadline (deadline.go).
	readTimeout time.Duration

	// admits sends concurrent calls' admissions together (batch.go).
	admits admitBatcher

	// cal is the calendar of the last day admitted in (calendar.go).
	cal atomic.Pointer[calendar]

	// journal keeps the counter writes each Cluster master acknowledged
	// until its replicas have them (replication.go); nil elsewhere.
	journal *replJournal
}

// NewRedis returns a meter backed by client, which may be a single node,
// Sentinel or Cluster client and must not be nil. See [Options] for the
// defaults; opts.Now is ignored, because the clock is Redis TIME.
func NewRedis(client redis.UniversalClient, opts Options) *RedisMeter {
	if client == nil {
		panic("metering: NewRedis with a nil client")
	}
	m := &RedisMeter{rdb: client, eventStream: opts.EventStream, eventMaxLen: opts.EventMaxLen, readTimeout: clientReadTimeout(client)}
	if m.eventStream == "" {
		m.eventStream = DefaultEventStream
	}
	if m.eventMaxLen == 0 {
		m.eventMaxLen = DefaultEventMaxLen
	}
	if _, ok := client.(*redis.ClusterClient); ok {
		m.journal = &replJournal{}
	}
	return m
}

// Ping reports whether Redis answers, for a readiness probe. Failures are
// wrapped with [ErrUnavailable].
func (m *RedisMeter) Ping(ctx context.Context) error {
	if err := m.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// serverClock is the scripts' time argument: "" for Redis TIME, or the
// test override in µs.
func (m *RedisMeter) serverClock() string {
	if m.serverNow == nil {
		return ""
	}
	return strconv.FormatInt(m.serverNow().UnixMicro(), 10)
}
