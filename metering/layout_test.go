package metering

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// upgraded returns the test Redis, a fresh key id and a meter whose clocks
// stand at testStart (15 November 2026, 12:00 UTC), with what the layout
// before month hashes held for the key in November: the month's and two
// days' units, the per-tool hash and the per-minute limit's GCRA state,
// 20 s in debt.
func upgraded(t *testing.T) (*redis.Client, string, *RedisMeter) {
	t.Helper()
	c := testRedis(t)
	id := newKeyID(t, c)
	ctx := context.Background()
	for k, v := range map[string]string{"usage:202611": "40", "usage:20261115": "4", "usage:20261114": "9",
		"rl:60s": itoa(testStart.UnixMicro() + 20_000_000)} {
		if err := c.Set(ctx, Key(id, k), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.HSet(ctx, Key(id, "tools:202611"), "calls:q", "20", "cost:q", "40").Err(); err != nil {
		t.Fatal(err)
	}
	m := NewRedis(c, Options{})
	m.serverNow, m.clientNow = func() time.Time { return testStart }, func() time.Time { return testStart }
	return c, id, m
}

// TestMonthHashStartsFromEarlierKeys: a deployment that upgrades
// mid-month keeps every count and the rate limits' debt. A Report reads
// the earlier keys without writing; the first admission makes the month
// hash from them, then counts the call in it; the earlier keys are left as
// they were.
func TestMonthHashStartsFromEarlierKeys(t *testing.T) {
	c, id, m := upgraded(t)
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 2}\n    quotas: {day: 10, month: 100}\n").Plan("p")
	ctx := context.Background()

	r := mustReport(t, m, id, p)
	if got := [5]int64{r.Periods[0].Used, r.Periods[1].Used, r.Periods[1].Tools["q"].Calls, r.Periods[1].Tools["q"].Cost, r.RateLimits[0].Remaining}; got != [5]int64{4, 40, 20, 40, 1} {
		t.Errorf("Report before the first admission: day, month, calls, cost, remaining = %v, want [4 40 20 40 1]", got)
	}
	month := Key(id, "month:202611")
	if n := c.Exists(ctx, month).Val(); n != 0 {
		t.Fatalf("Report made %s", month)
	}

	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "q", Cost: 1}); !d.Allowed {
		t.Fatalf("first admission after the upgrade: %+v, want allowed", d)
	}
	want := map[string]string{"m": "41", "d:15": "5", "d:14": "9", "calls:q": "21", "cost:q": "41",
		"rl:60s": itoa(testStart.UnixMicro() + 50_000_000)} // the debt carried, plus one interval
	if got := c.HGetAll(ctx, month).Val(); !maps.Equal(got, want) {
		t.Errorf("HGETALL %s =\n%v, want\n%v", month, got, want)
	}
	if ttl := c.TTL(ctx, month).Val(); ttl <= UsageTTL-time.Minute || ttl > UsageTTL {
		t.Errorf("TTL %s = %v, want about %v", month, ttl, UsageTTL)
	}
	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "q", Cost: 1}); d.Allowed || d.RefusedBy != "per_minute" || d.RetryAfter != 20*time.Second {
		t.Errorf("second admission: %+v, want refused by per_minute, retry after 20 s", d)
	}
	for k, v := range map[string]string{"usage:202611": "40", "usage:20261115": "4", "rl:60s": itoa(testStart.UnixMicro() + 20_000_000)} {
		if got := c.Get(ctx, Key(id, k)).Val(); got != v {
			t.Errorf("earlier key %s = %q, want %q untouched", k, got, v)
		}
	}
}

// TestSettleUndoOfEarlierLayoutCall: a call admitted before the upgrade
// and settled after it is taken back from the month hash made from the
// earlier keys, and a refund where neither layout holds a count makes
// nothing.
func TestSettleUndoOfEarlierLayoutCall(t *testing.T) {
	c, id, m := upgraded(t)
	ctx := context.Background()
	minute := minuteOf(testStart)
	callID := "a1b2c3d4e5f60718"
	rec := Key(id, "calls", itoa(minute), "a")
	if err := c.HSet(ctx, rec, callID, "20261115:2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.settle(ctx, settleOp{keyID: id, tool: "q", ref: callRef{id: callID, minutes: [3]int64{minute}}, undo: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"m": "38", "d:15": "2", "d:14": "9", "calls:q": "19", "cost:q": "38"}
	if got := c.HGetAll(ctx, Key(id, "month:202611")).Val(); !maps.Equal(got, want) {
		t.Errorf("month hash after the undo =\n%v, want\n%v", got, want)
	}
	if got := c.HGet(ctx, rec, callID).Val(); got != "u" {
		t.Errorf("record = %q, want u", got)
	}

	other := newKeyID(t, c)
	if err := m.adjust(ctx, other, "q", testStart, -2, -1); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, Key(other, "month:202611")).Val(); n != 0 {
		t.Errorf("a refund with nothing counted made a month hash")
	}
}

// TestRateStateCarriesIntoNextMonth: a GCRA limit's debt does not reset
// at a month's end, though its state moves to the new month's hash.
func TestRateStateCarriesIntoNextMonth(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	clk := newFakeClock(time.Date(2026, time.November, 30, 23, 59, 59, 0, time.UTC))
	m.serverNow, m.clientNow = clk.Now, clk.Now
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 1}\n").Plan("p")
	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "q", Cost: 1}); !d.Allowed {
		t.Fatalf("last second of November: %+v", d)
	}
	clk.Advance(2 * time.Second)
	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "q", Cost: 1}); d.Allowed || d.RetryAfter != 58*time.Second {
		t.Errorf("first second of December: %+v, want refused, retry after 58 s", d)
	}
	clk.Advance(58 * time.Second)
	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "q", Cost: 1}); !d.Allowed {
		t.Errorf("a minute after the last call: %+v, want allowed", d)
	}
	want := map[string]string{"m": "1", "d:01": "1", "calls:q": "1", "cost:q": "1", "rl:60s": itoa(clk.Now().Add(time.Minute).UnixMicro())}
	if got := c.HGetAll(context.Background(), Key(id, "month:202612")).Val(); !maps.Equal(got, want) {
		t.Errorf("December's hash =\n%v, want\n%v", got, want)
	}
}
