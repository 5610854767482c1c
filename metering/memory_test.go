package metering

import (
	"context"
	"testing"
	"time"
)

// TestMemorySweep checks that a MemoryMeter forgets full keys and counters
// older than last month, as Redis TTLs do, without changing any answer.
func TestMemorySweep(t *testing.T) {
	clk := newFakeClock(testStart)
	m := NewMemory(Options{Limit: 1 << 20, Window: time.Hour, Now: clk.Now})
	for _, id := range []string{"a", "b", "c"} {
		mustAdmit(t, m, id)
	}
	clk.Advance(70 * 24 * time.Hour) // late January 2027: November is older than last month
	for range sweepEvery - 4 {
		mustAdmit(t, m, "busy")
	}
	if len(m.tat) != 4 || len(m.usage) != 4 {
		t.Fatalf("before the sweep: %d rate states, %d counters; want 4, 4", len(m.tat), len(m.usage))
	}
	mustAdmit(t, m, "busy") // the sweepEvery-th admission
	if len(m.tat) != 1 || len(m.usage) != 1 {
		t.Errorf("after the sweep: %d rate states, %d counters; want 1, 1 (only busy's)", len(m.tat), len(m.usage))
	}
	if d := mustAdmit(t, m, "a"); !d.Allowed || d.Remaining != 1<<20-1 || d.Count != 1 {
		t.Errorf("a after the sweep: got %+v, want allowed, full (Remaining 2^20-1), Count 1", d)
	}
}

// TestMemoryDefaultClock checks that a MemoryMeter without Options.Now uses
// the wall clock.
func TestMemoryDefaultClock(t *testing.T) {
	m := NewMemory(Options{})
	if d := mustAdmit(t, m, "k"); !d.Allowed || d.Count != 1 {
		t.Fatalf("got %+v, want allowed with Count 1", d)
	}
	if n := mustUsage(t, m, "k"); n != 1 {
		t.Errorf("Usage = %d, want 1", n)
	}
	if err := m.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
