package metering

import (
	"context"
	"errors"
	"time"
)

// Defaults applied by [NewRedis] and [NewMemory] to zero [Options] fields.
const (
	// DefaultLimit is the number of calls a key may make per window.
	DefaultLimit = 100
	// DefaultWindow is the length of the rate-limit window.
	DefaultWindow = 60 * time.Second
)

// DayUsageTTL is how long a daily usage counter lives after its first
// call: 3 days, so that yesterday's counter stays readable all of today.
const DayUsageTTL = 3 * 24 * time.Hour

// UsageTTL is how long a monthly usage counter lives after its first call:
// 62 days, so that it outlives its own month and all of the next one.
const UsageTTL = 62 * 24 * time.Hour

var (
	// ErrUnavailable wraps every failure of the metering store (Redis
	// unreachable, timed out, script error). The call was neither admitted
	// nor counted; the caller answers 503 or fails open by policy.
	ErrUnavailable = errors.New("metering: store unavailable")
	// ErrInvalidKeyID is returned for an empty keyID or one containing '{'
	// or '}', which would break the Redis hash tag.
	ErrInvalidKeyID = errors.New("metering: invalid key id")
)

// Decision is the outcome of one admission. Its fields feed the
// RateLimit-* and Retry-After response headers.
type Decision struct {
	// Allowed reports whether the call may proceed; only allowed calls are
	// counted.
	Allowed bool
	// Limit is the number of calls allowed per window (also the burst).
	// Zero when rate limiting is disabled (Options.Limit = -1); then
	// Remaining, Reset and RetryAfter are zero too and the rate-limit
	// headers should be left out.
	Limit int64
	// Remaining is the number of further calls that would be admitted right
	// now, after this one; 0 when refused.
	Remaining int64
	// Reset is the time until the key's allowance has fully recovered
	// (Remaining would be Limit again); at most the window.
	Reset time.Duration
	// RetryAfter is set only when refused: the exact time until the next
	// call would be admitted, greater than 0 and at most Window/Limit (as
	// long as Options did not change since the key's last call).
	RetryAfter time.Duration
	// Count is the key's counter for the current calendar month (UTC) after
	// this call: including it when allowed, unchanged when refused. For
	// AdmitCall it counts cost units, not calls.
	Count int64

	// The fields below are set only by AdmitCall (plan-aware admission);
	// Admit leaves them zero. For AdmitCall, Limit, Remaining and Reset
	// describe the limit named by Policy (a rate limit or a quota), and
	// Limit is zero only when the plan has no limit at all.

	// Plan names the plan the call was checked against.
	Plan string
	// Cost is the number of units added to the quota and usage counters:
	// the call's cost when allowed, 0 when refused.
	Cost int64
	// Policy names the limit the RateLimit headers should describe: when
	// refused, the refusing limit with the longest RetryAfter (the first
	// in the plan's order among equals: rate limits by window, then day,
	// then month); when allowed, the limit with the fewest calls or units
	// remaining (among equals the one with the longer Reset). It is one of
	// LimitPerSecond, LimitPerMinute, LimitPerHour, QuotaDay, QuotaMonth
	// (or the name of a [PlansFromOptions] limit); "" without limits.
	Policy string
	// Window is the length of Policy's window: the rate limit's Window, or
	// the length of the quota's current calendar period (24 h, or the
	// month's days).
	Window time.Duration
	// RefusedBy names the limit that refused the call (the same as Policy
	// then); "" when allowed. A quota refusal's RetryAfter runs to the end
	// of the quota's period.
	RefusedBy string
	// At is the time of the admission: Redis TIME for RedisMeter, the clock
	// for MemoryMeter, the replica's clock for a Degraded admission, in
	// UTC. Refund uses it to find the periods that were charged.
	At time.Time
	// Degraded is set on calls an [OutageMeter] admitted under fail_open
	// while the store was down: no limit was checked, Limit is 0 (leave the
	// rate-limit headers out) and the cost is counted in a local buffer
	// until Redis answers again.
	Degraded bool
}

// Meter admits or refuses one tools/call for a key, counting admitted calls.
// [RedisMeter] and [MemoryMeter] implement it.
type Meter interface {
	// Admit checks the key's rate limit and, when allowed, counts the call,
	// atomically. keyID is a short hash of the key, never the key itself.
	Admit(ctx context.Context, keyID string) (Decision, error)
}

// Compile-time checks that both implementations satisfy Meter.
var (
	_ Meter = (*RedisMeter)(nil)
	_ Meter = (*MemoryMeter)(nil)
)

// Options configures a meter. The zero value means 100 calls per 60 s.
type Options struct {
	// Limit is the number of calls one key may make per Window, and also the
	// burst: an idle key may make Limit calls at once. Zero means
	// DefaultLimit (100); -1 (any negative value) disables rate limiting, so
	// every call is admitted and counted.
	Limit int64
	// Window is the period over which Limit applies; one call is regained
	// every Window/Limit. Zero or negative means DefaultWindow (60 s).
	Window time.Duration
	// Now returns the current time for MemoryMeter, for tests with a
	// controlled clock. Nil means time.Now. RedisMeter ignores it: its clock
	// is Redis TIME.
	Now func() time.Time
	// EventStream is the Redis stream RecordEvent appends to. Empty means
	// DefaultEventStream ("restmcp:events"). MemoryMeter ignores it.
	EventStream string
	// EventMaxLen caps the event stream: XADD trims it to about this many
	// entries (MAXLEN ~, so Redis may keep up to one macro node more, by
	// default 100 entries). Zero means DefaultEventMaxLen (1,000,000); -1
	// (any negative value) turns events off, and RecordEvent does nothing.
	// MemoryMeter keeps at most min(EventMaxLen, MemoryEventMax) events.
	EventMaxLen int64
}

// params is Options resolved into the integers the algorithm works with.
type params struct {
	limit    int64 // burst and calls per window; 0 = rate limiting disabled
	interval int64 // emission interval Window/Limit, µs, ≥ 1 (0 when disabled)
	tau      int64 // tolerance interval*limit, µs: how far TAT may run ahead of now
}

// resolve applies the defaults and precomputes the GCRA parameters.
func (o Options) resolve() params {
	limit := o.Limit
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 0:
		return params{}
	}
	window := o.Window
	if window <= 0 {
		window = DefaultWindow
	}
	interval := window.Microseconds() / limit
	if interval < 1 {
		interval = 1
	}
	return params{limit: limit, interval: interval, tau: interval * limit}
}

// validKeyID reports whether keyID can be placed inside a Redis hash tag.
func validKeyID(keyID string) bool {
	if keyID == "" {
		return false
	}
	for i := 0; i < len(keyID); i++ {
		if keyID[i] == '{' || keyID[i] == '}' {
			return false
		}
	}
	return true
}
