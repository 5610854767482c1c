package metering

import (
	"context"
	"fmt"
	"time"
)

// Call is one tools/call to admit under a plan.
type Call struct {
	// KeyID is the caller's key id ([KeyID]), never the key itself; the
	// adapter uses "anonymous" or "addr-<KeyID(address)>" for callers
	// without a key.
	KeyID string
	// Plan is the caller's plan; it must not be nil.
	Plan *Plan
	// Tool is the MCP tool name. It names the tool's entry in the per-tool
	// usage counters.
	Tool string
	// Cost is the number of quota units the call costs, normally
	// Plan.Cost(Tool, specCost); at least 0. A call of cost 0 is still
	// rate limited and counted per tool, but never refused by a quota.
	Cost int64
}

// validate checks c before any store access.
func (c Call) validate() error {
	switch {
	case !validKeyID(c.KeyID):
		return fmt.Errorf("%w: %q", ErrInvalidKeyID, c.KeyID)
	case c.Plan == nil:
		return fmt.Errorf("metering: call of %q for key_id %s without a plan", c.Tool, c.KeyID)
	case c.Cost < 0:
		return fmt.Errorf("metering: call of %q for key_id %s with negative cost %d", c.Tool, c.KeyID, c.Cost)
	}
	return nil
}

// Meter admits tools/calls under their plan (several rate limits, quotas
// and per-tool costs), refunds them, reads usage and records usage events.
// [RedisMeter], [MemoryMeter] and [OutageMeter] implement it; the adapter
// declares the subset it needs over the same value types.
type Meter interface {
	// AdmitCall checks every rate limit and quota of c.Plan and, when all
	// allow, applies them and counts c.Cost, atomically.
	AdmitCall(ctx context.Context, c Call) (Decision, error)
	// Refund gives back what an allowed call was charged (see
	// [Counting.Refunds]).
	Refund(ctx context.Context, c Call, d Decision) error
	// Report reads a key's usage under plan.
	Report(ctx context.Context, keyID string, plan *Plan) (Report, error)
	// RecordEvent appends one usage event for billing pipelines.
	RecordEvent(ctx context.Context, e Event) error
	// RecordEvents appends events in order, in one round trip to the
	// store where it has round trips.
	RecordEvents(ctx context.Context, events []Event) error
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
}

// Compile-time checks.
var (
	_ Meter = (*RedisMeter)(nil)
	_ Meter = (*MemoryMeter)(nil)
	_ Meter = (*OutageMeter)(nil)
)

// callState is what a store holds for one call before it is applied, in
// the form both implementations produce: the Lua script returns exactly
// these numbers, the memory meter reads them from its maps.
type callState struct {
	now       int64   // µs since the epoch
	rel       []int64 // per rate limit: max(TAT, now) - now, µs; for a Sliding one, the calls in the window
	aux       []int64 // per rate limit: for a Sliding one, µs until the oldest call in the window leaves it (0: none); else 0
	dayUsed   int64   // units used today before this call
	monthUsed int64   // units used this month before this call
}

// allows reports whether every limit of p lets a call of cost through in
// state s. It is the Lua script's test, term for term.
func (s callState) allows(p *Plan, cost int64) bool {
	for i, rl := range p.RateLimits {
		if rl.Sliding {
			if s.rel[i]+1 > rl.Limit {
				return false
			}
			continue
		}
		if s.rel[i]+rl.p.interval > rl.p.tau {
			return false
		}
	}
	if q := p.quota(PeriodDay); q >= 0 && s.dayUsed+cost > q {
		return false
	}
	if q := p.quota(PeriodMonth); q >= 0 && s.monthUsed+cost > q {
		return false
	}
	return true
}

// limitState is one limit's contribution to a Decision.
type limitState struct {
	name      string
	limit     int64
	remaining int64
	reset     int64 // µs until fully recovered (rate) or until the period ends (quota)
	window    time.Duration
	retry     int64 // µs until it would allow the call; 0 when it allows now
}

// slidingState is a sliding-window limit's contribution to a Decision:
// count calls are in the window before this one, and the oldest leaves it
// in oldest µs (0: the window is empty).
func slidingState(l limitState, rl RateLimit, count, oldest int64, allowed bool) limitState {
	window := rl.Window.Microseconds()
	switch {
	case count+1 > rl.Limit:
		l.retry, l.reset = oldest, oldest
	case allowed:
		l.remaining = rl.Limit - count - 1
		l.reset = oldest
		if count == 0 {
			l.reset = window // this call is the window's only one
		}
	default: // another limit refused: nothing was applied
		l.remaining = rl.Limit - count
		l.reset = oldest
	}
	return l
}

// decide turns a call's state into its Decision; allowed is the store's
// verdict, which must equal s.allows(c.Plan, c.Cost).
func decide(c Call, s callState, allowed bool) Decision {
	at := time.UnixMicro(s.now).UTC()
	d := Decision{Allowed: allowed, Plan: c.Plan.Name, At: at, Count: s.monthUsed}
	lims := make([]limitState, 0, len(c.Plan.RateLimits)+len(c.Plan.Quotas))
	for i, rl := range c.Plan.RateLimits {
		l := limitState{name: rl.Name, limit: rl.p.limit, window: rl.Window}
		if rl.Sliding {
			lims = append(lims, slidingState(l, rl, s.rel[i], s.aux[i], allowed))
			continue
		}
		newRel := s.rel[i] + rl.p.interval
		if newRel > rl.p.tau {
			l.reset, l.retry = s.rel[i], newRel-rl.p.tau
		} else {
			l.reset, l.remaining = newRel, (rl.p.tau-newRel)/rl.p.interval
			if !allowed { // nothing was applied: describe the state as it is
				l.reset, l.remaining = s.rel[i], (rl.p.tau-s.rel[i])/rl.p.interval
			}
		}
		lims = append(lims, l)
	}
	for _, q := range c.Plan.Quotas {
		used, start, end := s.dayUsed, dayStart(at, 0), dayStart(at, 1)
		name := QuotaDay
		if q.Period == PeriodMonth {
			used, start, end = s.monthUsed, monthStart(at, 0), monthStart(at, 1)
			name = QuotaMonth
		}
		l := limitState{name: name, limit: q.Limit, reset: end.UnixMicro() - s.now, window: end.Sub(start)}
		switch {
		case used+c.Cost > q.Limit:
			l.retry = l.reset
			l.remaining = max(q.Limit-used, 0)
		case allowed:
			l.remaining = q.Limit - used - c.Cost
		default:
			l.remaining = q.Limit - used
		}
		lims = append(lims, l)
	}

	best := -1
	for i, l := range lims {
		switch {
		case best < 0:
			best = i
		case !allowed: // every refusing limit has retry > 0
			if l.retry > lims[best].retry {
				best = i
			}
		case l.remaining < lims[best].remaining || (l.remaining == lims[best].remaining && l.reset > lims[best].reset):
			best = i
		}
	}
	if best >= 0 {
		l := lims[best]
		d.Policy, d.Limit, d.Remaining, d.Reset, d.Window = l.name, l.limit, l.remaining, micros(l.reset), l.window
	}
	if allowed {
		d.Cost = c.Cost
		d.Count = s.monthUsed + c.Cost
		return d
	}
	d.Remaining = 0
	d.RefusedBy = d.Policy
	d.RetryAfter = micros(lims[best].retry)
	return d
}

// micros converts a count of microseconds into a Duration.
func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// dayStart returns the first instant of the day (UTC) containing t,
// shifted by delta days.
func dayStart(t time.Time, delta int) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day()+delta, 0, 0, 0, 0, time.UTC)
}

// dayPeriod names the day (UTC) containing t as "yyyymmdd".
func dayPeriod(t time.Time) string { return t.UTC().Format("20060102") }

// monthKey is the month hash (redis.go, luaMonth) charged by a call of
// keyID at t.
func monthKey(keyID string, t time.Time) string { return Key(keyID, monthHash+period(t)) }
