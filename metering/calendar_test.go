package metering

import (
	"slices"
	"testing"
	"time"
)

// TestPlanKeysAndCalendar: an admission's keys, in the script's order (the
// candidate months' hashes by the replica's clock, then each sliding log),
// and the months' boundaries; the calendar is made once a month and made
// anew when the month changes either way, a year's end included.
func TestPlanKeysAndCalendar(t *testing.T) {
	now := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	m := &RedisMeter{clientNow: func() time.Time { return now }}
	plans := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 5, per_hour: 100}\n"+
		"  s:\n    rate_limits: {per_second: 5, per_hour: 100, algorithm: sliding_window}\n")
	months := []string{"restmcp:{abc123}:month:202611", "restmcp:{abc123}:month:202612", "restmcp:{abc123}:month:202701"}
	if keys, _ := m.planKeys("abc123", plans.Plan("s")); !slices.Equal(keys, append(months, "restmcp:{abc123}:rl:sw1s", "restmcp:{abc123}:rl:sw3600s")) {
		t.Fatalf("keys of a sliding-window plan\n%q", keys)
	}
	p := plans.Plan("p")
	keys, cal := m.planKeys("abc123", p)
	if !slices.Equal(keys, months) { // GCRA's states live in the month hash
		t.Fatalf("keys\n%q\nwant\n%q", keys, months)
	}
	us := func(y int, mo time.Month) int64 { return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).UnixMicro() }
	wantArgs := [4]any{us(2026, 11), us(2026, 12), us(2027, 1), us(2027, 2)}
	if cal.args != wantArgs {
		t.Fatalf("boundaries %v, want %v", cal.args, wantArgs)
	}
	now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, again := m.planKeys("abc123", p); again != cal {
		t.Fatal("a second calendar the same month")
	}
	now = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	keys, next := m.planKeys("abc123", p)
	if next == cal || keys[1] != "restmcp:{abc123}:month:202701" || keys[0] != "restmcp:{abc123}:month:202612" {
		t.Fatalf("the next month: same calendar %v, keys %q", next == cal, keys)
	}
	now = now.Add(-time.Second) // the clock went back
	if _, back := m.planKeys("abc123", p); back == next || back.args != wantArgs {
		t.Fatalf("the clock back a month: same calendar %v, boundaries %v", back == next, back.args)
	}
}
