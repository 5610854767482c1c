package metering

import (
	"slices"
	"testing"
	"time"
)

// TestPlanKeysAndCalendar: an admission's keys, in the script's order,
// with the candidate periods of the replica's day; the calendar is made
// once a day and made anew when the day changes either way, a month's
// end included.
func TestPlanKeysAndCalendar(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	m := &RedisMeter{clientNow: func() time.Time { return now }}
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 5, per_hour: 100}\n").Plan("p")
	keys, cal := m.planKeys("abc123", p)
	want := []string{"restmcp:{abc123}:rl:1s", "restmcp:{abc123}:rl:3600s",
		"restmcp:{abc123}:usage:20261129", "restmcp:{abc123}:usage:20261130", "restmcp:{abc123}:usage:20261201",
		"restmcp:{abc123}:usage:202610", "restmcp:{abc123}:usage:202611", "restmcp:{abc123}:usage:202612",
		"restmcp:{abc123}:tools:202610", "restmcp:{abc123}:tools:202611", "restmcp:{abc123}:tools:202612"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys\n%q\nwant\n%q", keys, want)
	}
	us := func(y int, mo time.Month, d int) int64 { return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).UnixMicro() }
	wantDays := [4]int64{us(2026, 11, 29), us(2026, 11, 30), us(2026, 12, 1), us(2026, 12, 2)}
	wantMonths := [4]int64{us(2026, 10, 1), us(2026, 11, 1), us(2026, 12, 1), us(2027, 1, 1)}
	wantArgs := [8]any{}
	for i := range 4 {
		wantArgs[i], wantArgs[4+i] = wantDays[i], wantMonths[i]
	}
	if cal.args != wantArgs {
		t.Fatalf("boundaries %v, want %v", cal.args, wantArgs)
	}
	now = now.Add(-time.Hour)
	if _, again := m.planKeys("abc123", p); again != cal {
		t.Fatal("a second calendar the same day")
	}
	now = now.Add(time.Hour + time.Second) // 2026-12-01 00:00:00
	keys, next := m.planKeys("abc123", p)
	if next == cal || keys[3] != "restmcp:{abc123}:usage:20261201" || keys[6] != "restmcp:{abc123}:usage:202612" {
		t.Fatalf("the next day: same calendar %v, keys %q", next == cal, keys)
	}
	now = now.Add(-time.Second) // the clock went back
	if _, back := m.planKeys("abc123", p); back == next || back.args != wantArgs {
		t.Fatalf("the clock back a day: same calendar %v, boundaries %v", back == next, back.args)
	}
}
