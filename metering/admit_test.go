package metering

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planImpl builds one plan meter under test (memory or Redis, both on clk)
// and returns it with n fresh key ids.
func planImpl(t *testing.T, impl implementation, clk *fakeClock, n int) (Meter, []string) {
	t.Helper()
	m, id := impl.new(t, clk)
	ids := []string{id}
	for len(ids) < n {
		_, id := impl.new(t, clk) // another cleaned-up key id
		ids = append(ids, id)
	}
	return m, ids
}

func mustAdmitCall(t *testing.T, m Meter, c Call) Decision {
	t.Helper()
	d, err := m.AdmitCall(context.Background(), c)
	if err != nil {
		t.Fatalf("AdmitCall(%+v): %v", c, err)
	}
	return d
}

func mustReport(t *testing.T, m Meter, keyID string, p *Plan) Report {
	t.Helper()
	r, err := m.Report(context.Background(), keyID, p)
	if err != nil {
		t.Fatalf("Report(%q): %v", keyID, err)
	}
	return r
}

// TestAdmitCallConcurrent is the requirement: 1,000 simultaneous
// calls over 4 keys on 2 plans, at one instant. Every counter is exact and
// every refusal names its limit with the exact Retry-After: one emission
// interval for a rate limit, the time to midnight UTC for a day quota.
// (Windows of a minute or more, so that no GCRA key expires in Redis's
// real time while the test's clock stands still.)
func TestAdmitCallConcurrent(t *testing.T) {
	ps := mustParsePlans(t, `
default_plan: free
plans:
  free:
    rate_limits: {per_minute: 5, per_hour: 20}
    quotas: {day: 1000}
  pro:
    rate_limits: {per_hour: 1000}
    quotas: {day: 40, month: 5000}
    costs: {heavy: 3}
`)
	free, pro := ps.Plan("free"), ps.Plan("pro")
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart) // 12:00 UTC: 12 h to the end of the day
		m, ids := planImpl(t, impl, clk, 4)
		calls := []Call{
			{KeyID: ids[0], Plan: free, Tool: "light", Cost: free.Cost("light", 0)},
			{KeyID: ids[1], Plan: free, Tool: "light", Cost: free.Cost("light", 0)},
			{KeyID: ids[2], Plan: pro, Tool: "heavy", Cost: pro.Cost("heavy", 0)},
			{KeyID: ids[3], Plan: pro, Tool: "light", Cost: pro.Cost("light", 0)},
		}
		const perKey = 250
		ds := make([][]Decision, len(calls))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for k, c := range calls {
			ds[k] = make([]Decision, 0, perKey)
			for range perKey {
				wg.Go(func() {
					d, err := m.AdmitCall(context.Background(), c)
					if err != nil {
						t.Errorf("AdmitCall: %v", err)
						return
					}
					mu.Lock()
					ds[k] = append(ds[k], d)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}

		at := testStart
		type want struct {
			allowed   int
			refused   Decision         // every refusal, exactly
			remaining func(int) int64  // Remaining of the i-th allowed call (sorted)
			policy    string           // Policy of the allowed calls
			report    func(Report) any // checked below
		}
		wants := []want{
			{5, Decision{Limit: 5, Reset: time.Minute, RetryAfter: 12 * time.Second, Count: 5,
				Plan: "free", Policy: LimitPerMinute, Window: time.Minute, RefusedBy: LimitPerMinute, At: at},
				func(i int) int64 { return int64(i) }, LimitPerMinute, nil},
			{5, Decision{Limit: 5, Reset: time.Minute, RetryAfter: 12 * time.Second, Count: 5,
				Plan: "free", Policy: LimitPerMinute, Window: time.Minute, RefusedBy: LimitPerMinute, At: at},
				func(i int) int64 { return int64(i) }, LimitPerMinute, nil},
			{13, Decision{Limit: 40, Reset: 12 * time.Hour, RetryAfter: 12 * time.Hour, Count: 39,
				Plan: "pro", Policy: QuotaDay, Window: 24 * time.Hour, RefusedBy: QuotaDay, At: at},
				func(i int) int64 { return int64(1 + 3*i) }, QuotaDay, nil},
			{40, Decision{Limit: 40, Reset: 12 * time.Hour, RetryAfter: 12 * time.Hour, Count: 40,
				Plan: "pro", Policy: QuotaDay, Window: 24 * time.Hour, RefusedBy: QuotaDay, At: at},
				func(i int) int64 { return int64(i) }, QuotaDay, nil},
		}
		for k, w := range wants {
			var allowed []Decision
			for _, d := range ds[k] {
				if d.Allowed {
					allowed = append(allowed, d)
					continue
				}
				if diff := cmp.Diff(w.refused, d, decisionRecord); diff != "" {
					t.Fatalf("key %d: refused decision (-want +got):\n%s", k, diff)
				}
			}
			if len(ds[k]) != perKey || len(allowed) != w.allowed {
				t.Fatalf("key %d: %d decisions, %d allowed; want %d, %d", k, len(ds[k]), len(allowed), perKey, w.allowed)
			}
			var remaining, counts []int64
			for _, d := range allowed {
				if d.Policy != w.policy || d.Cost != calls[k].Cost || d.RetryAfter != 0 || d.RefusedBy != "" || !d.At.Equal(at) {
					t.Errorf("key %d: allowed decision %+v: want Policy %s, Cost %d", k, d, w.policy, calls[k].Cost)
				}
				remaining = append(remaining, d.Remaining)
				counts = append(counts, d.Count)
			}
			slices.Sort(remaining)
			slices.Sort(counts)
			for i := range w.allowed {
				if remaining[i] != w.remaining(i) || counts[i] != int64(i+1)*calls[k].Cost {
					t.Fatalf("key %d: sorted Remaining[%d] = %d, Count[%d] = %d; want %d, %d",
						k, i, remaining[i], i, counts[i], w.remaining(i), int64(i+1)*calls[k].Cost)
				}
			}
		}

		// The usage read-out, exactly.
		day := func(used, limit int64) PeriodUsage {
			rem := int64(-1)
			if limit >= 0 {
				rem = limit - used
			}
			return PeriodUsage{Period: PeriodDay, Name: "20261115", Start: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC),
				Reset: time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), Used: used, Limit: limit, Remaining: rem}
		}
		month := func(used, limit int64, tool string, calls int64) PeriodUsage {
			rem := int64(-1)
			if limit >= 0 {
				rem = limit - used
			}
			return PeriodUsage{Period: PeriodMonth, Name: "202611", Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
				Reset: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Used: used, Limit: limit, Remaining: rem,
				Tools: map[string]ToolUsage{tool: {Calls: calls, Cost: used}}}
		}
		rate := func(name string, limit int64, window, reset time.Duration, remaining int64) RateUsage {
			return RateUsage{Name: name, Limit: limit, Window: window, WindowSeconds: window.Seconds(), Remaining: remaining, Reset: at.Add(reset)}
		}
		reports := []Report{
			{KeyID: ids[0], Plan: "free", Time: at,
				RateLimits: []RateUsage{rate(LimitPerMinute, 5, time.Minute, time.Minute, 0), rate(LimitPerHour, 20, time.Hour, 15*time.Minute, 15)},
				Periods:    []PeriodUsage{day(5, 1000), month(5, -1, "light", 5)}},
			{KeyID: ids[1], Plan: "free", Time: at,
				RateLimits: []RateUsage{rate(LimitPerMinute, 5, time.Minute, time.Minute, 0), rate(LimitPerHour, 20, time.Hour, 15*time.Minute, 15)},
				Periods:    []PeriodUsage{day(5, 1000), month(5, -1, "light", 5)}},
			{KeyID: ids[2], Plan: "pro", Time: at,
				RateLimits: []RateUsage{rate(LimitPerHour, 1000, time.Hour, 46800*time.Millisecond, 987)},
				Periods:    []PeriodUsage{day(39, 40), month(39, 5000, "heavy", 13)}},
			{KeyID: ids[3], Plan: "pro", Time: at,
				RateLimits: []RateUsage{rate(LimitPerHour, 1000, time.Hour, 144*time.Second, 960)},
				Periods:    []PeriodUsage{day(40, 40), month(40, 5000, "light", 40)}},
		}
		for k, want := range reports {
			if diff := cmp.Diff(want, mustReport(t, m, ids[k], calls[k].Plan)); diff != "" {
				t.Errorf("key %d: Report (-want +got):\n%s", k, diff)
			}
		}
	})
}

// TestAdmitCallWindowEdges walks two rate limits of one plan through their
// edges, asserting every Decision: the per-second limit refuses first,
// then the per-minute one, each with the exact wait, to the microsecond.
func TestAdmitCallWindowEdges(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 2, per_minute: 3}\n").Plan("p")
	ms := time.Millisecond
	sec := func(l, rem int64, reset time.Duration) Decision {
		return Decision{Limit: l, Remaining: rem, Reset: reset, Policy: LimitPerSecond, Window: time.Second}
	}
	min := func(l, rem int64, reset time.Duration) Decision {
		return Decision{Limit: l, Remaining: rem, Reset: reset, Policy: LimitPerMinute, Window: time.Minute}
	}
	allowed, refused := allowedDecision, refusedDecision
	steps := []admitStep{
		{0, allowed(sec(2, 1, 500*ms), 1)},
		{0, allowed(sec(2, 0, 1000*ms), 2)},
		{0, refused(sec(2, 0, 1000*ms), 500*ms, 2)},
		{500*ms - time.Microsecond, refused(sec(2, 0, 500*ms+time.Microsecond), time.Microsecond, 2)},
		{time.Microsecond, allowed(min(3, 0, 59500*ms), 3)}, // both at 0 left: the longer reset
		{time.Second, refused(min(3, 0, 58500*ms), 18500*ms, 3)},
		{18500*ms - time.Microsecond, refused(min(3, 0, 40*time.Second+time.Microsecond), time.Microsecond, 3)},
		{time.Microsecond, allowed(min(3, 0, 60*time.Second), 4)},
	}
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		walkAdmissions(t, m, clk, ids[0], p, steps)
	})
}

// TestAdmitCallPeriodRollover checks day and month quotas across midnight
// and the first of the month (UTC): a quota refusal's Retry-After runs
// exactly to the end of its period, and the counters start again there.
func TestAdmitCallPeriodRollover(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    quotas: {day: 2, month: 3}\n").Plan("p")
	start := time.Date(2026, time.November, 29, 23, 59, 59, 0, time.UTC)
	day := func(rem int64, reset time.Duration) Decision {
		return Decision{Limit: 2, Remaining: rem, Reset: reset, Policy: QuotaDay, Window: 24 * time.Hour}
	}
	month := func(rem int64, reset time.Duration) Decision {
		return Decision{Limit: 3, Remaining: rem, Reset: reset, Policy: QuotaMonth, Window: 30 * 24 * time.Hour}
	}
	allowed := func(d Decision, count int64) Decision {
		d.Allowed, d.Cost, d.Count = true, 1, count
		return d
	}
	refused := func(d Decision, count int64) Decision {
		d.RetryAfter, d.RefusedBy, d.Count = d.Reset, d.Policy, count
		return d
	}
	steps := []admitStep{
		{0, allowed(day(1, time.Second), 1)},
		{0, allowed(day(0, time.Second), 2)},
		{0, refused(day(0, time.Second), 2)},
		{999 * time.Millisecond, refused(day(0, time.Millisecond), 2)},
		{time.Millisecond, allowed(month(0, 24*time.Hour), 3)}, // 30 November: a new day
		{12 * time.Hour, refused(month(0, 12*time.Hour), 3)},   // the month is spent
		{12*time.Hour - time.Microsecond, refused(month(0, time.Microsecond), 3)},
		{time.Microsecond, allowed(day(1, 24*time.Hour), 1)}, // 1 December
	}
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(start)
		m, ids := planImpl(t, impl, clk, 1)
		walkAdmissions(t, m, clk, ids[0], p, steps)
		r := mustReport(t, m, ids[0], p)
		if r.Periods[0].Name != "20261201" || r.Periods[0].Used != 1 || r.Periods[1].Name != "202612" || r.Periods[1].Used != 1 {
			t.Errorf("December report = %+v, want day 20261201 and month 202612 with 1 used each", r.Periods)
		}
	})
}

// TestAdmitCallCostAndFreeTools checks costs against a quota: a call whose
// cost does not fit is refused even though a cheaper one would pass, and a
// free tool is never refused by the quota but still counted per tool.
func TestAdmitCallCostAndFreeTools(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    quotas: {month: 10}\n    costs: {big: 4, free: 0}\n").Plan("p")
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		call := func(tool string) Decision {
			return mustAdmitCall(t, m, Call{KeyID: ids[0], Plan: p, Tool: tool, Cost: p.Cost(tool, 0)})
		}
		for i, want := range []struct {
			tool    string
			allowed bool
			count   int64
		}{{"big", true, 4}, {"big", true, 8}, {"big", false, 8}, {"small", true, 9}, {"small", true, 10}, {"small", false, 10}, {"free", true, 10}, {"free", true, 10}} {
			if d := call(want.tool); d.Allowed != want.allowed || d.Count != want.count {
				t.Fatalf("call %d (%s): got %+v, want allowed %v, Count %d", i, want.tool, d, want.allowed, want.count)
			}
		}
		got := mustReport(t, m, ids[0], p).Periods[1].Tools
		want := map[string]ToolUsage{"big": {2, 8}, "small": {2, 2}, "free": {2, 0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("per-tool usage (-want +got):\n%s", diff)
		}
	})
}

// TestRefund checks counting policy success: a refunded call gives back
// its units and its per-tool call, in the periods it was charged to, never
// below zero; rate limits are not refunded.
func TestRefund(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 10}\n    quotas: {day: 5}\n    costs: {two: 2}\n").Plan("p")
	forEach(t, func(t *testing.T, impl implementation) {
		ctx := context.Background()
		clk := newFakeClock(time.Date(2026, time.November, 15, 23, 59, 59, 0, time.UTC))
		m, ids := planImpl(t, impl, clk, 1)
		c := Call{KeyID: ids[0], Plan: p, Tool: "two", Cost: 2}
		d1 := mustAdmitCall(t, m, c)
		d2 := mustAdmitCall(t, m, c)
		if d3 := mustAdmitCall(t, m, c); d3.Allowed || d3.RefusedBy != QuotaDay {
			t.Fatalf("third call: got %+v, want refused by the day quota", d3)
		}
		if err := m.Refund(ctx, c, d2); err != nil {
			t.Fatal(err)
		}
		r := mustReport(t, m, ids[0], p)
		if r.Periods[0].Used != 2 || r.Periods[1].Used != 2 || r.Periods[1].Tools["two"] != (ToolUsage{1, 2}) {
			t.Fatalf("after one refund: %+v, want day and month 2 used, tool two {1 2}", r.Periods)
		}
		if r.RateLimits[0].Remaining != 8 {
			t.Errorf("per_minute Remaining after refund = %d, want 8 (rate limits are not refunded)", r.RateLimits[0].Remaining)
		}
		if d := mustAdmitCall(t, m, c); !d.Allowed || d.Count != 4 {
			t.Fatalf("call after refund: got %+v, want allowed with Count 4", d)
		}
		// A refused decision refunds nothing.
		if err := m.Refund(ctx, c, Decision{Plan: "p", At: d1.At}); err != nil {
			t.Fatal(err)
		}
		// Past midnight the refund still goes to the day it was charged to.
		clk.Advance(time.Second) // 16 November
		if err := m.Refund(ctx, c, d1); err != nil {
			t.Fatal(err)
		}
		r = mustReport(t, m, ids[0], p)
		if r.Periods[0].Name != "20261116" || r.Periods[0].Used != 0 || r.Periods[1].Used != 2 || r.Periods[1].Tools["two"] != (ToolUsage{1, 2}) {
			t.Fatalf("after the refund on the next day: %+v, want today 0, month 2, tool two {1 2}", r.Periods)
		}
		// A call is refunded once, however often its refund is sent
		// (settle.go: by the call's record).
		for range 3 {
			if err := m.Refund(ctx, c, d1); err != nil {
				t.Fatal(err)
			}
		}
		if r := mustReport(t, m, ids[0], p); r.Periods[1].Used != 2 || r.Periods[1].Tools["two"] != (ToolUsage{1, 2}) {
			t.Fatalf("after refunding d1 again: %+v, want month 2 used, tool two {1 2}", r.Periods[1])
		}
		// Refunds of decisions without a record (as a store without call
		// records gave them) stop at zero and create nothing.
		for range 3 {
			if err := m.Refund(ctx, c, Decision{Allowed: true, Plan: "p", Cost: 2, At: d1.At}); err != nil {
				t.Fatal(err)
			}
		}
		if r := mustReport(t, m, ids[0], p); r.Periods[1].Used != 0 || r.Periods[1].Tools["two"] != (ToolUsage{0, 0}) {
			t.Fatalf("after over-refunding: %+v, want 0", r.Periods[1])
		}
		clk.Advance(24 * time.Hour)
		if err := m.Refund(ctx, Call{KeyID: ids[0], Plan: p, Tool: "never", Cost: 2}, Decision{Allowed: true, Cost: 2, At: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		if r := mustReport(t, m, ids[0], p); r.Periods[0].Used != 0 {
			t.Errorf("refund without a counter: day used %d, want 0", r.Periods[0].Used)
		}
	})
}

// TestAdmitCallPlansFromRateLimit checks the implicit plan's defaults:
// 100 per 60 s.
func TestAdmitCallPlansFromRateLimit(t *testing.T) {
	p := PlansFromRateLimit(0, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		m, ids := planImpl(t, impl, newFakeClock(testStart), 1)
		for i := range 100 {
			if d := mustAdmitCall(t, m, Call{KeyID: ids[0], Plan: p, Tool: "t", Cost: 1}); !d.Allowed || d.Remaining != int64(99-i) || d.Policy != "rate" {
				t.Fatalf("call %d: got %+v", i, d)
			}
		}
		d := mustAdmitCall(t, m, Call{KeyID: ids[0], Plan: p, Tool: "t", Cost: 1})
		if d.Allowed || d.RetryAfter != 600*time.Millisecond || d.Count != 100 {
			t.Fatalf("101st: got %+v, want refused with RetryAfter 600ms", d)
		}
	})
}

func TestAdmitCallInvalid(t *testing.T) {
	p := PlansFromRateLimit(0, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		m, ids := planImpl(t, impl, newFakeClock(testStart), 1)
		ctx := context.Background()
		if _, err := m.AdmitCall(ctx, Call{KeyID: "a{b", Plan: p, Cost: 1}); !errors.Is(err, ErrInvalidKeyID) {
			t.Errorf("bad key id: %v, want ErrInvalidKeyID", err)
		}
		if _, err := m.AdmitCall(ctx, Call{KeyID: ids[0], Cost: 1}); err == nil {
			t.Error("nil plan: no error")
		}
		if _, err := m.AdmitCall(ctx, Call{KeyID: ids[0], Plan: p, Cost: -1}); err == nil {
			t.Error("negative cost: no error")
		}
		if _, err := m.Report(ctx, "}", p); !errors.Is(err, ErrInvalidKeyID) {
			t.Errorf("Report bad key id: %v, want ErrInvalidKeyID", err)
		}
	})
}

// TestAdmitCallSlidingWindow: with algorithm sliding_window, at most Limit
// calls in any Window, exactly: no burst beyond it, each call's slot back
// exactly Window after it, Retry-After until the oldest call leaves the
// window, and the report counting what the window holds. Both
// implementations give the same decisions.
func TestAdmitCallSlidingWindow(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 3, algorithm: sliding_window}\n").Plan("p")
	if len(p.RateLimits) != 1 || !p.RateLimits[0].Sliding {
		t.Fatalf("rate limits %+v", p.RateLimits)
	}
	sec := time.Second
	win := func(rem int64, reset time.Duration) Decision {
		return Decision{Limit: 3, Remaining: rem, Reset: reset, Policy: LimitPerMinute, Window: time.Minute}
	}
	allowed, refused := allowedDecision, refusedDecision
	steps := []admitStep{
		{0, allowed(win(2, 60*sec), 1)},                // t=0
		{10 * sec, allowed(win(1, 50*sec), 2)},         // t=10
		{10 * sec, allowed(win(0, 40*sec), 3)},         // t=20: three in the window
		{20 * sec, refused(win(0, 20*sec), 20*sec, 3)}, // t=40: the t=0 call leaves at 60
		{20*sec - time.Microsecond, refused(win(0, time.Microsecond), time.Microsecond, 3)},
		{time.Microsecond, allowed(win(0, 10*sec), 4)}, // t=60: the t=0 call has left; the t=10 one is the oldest
		{10 * sec, allowed(win(0, 10*sec), 5)},         // t=70: the t=10 call left; oldest is t=20
		{time.Minute, allowed(win(2, 60*sec), 6)},      // t=130: the window is empty again
	}
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		walkAdmissions(t, m, clk, ids[0], p, steps)
		r, err := m.Report(context.Background(), ids[0], p)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.RateLimits[0]; got.Remaining != 2 || !got.Reset.Equal(clk.Now().Add(time.Minute)) {
			t.Errorf("report: %+v (now %v)", got, clk.Now())
		}
	})
}

// TestSlidingWindowAlgorithmName: an unknown algorithm is a plans-file
// error naming the choices.
func TestSlidingWindowAlgorithmName(t *testing.T) {
	_, err := ParsePlans([]byte("default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 3, algorithm: fixed_window}\n"), "plans.yaml")
	if err == nil || !strings.Contains(err.Error(), `plans.p.rate_limits.algorithm: must be gcra or sliding_window, got "fixed_window"`) {
		t.Errorf("ParsePlans: %v", err)
	}
}

// allowedDecision is d as an admitted call of cost 1 leaves it, count
// calls in its window.
func allowedDecision(d Decision, count int64) Decision {
	d.Allowed, d.Cost, d.Count = true, 1, count
	return d
}

// refusedDecision is d as a refusal by its own policy leaves it: retry
// after retry, count calls in its window.
func refusedDecision(d Decision, retry time.Duration, count int64) Decision {
	d.RetryAfter, d.RefusedBy, d.Count = retry, d.Policy, count
	return d
}

// admitStep is one step of a walk through a plan's limits: advance the
// clock, admit one call of tool "t" at cost 1, and get want (with the
// plan's name and the clock's time filled in).
type admitStep struct {
	advance time.Duration
	want    Decision
}

// walkAdmissions runs steps for key id under plan p (named "p") on m,
// whose clock is clk, comparing each whole Decision.
func walkAdmissions(t *testing.T, m Meter, clk *fakeClock, id string, p *Plan, steps []admitStep) {
	t.Helper()
	for i, s := range steps {
		clk.Advance(s.advance)
		want := s.want
		want.Plan, want.At = "p", clk.Now()
		got := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "t", Cost: 1})
		if diff := cmp.Diff(want, got, decisionRecord); diff != "" {
			t.Fatalf("step %d (after +%v, at %v): Decision (-want +got):\n%s", i, s.advance, clk.Now(), diff)
		}
	}
}
