package metering

import "time"

// verdict is one GCRA step, all times in µs. The Lua script in redis.go
// performs exactly the same integer arithmetic; keep the two in step.
type verdict struct {
	allowed    bool
	remaining  int64
	reset      int64 // until fully recovered
	retryAfter int64 // > 0 only when refused
	tat        int64 // theoretical arrival time to store (unchanged when refused)
}

// step applies one call at time now (µs) to a key whose stored theoretical
// arrival time is tat (µs; 0 when the key has no state). Rate limiting must
// be enabled (p.interval > 0).
//
// The key is "full" while tat ≤ now. Each admitted call pushes tat one
// interval into the future; a call is refused when that would put tat more
// than tau (= Limit intervals) ahead of now. Hence Limit calls at once from
// full, then one per interval.
func (p params) step(now, tat int64) verdict {
	if tat < now {
		tat = now
	}
	newTAT := tat + p.interval
	allowAt := newTAT - p.tau
	if now < allowAt {
		return verdict{reset: tat - now, retryAfter: allowAt - now, tat: tat}
	}
	reset := newTAT - now
	return verdict{
		allowed:   true,
		remaining: (p.tau - reset) / p.interval,
		reset:     reset,
		tat:       newTAT,
	}
}

// decision turns a verdict and the period counter into a Decision.
func (p params) decision(v verdict, count int64) Decision {
	return Decision{
		Allowed:    v.allowed,
		Limit:      p.limit,
		Remaining:  v.remaining,
		Reset:      micros(v.reset),
		RetryAfter: micros(v.retryAfter),
		Count:      count,
	}
}

// micros converts a count of microseconds into a Duration.
func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
