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

// luaPrelude holds what the scripts share: the clock and the choice of
// the calendar period.
//
// A counter's key must be passed in KEYS (Redis Cluster requires scripts to
// declare their keys), but the period must come from Redis TIME, not from
// the replica's clock. So the client passes the counters of the previous,
// current and next period by its own clock, with the periods' boundaries in
// ARGV, and the script picks the one that Redis TIME falls in. A replica
// clock more than a period off makes the script fail instead of counting
// in the wrong period.
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

local skew_error = "ERR restmcp: replica clock and Redis TIME are more than a day apart"
`

// RedisMeter is a [Meter] whose state lives in Redis, so every replica
// shares each key's limits and counters. Each AdmitCall is one EVALSHA of
// one script. Create it with [NewRedis]; it is safe for concurrent use.
type RedisMeter struct {
	rdb rediser

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

	// readTimeout bounds every script deadline (deadline.go).
	readTimeout time.Duration

	// admits sends concurrent calls' admissions together (batch.go).
	admits admitBatcher

	// cal is the calendar of the last day admitted in (calendar.go).
	cal atomic.Pointer[calendar]
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
