package metering

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// refunder is what the adapter's usage writer calls.
type refunder interface {
	Refunds(ctx context.Context, rs []RefundRequest) []error
}

// TestRefundsMatchRefund: a batch of refunds leaves exactly the counters
// that refunding one by one leaves, across two days and two keys, with the
// calls that need no refund (refused, Degraded) and a bad key id answered
// as Refund answers them. On Redis the batch is sent once more with the
// script's source when the server has lost it (SCRIPT FLUSH).
func TestRefundsMatchRefund(t *testing.T) {
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    quotas: {day: 100, month: 1000}\n    costs: {two: 2}\n").Plan("p")
	for _, flush := range []bool{false, true} {
		forEach(t, func(t *testing.T, impl implementation) {
			if flush && impl.name == "memory" {
				return
			}
			ctx := context.Background()
			clk := newFakeClock(time.Date(2026, time.November, 30, 23, 59, 58, 0, time.UTC))
			m, ids := planImpl(t, impl, clk, 4)
			// ids[0], ids[1] are refunded in a batch; ids[2], ids[3] one by one.
			var batch, single []RefundRequest
			for day := range 2 {
				for i, tool := range []string{"two", "one", "two"} {
					for k := range 2 {
						c := Call{KeyID: ids[k], Plan: p, Tool: tool, Cost: p.Cost(tool, 1)}
						c2 := c
						c2.KeyID = ids[k+2]
						d, d2 := mustAdmitCall(t, m, c), mustAdmitCall(t, m, c2)
						if i != 1 { // refund the "two" calls
							batch = append(batch, RefundRequest{c, d})
							single = append(single, RefundRequest{c2, d2})
						}
					}
				}
				if day == 0 {
					clk.Advance(3 * time.Second) // 1 December: a new day and month
				}
			}
			extra := []RefundRequest{
				{Call{KeyID: ids[0], Plan: p, Tool: "two", Cost: 2}, Decision{Plan: "p", At: clk.Now()}},                 // refused: nothing to give back
				{Call{KeyID: ids[0], Plan: p, Tool: "two", Cost: 2}, Decision{Allowed: true, Degraded: true, Cost: 2}},   // Degraded: nothing here
				{Call{KeyID: "bad{id}", Plan: p, Tool: "two", Cost: 2}, Decision{Allowed: true, Cost: 2, At: clk.Now()}}, // refused by Refund
			}
			batch = append(batch, extra...)
			if flush {
				if err := testRedis(t).ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			errs := m.(refunder).Refunds(ctx, batch)
			if len(errs) != len(batch) {
				t.Fatalf("%d errors for %d refunds", len(errs), len(batch))
			}
			for i, err := range errs {
				if want := i == len(batch)-1; (err != nil) != want || want && !errors.Is(err, ErrInvalidKeyID) {
					t.Errorf("refund %d: %v", i, err)
				}
			}
			for _, r := range single {
				if err := m.Refund(ctx, r.Call, r.Decision); err != nil {
					t.Fatal(err)
				}
			}
			for k := range 2 {
				got, want := mustReport(t, m, ids[k], p), mustReport(t, m, ids[k+2], p)
				want.KeyID = got.KeyID
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("key %d after the batch (-one by one +batch):\n%s", k, diff)
				}
				if got.Periods[0].Used != 1 || got.Periods[0].Tools["two"] != (ToolUsage{0, 0}) {
					t.Errorf("key %d: %+v, want 1 unit used today (the one call of one)", k, got.Periods)
				}
			}
		})
	}
}
