package metering

import (
	"context"
	"fmt"
	"time"
)

// AdmitCall is [RedisMeter.AdmitCall] in memory, with the same arithmetic
// and answers, on the meter's clock (Options.Now). It fails only for an
// invalid call.
func (m *MemoryMeter) AdmitCall(_ context.Context, c Call) (Decision, error) {
	if err := c.validate(); err != nil {
		return Decision{}, err
	}
	now := m.now().UnixMicro()
	t := time.UnixMicro(now).UTC()
	day, month := usageEntry{c.KeyID, dayPeriod(t)}, usageEntry{c.KeyID, period(t)}

	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.state(c.KeyID, c.Plan, now, day, month)
	ok := s.allows(c.Plan, c.Cost)
	if ok {
		for i, rl := range c.Plan.RateLimits {
			e := rateEntry{c.KeyID, rl.tag}
			if rl.Sliding {
				m.rlog[e] = append(m.rlog[e], now)
				continue
			}
			m.rtat[e] = now + s.rel[i] + rl.p.interval
		}
		if c.Cost > 0 {
			m.usage[day] += c.Cost
			m.usage[month] += c.Cost
		}
		h := m.tools[month]
		if h == nil {
			h = make(map[string]int64)
			m.tools[month] = h
		}
		h["calls:"+c.Tool]++
		if c.Cost > 0 {
			h["cost:"+c.Tool] += c.Cost
		}
		if m.admits++; m.admits >= sweepEvery {
			m.sweep(t)
		}
	}
	d := decide(c, s, ok)
	if ok {
		d.ref = callRef{id: nonce()}
	}
	return d, nil
}

// state reads a call's state; the caller holds m.mu.
func (m *MemoryMeter) state(keyID string, plan *Plan, now int64, day, month usageEntry) callState {
	n := len(plan.RateLimits)
	s := callState{now: now, rel: make([]int64, n), aux: make([]int64, n), dayUsed: m.usage[day], monthUsed: m.usage[month]}
	for i, rl := range plan.RateLimits {
		e := rateEntry{keyID, rl.tag}
		if rl.Sliding {
			// The calls of (now - Window, now], as the script counts them.
			log, from := m.rlog[e], now-rl.Window.Microseconds()
			k := 0
			for k < len(log) && log[k] <= from {
				k++
			}
			log = log[k:]
			m.rlog[e] = log
			s.rel[i] = int64(len(log))
			if len(log) > 0 {
				s.aux[i] = log[0] + rl.Window.Microseconds() - now
			}
			continue
		}
		if tat := m.rtat[e]; tat > now {
			s.rel[i] = tat - now
		}
	}
	return s
}

// Refund is [RedisMeter.Refund] in memory.
func (m *MemoryMeter) Refund(_ context.Context, c Call, d Decision) error {
	if !d.Allowed || d.Degraded {
		return nil
	}
	if !validKeyID(c.KeyID) {
		return fmt.Errorf("%w: %q", ErrInvalidKeyID, c.KeyID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if d.ref.id != "" { // once per call, as RedisMeter refunds by the call's record
		if _, done := m.refunded[d.ref.id]; done {
			return nil
		}
		m.refunded[d.ref.id] = m.now().UnixMicro()
	}
	m.adjust(c.KeyID, c.Tool, d.At, -d.Cost, -1)
	return nil
}

// adjust is adjustScript in memory; the caller holds m.mu.
func (m *MemoryMeter) adjust(keyID, tool string, at time.Time, cost, calls int64) {
	add := func(get func() (int64, bool), set func(int64), delta int64) {
		v, ok := get()
		if delta == 0 || (delta < 0 && !ok) {
			return
		}
		set(max(v+delta, 0))
	}
	for _, e := range []usageEntry{{keyID, dayPeriod(at)}, {keyID, period(at)}} {
		add(func() (int64, bool) { v, ok := m.usage[e]; return v, ok }, func(v int64) { m.usage[e] = v }, cost)
	}
	month := usageEntry{keyID, period(at)}
	for _, f := range []struct {
		field string
		delta int64
	}{{"cost:" + tool, cost}, {"calls:" + tool, calls}} {
		add(func() (int64, bool) { v, ok := m.tools[month][f.field]; return v, ok }, func(v int64) {
			if m.tools[month] == nil {
				m.tools[month] = make(map[string]int64)
			}
			m.tools[month][f.field] = v
		}, f.delta)
	}
}

// Report is [RedisMeter.Report] in memory.
func (m *MemoryMeter) Report(_ context.Context, keyID string, plan *Plan) (Report, error) {
	if !validKeyID(keyID) {
		return Report{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	now := m.now().UnixMicro()
	t := time.UnixMicro(now).UTC()
	month := usageEntry{keyID, period(t)}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.state(keyID, plan, now, usageEntry{keyID, dayPeriod(t)}, month)
	tools := make(map[string]int64, len(m.tools[month]))
	for f, v := range m.tools[month] {
		tools[f] = v
	}
	return buildReport(keyID, plan, s, tools), nil
}

// RecordEvents records events in order, as RecordEvent does.
func (m *MemoryMeter) RecordEvents(ctx context.Context, events []Event) error {
	for _, e := range events {
		if err := m.RecordEvent(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// RecordEvent keeps e among the latest min(Options.EventMaxLen,
// MemoryEventMax) events; a zero e.Time is the meter's clock. It never
// fails.
func (m *MemoryMeter) RecordEvent(_ context.Context, e Event) error {
	if e.Time.IsZero() {
		e.Time = m.now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ev.add(e)
	return nil
}

// Events returns the events kept by RecordEvent, oldest first.
func (m *MemoryMeter) Events() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ev.list()
}

// ring keeps the latest max events.
type ring struct {
	max  int
	buf  []Event
	next int // index of the oldest once buf is full
}

func (r *ring) add(e Event) {
	switch {
	case r.max == 0:
	case len(r.buf) < r.max:
		r.buf = append(r.buf, e)
	default:
		r.buf[r.next] = e
		r.next = (r.next + 1) % r.max
	}
}

func (r *ring) list() []Event {
	out := make([]Event, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
