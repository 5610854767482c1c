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

// TestAdmitConcurrentBurst is the core requirement: with 100 calls per 60 s,
// 200 simultaneous calls admit exactly 100 and count exactly 100, and every
// refusal says exactly when to retry.
func TestAdmitConcurrentBurst(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, id := impl.new(t, Options{}, clk) // the defaults: 100 per 60 s

		const calls = 200
		ds := make([]Decision, calls)
		errs := make([]error, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { ds[i], errs[i] = m.Admit(context.Background(), id) })
		}
		wg.Wait()

		var allowed, refused []Decision
		for i, d := range ds {
			if errs[i] != nil {
				t.Fatalf("Admit #%d: %v", i, errs[i])
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
		if n := mustUsage(t, m, id); n != 100 {
			t.Errorf("Usage = %d, want 100", n)
		}

		// The admitted calls took the allowance one by one, in some order.
		var remaining, counts []int64
		for _, d := range allowed {
			if d.Limit != 100 || d.RetryAfter != 0 {
				t.Errorf("allowed decision %+v: want Limit 100, RetryAfter 0", d)
			}
			if want := time.Duration(100-d.Remaining) * 600 * time.Millisecond; d.Reset != want {
				t.Errorf("allowed decision %+v: Reset = %v, want %v", d, d.Reset, want)
			}
			remaining = append(remaining, d.Remaining)
			counts = append(counts, d.Count)
		}
		slices.Sort(remaining)
		slices.Sort(counts)
		for i := range int64(100) {
			if remaining[i] != i || counts[i] != i+1 {
				t.Fatalf("sorted Remaining[%d] = %d, Count[%d] = %d; want %d, %d", i, remaining[i], i, counts[i], i, i+1)
			}
		}

		// Every refusal: one emission interval (60 s / 100) to wait, a full
		// window to full recovery, nothing counted.
		want := Decision{Limit: 100, Reset: 60 * time.Second, RetryAfter: 600 * time.Millisecond, Count: 100}
		for _, d := range refused {
			if diff := cmp.Diff(want, d); diff != "" {
				t.Fatalf("refused decision (-want +got):\n%s", diff)
			}
		}

		// Exactly RetryAfter later one more call is admitted, and only one.
		clk.Advance(600*time.Millisecond - time.Microsecond)
		if d := mustAdmit(t, m, id); d.Allowed || d.RetryAfter != time.Microsecond {
			t.Fatalf("1 µs early: got %+v, want refused with RetryAfter 1µs", d)
		}
		clk.Advance(time.Microsecond)
		if d := mustAdmit(t, m, id); !d.Allowed || d.Remaining != 0 || d.Count != 101 {
			t.Fatalf("after RetryAfter: got %+v, want allowed, Remaining 0, Count 101", d)
		}
		if d := mustAdmit(t, m, id); d.Allowed {
			t.Fatalf("second call after RetryAfter: got %+v, want refused", d)
		}
	})
}

// TestAdmitWindowRecovery walks a short window (2 calls per second) through
// refusal, partial and full recovery, asserting every Decision.
func TestAdmitWindowRecovery(t *testing.T) {
	ms := time.Millisecond
	type step struct {
		advance time.Duration // before the call
		want    Decision
	}
	steps := []step{
		{0, Decision{Allowed: true, Limit: 2, Remaining: 1, Reset: 500 * ms, Count: 1}},
		{0, Decision{Allowed: true, Limit: 2, Remaining: 0, Reset: 1000 * ms, Count: 2}},
		{0, Decision{Limit: 2, Reset: 1000 * ms, RetryAfter: 500 * ms, Count: 2}},
		{200 * ms, Decision{Limit: 2, Reset: 800 * ms, RetryAfter: 300 * ms, Count: 2}},
		{300 * ms, Decision{Allowed: true, Limit: 2, Remaining: 0, Reset: 1000 * ms, Count: 3}},
		{999 * ms, Decision{Allowed: true, Limit: 2, Remaining: 0, Reset: 501 * ms, Count: 4}},
		{5 * time.Second, Decision{Allowed: true, Limit: 2, Remaining: 1, Reset: 500 * ms, Count: 5}},
	}
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, id := impl.new(t, Options{Limit: 2, Window: time.Second}, clk)
		for i, s := range steps {
			clk.Advance(s.advance)
			if diff := cmp.Diff(s.want, mustAdmit(t, m, id)); diff != "" {
				t.Fatalf("step %d (after +%v): Decision (-want +got):\n%s", i, s.advance, diff)
			}
		}
		if n := mustUsage(t, m, id); n != 5 {
			t.Errorf("Usage = %d, want 5", n)
		}
	})
}

// TestAdmitSteadyRate checks the sustained rate after the burst: one call
// per Window/Limit, with a limit that does not divide the window evenly.
func TestAdmitSteadyRate(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, id := impl.new(t, Options{Limit: 7, Window: time.Minute}, clk)
		const interval = 8571428 * time.Microsecond // 60 s / 7, rounded down to 1 µs
		for i := range 7 {
			if d := mustAdmit(t, m, id); !d.Allowed || d.Remaining != int64(6-i) {
				t.Fatalf("burst call %d: got %+v, want allowed with Remaining %d", i, d, 6-i)
			}
		}
		for i := range 20 {
			d := mustAdmit(t, m, id)
			if d.Allowed || d.RetryAfter != interval {
				t.Fatalf("round %d: got %+v, want refused with RetryAfter %v", i, d, interval)
			}
			clk.Advance(d.RetryAfter)
			if d := mustAdmit(t, m, id); !d.Allowed || d.Remaining != 0 {
				t.Fatalf("round %d after RetryAfter: got %+v, want allowed, Remaining 0", i, d)
			}
		}
		if n := mustUsage(t, m, id); n != 27 {
			t.Errorf("Usage = %d, want 27", n)
		}
	})
}

// TestAdmitDisabled checks Limit -1: everything admitted and counted, no
// rate-limit fields.
func TestAdmitDisabled(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		m, id := impl.new(t, Options{Limit: -1}, newFakeClock(testStart))
		for i := range int64(250) {
			want := Decision{Allowed: true, Count: i + 1}
			if diff := cmp.Diff(want, mustAdmit(t, m, id)); diff != "" {
				t.Fatalf("call %d: Decision (-want +got):\n%s", i, diff)
			}
		}
		if n := mustUsage(t, m, id); n != 250 {
			t.Errorf("Usage = %d, want 250", n)
		}
	})
}

// TestAdmitKeysIndependent checks that one key's exhaustion leaves another
// key untouched.
func TestAdmitKeysIndependent(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		clk := newFakeClock(testStart)
		m, a := impl.new(t, Options{Limit: 1}, clk)
		_, b := impl.new(t, Options{Limit: 1}, clk) // only for a second cleaned-up keyID
		if d := mustAdmit(t, m, a); !d.Allowed {
			t.Fatalf("a first: got %+v, want allowed", d)
		}
		if d := mustAdmit(t, m, a); d.Allowed {
			t.Fatalf("a second: got %+v, want refused", d)
		}
		if d := mustAdmit(t, m, b); !d.Allowed || d.Count != 1 {
			t.Fatalf("b first: got %+v, want allowed with Count 1", d)
		}
	})
}

// TestUsageMonthRollover checks that counting restarts in a new calendar
// month (UTC) while the rate limit carries on.
func TestUsageMonthRollover(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		endOfNov := time.Date(2026, time.November, 30, 23, 59, 59, 999999000, time.UTC)
		clk := newFakeClock(endOfNov)
		m, id := impl.new(t, Options{Limit: 3}, clk)
		mustAdmit(t, m, id)
		mustAdmit(t, m, id)
		if n := mustUsage(t, m, id); n != 2 {
			t.Fatalf("November Usage = %d, want 2", n)
		}
		clk.Advance(time.Microsecond) // 2026-12-01T00:00:00Z
		if n := mustUsage(t, m, id); n != 0 {
			t.Fatalf("December Usage before any call = %d, want 0", n)
		}
		if d := mustAdmit(t, m, id); !d.Allowed || d.Count != 1 || d.Remaining != 0 {
			t.Fatalf("first December call: got %+v, want allowed, Count 1, Remaining 0", d)
		}
		if d := mustAdmit(t, m, id); d.Allowed || d.Count != 1 {
			t.Fatalf("second December call: got %+v, want refused (limit carries over) with Count 1", d)
		}
	})
}

// TestInvalidKeyID checks that keyIDs that would break the hash tag are
// refused with ErrInvalidKeyID, before any store access.
func TestInvalidKeyID(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		m, _ := impl.new(t, Options{}, newFakeClock(testStart))
		for _, id := range []string{"", "a{b", "a}b", "{x}"} {
			if _, err := m.Admit(context.Background(), id); !errors.Is(err, ErrInvalidKeyID) {
				t.Errorf("Admit(%q) error = %v, want ErrInvalidKeyID", id, err)
			}
			if _, err := m.Usage(context.Background(), id); !errors.Is(err, ErrInvalidKeyID) {
				t.Errorf("Usage(%q) error = %v, want ErrInvalidKeyID", id, err)
			}
		}
	})
}

// TestPing checks readiness of a working store.
func TestPing(t *testing.T) {
	forEach(t, func(t *testing.T, impl implementation) {
		m, _ := impl.new(t, Options{}, newFakeClock(testStart))
		if err := m.Ping(context.Background()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}
