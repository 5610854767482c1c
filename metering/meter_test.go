package metering

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests of this file run the GCRA rate limit through the implicit plan
// of a deployment without a plans file (PlansFromRateLimit): one limit
// named "rate", every call of cost 1.

// rateCall is one call of cost 1 under p.
func rateCall(keyID string, p *Plan) Call { return Call{KeyID: keyID, Plan: p, Tool: "t", Cost: 1} }

// rateDecision is the whole Decision the implicit plan gives at time at:
// allowed with remaining and reset, or (retry > 0) refused.
func rateDecision(limit int64, window time.Duration, at time.Time, remaining int64, reset, retry time.Duration, count int64) Decision {
	d := Decision{Allowed: retry == 0, Limit: limit, Remaining: remaining, Reset: reset, RetryAfter: retry, Count: count,
		Plan: "default", Policy: "rate", Window: window, At: at.UTC()}
	if d.Allowed {
		d.Cost = 1
	} else {
		d.RefusedBy = "rate"
	}
	return d
}

// monthUsed reads keyID's cost units this month from Report.
func monthUsed(t *testing.T, m Meter, keyID string, p *Plan) int64 {
	t.Helper()
	return mustReport(t, m, keyID, p).Periods[1].Used
}

// TestAdmitConcurrentBurst is the core requirement: with 100 calls per 60 s,
// 200 simultaneous calls admit exactly 100 and count exactly 100, and every
// refusal says exactly when to retry.
func TestAdmitConcurrentBurst(t *testing.T) {
	p := PlansFromRateLimit(0, 0).Default() // the defaults: 100 per 60 s
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		id := ids[0]

		const calls = 200
		ds := make([]Decision, calls)
		errs := make([]error, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { ds[i], errs[i] = m.AdmitCall(context.Background(), rateCall(id, p)) })
		}
		wg.Wait()

		var allowed, refused []Decision
		for i, d := range ds {
			if errs[i] != nil {
				t.Fatalf("AdmitCall #%d: %v", i, errs[i])
			}
			if d.Allowed {
				allowed = append(allowed, d)
			} else {
				refused = append(refused, d)
			}
		}
		if len(allowed) != 100 || len(refused) != 100 {
			t.Fatalf("got %d allowed, %d refused; want 100, 100", len(allowed), len(refused))
		}
		if n := monthUsed(t, m, id, p); n != 100 {
			t.Errorf("month used = %d, want 100", n)
		}

		// The admitted calls took the allowance one by one, in some order.
		var remaining []int64
		for _, d := range allowed {
			want := rateDecision(100, time.Minute, testStart, d.Remaining, time.Duration(100-d.Remaining)*600*time.Millisecond, 0, d.Count)
			if diff := cmp.Diff(want, d, decisionRecord); diff != "" {
				t.Errorf("allowed decision (-want +got):\n%s", diff)
			}
			remaining = append(remaining, d.Remaining)
		}
		slices.Sort(remaining)
		for i := range int64(100) {
			if remaining[i] != i {
				t.Fatalf("sorted Remaining[%d] = %d, want %d", i, remaining[i], i)
			}
		}

		// Every refusal: one emission interval (60 s / 100) to wait, a full
		// window to full recovery, nothing counted.
		want := rateDecision(100, time.Minute, testStart, 0, 60*time.Second, 600*time.Millisecond, 100)
		for _, d := range refused {
			if diff := cmp.Diff(want, d, decisionRecord); diff != "" {
				t.Fatalf("refused decision (-want +got):\n%s", diff)
			}
		}

		// Exactly RetryAfter later one more call is admitted, and only one.
		clk.Advance(600*time.Millisecond - time.Microsecond)
		if d := mustAdmitCall(t, m, rateCall(id, p)); d.Allowed || d.RetryAfter != time.Microsecond {
			t.Fatalf("1 µs early: got %+v, want refused with RetryAfter 1µs", d)
		}
		clk.Advance(time.Microsecond)
		if d := mustAdmitCall(t, m, rateCall(id, p)); !d.Allowed || d.Remaining != 0 || d.Count != 101 {
			t.Fatalf("after RetryAfter: got %+v, want allowed, Remaining 0, Count 101", d)
		}
		if d := mustAdmitCall(t, m, rateCall(id, p)); d.Allowed {
			t.Fatalf("second call after RetryAfter: got %+v, want refused", d)
		}
	})
}

// TestAdmitWindowRecovery walks a short window (2 calls per second) through
// refusal, partial and full recovery, asserting every Decision.
func TestAdmitWindowRecovery(t *testing.T) {
	ms := time.Millisecond
	p := PlansFromRateLimit(2, time.Second).Default()
	type step struct {
		advance      time.Duration // before the call
		remaining    int64
		reset, retry time.Duration
		count        int64
	}
	steps := []step{
		{0, 1, 500 * ms, 0, 1},
		{0, 0, 1000 * ms, 0, 2},
		{0, 0, 1000 * ms, 500 * ms, 2},
		{200 * ms, 0, 800 * ms, 300 * ms, 2},
		{300 * ms, 0, 1000 * ms, 0, 3},
		{999 * ms, 0, 501 * ms, 0, 4},
		{5 * time.Second, 1, 500 * ms, 0, 5},
	}
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		for i, s := range steps {
			clk.Advance(s.advance)
			want := rateDecision(2, time.Second, clk.Now(), s.remaining, s.reset, s.retry, s.count)
			if diff := cmp.Diff(want, mustAdmitCall(t, m, rateCall(ids[0], p)), decisionRecord); diff != "" {
				t.Fatalf("step %d (after +%v): Decision (-want +got):\n%s", i, s.advance, diff)
			}
		}
		if n := monthUsed(t, m, ids[0], p); n != 5 {
			t.Errorf("month used = %d, want 5", n)
		}
	})
}

// TestAdmitSteadyRate checks the sustained rate after the burst: one call
// per Window/Limit, with a limit that does not divide the window evenly.
func TestAdmitSteadyRate(t *testing.T) {
	p := PlansFromRateLimit(7, time.Minute).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		id := ids[0]
		const interval = 8571428 * time.Microsecond // 60 s / 7, rounded down to 1 µs
		for i := range 7 {
			if d := mustAdmitCall(t, m, rateCall(id, p)); !d.Allowed || d.Remaining != int64(6-i) {
				t.Fatalf("burst call %d: got %+v, want allowed with Remaining %d", i, d, 6-i)
			}
		}
		for i := range 20 {
			d := mustAdmitCall(t, m, rateCall(id, p))
			if d.Allowed || d.RetryAfter != interval {
				t.Fatalf("round %d: got %+v, want refused with RetryAfter %v", i, d, interval)
			}
			clk.Advance(d.RetryAfter)
			if d := mustAdmitCall(t, m, rateCall(id, p)); !d.Allowed || d.Remaining != 0 {
				t.Fatalf("round %d after RetryAfter: got %+v, want allowed, Remaining 0", i, d)
			}
		}
		if n := monthUsed(t, m, id, p); n != 27 {
			t.Errorf("month used = %d, want 27", n)
		}
	})
}

// TestAdmitDisabled checks a negative limit: everything admitted and
// counted, no rate-limit fields.
func TestAdmitDisabled(t *testing.T) {
	p := PlansFromRateLimit(-1, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, ids := planImpl(t, impl, clk, 1)
		for i := range int64(250) {
			want := Decision{Allowed: true, Count: i + 1, Plan: "default", Cost: 1, At: testStart}
			if diff := cmp.Diff(want, mustAdmitCall(t, m, rateCall(ids[0], p)), decisionRecord); diff != "" {
				t.Fatalf("call %d: Decision (-want +got):\n%s", i, diff)
			}
		}
		if n := monthUsed(t, m, ids[0], p); n != 250 {
			t.Errorf("month used = %d, want 250", n)
		}
	})
}

// TestAdmitKeysIndependent checks that one key's exhaustion leaves another
// key untouched.
func TestAdmitKeysIndependent(t *testing.T) {
	p := PlansFromRateLimit(1, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		m, ids := planImpl(t, impl, newFakeClock(testStart), 2)
		a, b := ids[0], ids[1]
		if d := mustAdmitCall(t, m, rateCall(a, p)); !d.Allowed {
			t.Fatalf("a first: got %+v, want allowed", d)
		}
		if d := mustAdmitCall(t, m, rateCall(a, p)); d.Allowed {
			t.Fatalf("a second: got %+v, want refused", d)
		}
		if d := mustAdmitCall(t, m, rateCall(b, p)); !d.Allowed || d.Count != 1 {
			t.Fatalf("b first: got %+v, want allowed with Count 1", d)
		}
	})
}

// TestUsageMonthRollover checks that counting restarts in a new calendar
// month (UTC) while the rate limit carries on.
func TestUsageMonthRollover(t *testing.T) {
	p := PlansFromRateLimit(3, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		endOfNov := time.Date(2026, time.November, 30, 23, 59, 59, 999999000, time.UTC)
		clk := newFakeClock(endOfNov)
		m, ids := planImpl(t, impl, clk, 1)
		id := ids[0]
		mustAdmitCall(t, m, rateCall(id, p))
		mustAdmitCall(t, m, rateCall(id, p))
		if n := monthUsed(t, m, id, p); n != 2 {
			t.Fatalf("November used = %d, want 2", n)
		}
		clk.Advance(time.Microsecond) // 2026-12-01T00:00:00Z
		if n := monthUsed(t, m, id, p); n != 0 {
			t.Fatalf("December used before any call = %d, want 0", n)
		}
		if d := mustAdmitCall(t, m, rateCall(id, p)); !d.Allowed || d.Count != 1 || d.Remaining != 0 {
			t.Fatalf("first December call: got %+v, want allowed, Count 1, Remaining 0", d)
		}
		if d := mustAdmitCall(t, m, rateCall(id, p)); d.Allowed || d.Count != 1 {
			t.Fatalf("second December call: got %+v, want refused (limit carries over) with Count 1", d)
		}
	})
}

// TestInvalidKeyID checks that keyIDs that would break the hash tag are
// refused with ErrInvalidKeyID, before any store access.
func TestInvalidKeyID(t *testing.T) {
	p := PlansFromRateLimit(0, 0).Default()
	forEach(t, func(t *testing.T, impl implementation) {
		m, _ := planImpl(t, impl, newFakeClock(testStart), 1)
		ctx := context.Background()
		for _, id := range []string{"", "a{b", "a}b", "{x}"} {
			if _, err := m.AdmitCall(ctx, rateCall(id, p)); !errors.Is(err, ErrInvalidKeyID) {
				t.Errorf("AdmitCall(%q) error = %v, want ErrInvalidKeyID", id, err)
			}
			if err := m.Refund(ctx, rateCall(id, p), Decision{Allowed: true, Cost: 1, At: testStart}); !errors.Is(err, ErrInvalidKeyID) {
				t.Errorf("Refund(%q) error = %v, want ErrInvalidKeyID", id, err)
			}
			if _, err := m.Report(ctx, id, p); !errors.Is(err, ErrInvalidKeyID) {
				t.Errorf("Report(%q) error = %v, want ErrInvalidKeyID", id, err)
			}
		}
	})
}

// TestPing checks readiness of a working store.
func TestPing(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		m, _ := planImpl(t, impl, newFakeClock(testStart), 1)
		if err := m.Ping(context.Background()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

// TestKeyID checks the key id: the first 12 hex digits of the SHA-256.
func TestKeyID(t *testing.T) {
	// echo -n test | sha256sum: 9f86d081884c7d659a2feaa0c55ad015…
	if got := KeyID("test"); got != "9f86d081884c" {
		t.Errorf("KeyID(test) = %q, want 9f86d081884c", got)
	}
}
