package adapter

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/metering"
)

// batchingMeter is a Meter that is an EventBatcher and a RefundBatcher: it
// records the size of every batch and can hold the writer in its first
// RecordEvents until release is closed.
type batchingMeter struct {
	fakeMeter
	release chan struct{}
	held    chan struct{}

	mu           sync.Mutex
	refundSizes  []int
	eventSizes   []int
	batchedCosts []int64
	once         sync.Once
}

func (m *batchingMeter) Refunds(_ context.Context, rs []metering.RefundRequest) []error {
	m.mu.Lock()
	m.refundSizes = append(m.refundSizes, len(rs))
	m.mu.Unlock()
	return make([]error, len(rs))
}

func (m *batchingMeter) RecordEvents(_ context.Context, events []metering.Event) error {
	m.once.Do(func() { close(m.held); <-m.release })
	m.mu.Lock()
	defer m.mu.Unlock()
	m.eventSizes = append(m.eventSizes, len(events))
	for _, e := range events {
		m.batchedCosts = append(m.batchedCosts, e.Cost)
	}
	return nil
}

// TestUsageBatches: with a Meter that batches, the writer sends the refunds
// of everything queued while it was busy in one Refunds call and their
// events in one RecordEvents call, each event at cost 0 once its call is
// refunded, in the order the calls were made; no refund goes one by one.
func TestUsageBatches(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &batchingMeter{fakeMeter: fakeMeter{admit: allowedDecision}, release: make(chan struct{}), held: make(chan struct{})}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter, Counting: metering.CountSuccess})
	key := map[string]string{"X-API-Key": "k-free"}
	post(t, srv.URL+"/mcp", toolsCallBody(1, "always_fails", `{}`), key)
	<-meter.held // the writer is in the first call's RecordEvents
	for i := range 5 {
		post(t, srv.URL+"/mcp", toolsCallBody(2+i, "always_fails", `{}`), key)
	}
	post(t, srv.URL+"/mcp", toolsCallBody(7, "get_quote", `{"symbol":"AAPL"}`), key)
	close(meter.release)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	meter.mu.Lock()
	defer meter.mu.Unlock()
	if diff := cmp.Diff([]int{1, 5}, meter.refundSizes); diff != "" {
		t.Errorf("Refunds batch sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 6}, meter.eventSizes); diff != "" {
		t.Errorf("RecordEvents batch sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0, 0, 0, 0, 0, 0, 1}, meter.batchedCosts); diff != "" {
		t.Errorf("event costs (-want +got):\n%s", diff)
	}
	if n := meter.refunds.Load(); n != 0 {
		t.Errorf("%d refunds one by one", n)
	}
}

// The meters restmcp wires batch both.
var (
	_ RefundBatcher = (*metering.RedisMeter)(nil)
	_ RefundBatcher = (*metering.MemoryMeter)(nil)
	_ RefundBatcher = (*metering.OutageMeter)(nil)
	_ EventBatcher  = (*metering.RedisMeter)(nil)
	_ EventBatcher  = (*metering.MemoryMeter)(nil)
	_ EventBatcher  = (*metering.OutageMeter)(nil)
)
