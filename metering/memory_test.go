package metering

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemorySweep checks that a MemoryMeter forgets full rate limits and
// counters older than last month (and days older than the day before
// yesterday), as Redis TTLs do, without changing any answer.
func TestMemorySweep(t *testing.T) {
	clk := newFakeClock(testStart)
	m := NewMemory(Options{Now: clk.Now})
	p := PlansFromRateLimit(1<<20, time.Hour).Default()
	for _, id := range []string{"a", "b", "c"} {
		mustAdmitCall(t, m, rateCall(id, p))
	}
	clk.Advance(70 * 24 * time.Hour) // late January 2027: November is older than last month
	for range sweepEvery - 4 {
		mustAdmitCall(t, m, rateCall("busy", p))
	}
	// Each key has one rate state, a day and a month counter and a month of
	// per-tool counts.
	if len(m.rtat) != 4 || len(m.usage) != 8 || len(m.tools) != 4 {
		t.Fatalf("before the sweep: %d rate states, %d counters, %d tool hashes; want 4, 8, 4", len(m.rtat), len(m.usage), len(m.tools))
	}
	mustAdmitCall(t, m, rateCall("busy", p)) // the sweepEvery-th admission
	if len(m.rtat) != 1 || len(m.usage) != 2 || len(m.tools) != 1 {
		t.Errorf("after the sweep: %d rate states, %d counters, %d tool hashes; want 1, 2, 1 (only busy's)", len(m.rtat), len(m.usage), len(m.tools))
	}
	if d := mustAdmitCall(t, m, rateCall("a", p)); !d.Allowed || d.Remaining != 1<<20-1 || d.Count != 1 {
		t.Errorf("a after the sweep: got %+v, want allowed, full (Remaining 2^20-1), Count 1", d)
	}
}

// TestMemoryDefaultClock checks that a MemoryMeter without Options.Now uses
// the wall clock.
func TestMemoryDefaultClock(t *testing.T) {
	m := NewMemory(Options{})
	p := PlansFromRateLimit(0, 0).Default()
	before := time.Now()
	d := mustAdmitCall(t, m, rateCall("k", p))
	if !d.Allowed || d.Count != 1 || d.At.Before(before.Truncate(time.Microsecond)) || d.At.After(time.Now()) {
		t.Fatalf("got %+v, want allowed with Count 1, At now", d)
	}
	if n := monthUsed(t, m, "k", p); n != 1 {
		t.Errorf("month used = %d, want 1", n)
	}
	if err := m.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// TestMemoryWindowsOnSynctestClock: the in-memory meter's rate window and
// day quota on its default clock (time.Now), which synctest moves: a
// refusal's RetryAfter is exactly when the next call is admitted, and the
// day's quota starts again at midnight UTC.
func TestMemoryWindowsOnSynctestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory(Options{})
		p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 2}\n    quotas: {day: 5}\n").Plan("p")
		c := Call{KeyID: "k", Plan: p, Tool: "t", Cost: 1}
		for range 2 {
			if d := mustAdmitCall(t, m, c); !d.Allowed {
				t.Fatalf("within the rate limit: %+v", d)
			}
		}
		d := mustAdmitCall(t, m, c)
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
			t.Fatalf("a third call in the second: %+v; want refused, retry within a second", d)
		}
		time.Sleep(d.RetryAfter - time.Microsecond)
		if d := mustAdmitCall(t, m, c); d.Allowed {
			t.Fatalf("just before RetryAfter: %+v", d)
		}
		time.Sleep(time.Microsecond)
		if d := mustAdmitCall(t, m, c); !d.Allowed {
			t.Fatalf("at RetryAfter: %+v", d)
		}
		// 3 of the day's 5 used: 2 more, then the quota refuses until
		// midnight UTC.
		time.Sleep(time.Second)
		for range 2 {
			time.Sleep(time.Second)
			if d := mustAdmitCall(t, m, c); !d.Allowed {
				t.Fatalf("within the day's quota: %+v", d)
			}
		}
		time.Sleep(time.Second)
		now := time.Now().UTC()
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		if d := mustAdmitCall(t, m, c); d.Allowed || d.RetryAfter != midnight.Sub(now) {
			t.Fatalf("past the day's quota: %+v; want refused until midnight UTC, in %v", d, midnight.Sub(now))
		}
		time.Sleep(midnight.Sub(now))
		if d := mustAdmitCall(t, m, c); !d.Allowed {
			t.Fatalf("after midnight UTC: %+v", d)
		}
	})
}
