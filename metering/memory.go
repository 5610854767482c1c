package metering

import (
	"context"
	"fmt"
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
	p   params
	now func() time.Time

	mu     sync.Mutex
	tat    map[string]int64     // keyID → theoretical arrival time, µs
	usage  map[usageEntry]int64 // admitted calls per key and month
	admits int                  // admissions since the last sweep
}

// usageEntry identifies one monthly counter.
type usageEntry struct {
	keyID  string
	period string // yyyymm
}

// NewMemory returns an in-memory meter. See [Options] for the defaults;
// opts.Now, when set, is its clock.
func NewMemory(opts Options) *MemoryMeter {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &MemoryMeter{
		p:     opts.resolve(),
		now:   now,
		tat:   make(map[string]int64),
		usage: make(map[usageEntry]int64),
	}
}

// Admit checks keyID's rate limit and, when allowed, counts the call. It
// fails only for an invalid keyID ([ErrInvalidKeyID]).
func (m *MemoryMeter) Admit(_ context.Context, keyID string) (Decision, error) {
	if !validKeyID(keyID) {
		return Decision{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	t := m.now()
	now := t.UnixMicro()
	entry := usageEntry{keyID: keyID, period: period(t)}

	m.mu.Lock()
	defer m.mu.Unlock()
	v := verdict{allowed: true}
	if m.p.interval > 0 {
		v = m.p.step(now, m.tat[keyID])
		if !v.allowed {
			return m.p.decision(v, m.usage[entry]), nil
		}
		m.tat[keyID] = v.tat
	}
	m.usage[entry]++
	count := m.usage[entry]
	if m.admits++; m.admits >= sweepEvery {
		m.sweep(t)
	}
	return m.p.decision(v, count), nil
}

// Usage returns keyID's counter for the current calendar month (UTC).
func (m *MemoryMeter) Usage(_ context.Context, keyID string) (int64, error) {
	if !validKeyID(keyID) {
		return 0, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	entry := usageEntry{keyID: keyID, period: period(m.now())}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage[entry], nil
}

// Ping reports readiness; a MemoryMeter is always ready.
func (m *MemoryMeter) Ping(context.Context) error { return nil }

// sweep forgets keys that are full again (a missing key is full) and
// counters older than last month, as Redis TTLs do for RedisMeter. The
// caller holds m.mu.
func (m *MemoryMeter) sweep(t time.Time) {
	m.admits = 0
	now := t.UnixMicro()
	for k, tat := range m.tat {
		if tat <= now {
			delete(m.tat, k)
		}
	}
	oldest := period(monthStart(t, -1))
	for e := range m.usage {
		if e.period < oldest {
			delete(m.usage, e)
		}
	}
}
