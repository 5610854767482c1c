package metering

import (
	"context"
	"sync"
	"time"
)

// sweepEvery is how many admissions a MemoryMeter makes between sweeps of
// state that no longer matters (full keys, counters of past months).
const sweepEvery = 4096

// MemoryMeter is a [Meter] that keeps its state in process memory, behind
// one mutex. It gives the same answers as [RedisMeter] for the same calls
// at the same times, but counts only what this process admits: use it for
// tests, demos and single-replica deployments. Create it with [NewMemory];
// it is safe for concurrent use.
type MemoryMeter struct {
	now func() time.Time

	mu     sync.Mutex
	usage  map[usageEntry]int64            // cost units per key and month or day
	admits int                             // admissions since the last sweep
	rtat   map[rateEntry]int64             // GCRA state per key and window, µs
	rlog   map[rateEntry][]int64           // sliding-window log per key and window: call times, µs, oldest first
	tools  map[usageEntry]map[string]int64 // per-tool hash per key and month: "calls:<tool>", "cost:<tool>"
	ev     ring                            // the latest events
	// refunded holds the ids of the calls refunded in the last
	// CallRecordTTL (µs of the refund), so a call is refunded once.
	refunded map[string]int64
}

// rateEntry identifies the GCRA state of one rate limit of one key, as
// Key(keyID, "rl", tag) does in Redis.
type rateEntry struct {
	keyID string
	tag   string
}

// usageEntry identifies one counter, as Key(keyID, "usage", period) does
// in Redis.
type usageEntry struct {
	keyID  string
	period string // yyyymm, or yyyymmdd for a day
}

// NewMemory returns an in-memory meter. See [Options] for the defaults;
// opts.Now, when set, is its clock.
func NewMemory(opts Options) *MemoryMeter {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	evMax := opts.EventMaxLen
	switch {
	case evMax == 0 || evMax > MemoryEventMax:
		evMax = MemoryEventMax
	case evMax < 0:
		evMax = 0
	}
	return &MemoryMeter{
		now:      now,
		usage:    make(map[usageEntry]int64),
		rtat:     make(map[rateEntry]int64),
		rlog:     make(map[rateEntry][]int64),
		tools:    make(map[usageEntry]map[string]int64),
		ev:       ring{max: int(evMax)},
		refunded: make(map[string]int64),
	}
}

// Ping reports readiness; a MemoryMeter is always ready.
func (m *MemoryMeter) Ping(context.Context) error { return nil }

// InMemory reports true: a MemoryMeter's calls never wait on a store, so
// a caller needs no deadline on them (the adapter sets none).
func (m *MemoryMeter) InMemory() bool { return true }

// sweep forgets keys that are full again (a missing key is full), monthly
// counters older than last month and daily counters older than the day
// before yesterday, as Redis TTLs do for RedisMeter. The caller holds
// m.mu.
func (m *MemoryMeter) sweep(t time.Time) {
	m.admits = 0
	now := t.UnixMicro()
	for k, tat := range m.rtat {
		if tat <= now {
			delete(m.rtat, k)
		}
	}
	for k, log := range m.rlog {
		// The longest window is an hour; a log whose last call is older
		// holds nothing any window counts.
		if len(log) == 0 || log[len(log)-1] <= now-time.Hour.Microseconds() {
			delete(m.rlog, k)
		}
	}
	oldest, oldestDay := period(monthStart(t, -1)), dayPeriod(dayStart(t, -2))
	for e := range m.usage {
		if (len(e.period) == len(oldest) && e.period < oldest) || (len(e.period) == len(oldestDay) && e.period < oldestDay) {
			delete(m.usage, e)
		}
	}
	for e := range m.tools {
		if e.period < oldest {
			delete(m.tools, e)
		}
	}
	for id, at := range m.refunded {
		if at <= now-CallRecordTTL.Microseconds() {
			delete(m.refunded, id)
		}
	}
}
