package metering

import (
	"errors"
	"time"
)

// Defaults of [PlansFromRateLimit], the implicit plan of a deployment
// without a plans file.
const (
	// DefaultLimit is the number of calls a key may make per window.
	DefaultLimit = 100
	// DefaultWindow is the length of the rate-limit window.
	DefaultWindow = 60 * time.Second
)

// UsageTTL is how long a month's usage (its month hash in Redis: the
// month's and each day's units, the per-tool counts and the rate limits'
// states) lives after its first call: 62 days, so that it outlives its own
// month and all of the next one.
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

// Decision is a [Meter]'s answer for one call. Limit, Remaining, Reset,
// Policy and Window describe the most restrictive limit and feed the
// RateLimit and Retry-After response headers; a Decision with Limit 0 and
// no Policy has none to report (the plan has no limits, or the call was
// admitted while the store was down) and the headers are left out.
type Decision struct {
	// Allowed reports whether the call may proceed; only allowed calls are
	// counted.
	Allowed bool
	// Limit is the calls (rate limit) or cost units (quota) per Window of
	// the limit named by Policy; 0 when the plan has no limit.
	Limit int64
	// Remaining is what is left of Limit after this call; 0 when refused.
	Remaining int64
	// Reset is the time until the limit has fully recovered (rate limit)
	// or its period ends (quota).
	Reset time.Duration
	// RetryAfter is set only when refused: the exact time until the call
	// would be admitted (the longest over the refusing limits; for a quota,
	// the end of its period).
	RetryAfter time.Duration
	// Count is the key's cost units this calendar month (UTC) after this
	// call: including it when allowed, unchanged when refused.
	Count int64
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
	// (or the name of a [PlansFromRateLimit] limit); "" without limits.
	Policy string
	// Window is the length of Policy's window: the rate limit's Window, or
	// the length of the quota's current calendar period (24 h, or the
	// month's days).
	Window time.Duration
	// RefusedBy names the limit that refused the call (the same as Policy
	// then); "" when allowed.
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

	// ref names the call's record in Redis (settle.go), by which Refund
	// undoes exactly this call, once; zero for MemoryMeter and Degraded
	// admissions.
	ref callRef
}

// Options configures a meter; the zero value is ready to use.
type Options struct {
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

// params are one GCRA rate limit's integers.
type params struct {
	limit    int64 // burst and calls per window
	interval int64 // emission interval window/limit, µs, ≥ 1
	tau      int64 // tolerance interval*limit, µs: how far TAT may run ahead of now
}

// gcra precomputes the GCRA parameters of limit calls per window, both
// positive.
func gcra(limit int64, window time.Duration) params {
	interval := max(window.Microseconds()/limit, 1)
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
