package adapter

import (
	"context"
	"time"

	"github.com/restmcp/restmcp/metering"
)

// EventBatcher is implemented by a [Meter] that can write many usage
// events at once (one Redis round trip for a batch). With one, the adapter
// queues what each call leaves to write (its refunds, then its usage
// event) and a single writer sends them in batches, so the store's work
// per call does not grow by a round trip per event.
type EventBatcher interface {
	// RecordEvents appends events in order.
	RecordEvents(ctx context.Context, events []metering.Event) error
}

// RefundBatcher is implemented by a [Meter] that can refund many calls at
// once (one pipelined Redis round trip); the writer uses it for the refunds
// of a batch. errs[i] is what Refund would return for rs[i].
type RefundBatcher interface {
	Refunds(ctx context.Context, rs []metering.RefundRequest) (errs []error)
}

// Usage work queued for the writer, and the most one batch carries.
const (
	eventQueueSize = 4096
	maxEventBatch  = 256
)

// usageJob is what one call leaves to write after its response: the
// admissions to refund (none for most calls; the caller's own first), then
// its usage event, whose cost a successful refund of the caller's own
// admission clears.
type usageJob struct {
	refunds  []*meteredCall
	event    metering.Event
	hasEvent bool
}

// eventWriter sends queued usage jobs in batches: it waits for one, takes
// every job already queued (up to maxEventBatch), and writes their refunds
// in one call and then their events in one call. Under load batches grow;
// at rest each job goes at once. Jobs are written in the order queued.
type eventWriter struct {
	in   chan usageJob
	done chan struct{}
}

func (s *Server) startEventWriter() {
	w := &eventWriter{in: make(chan usageJob, eventQueueSize), done: make(chan struct{})}
	s.events = w
	go func() {
		defer close(w.done)
		batch := make([]usageJob, 0, maxEventBatch)
		for j := range w.in {
			batch = append(batch[:0], j)
		fill:
			for len(batch) < maxEventBatch {
				select {
				case j, ok := <-w.in:
					if !ok {
						break fill
					}
					batch = append(batch, j)
				default:
					break fill
				}
			}
			s.writeUsage(batch)
		}
	}()
}

// queueUsage hands j to the writer; without one, or when its queue is full
// (back-pressure, not loss), j is written in the background. Either way it
// is detached from the request: a client that hung up is still metered.
// A Meter that never waits on a store (inMemory: metering.MemoryMeter)
// is written at once, on the caller's goroutine: its refund and event are
// a lock each, where handing them to another goroutine woke that goroutine
// for every call (about a tenth of a call's CPU at concurrency 1).
func (s *Server) queueUsage(j usageJob) {
	if !s.meterWaits {
		s.writeUsage([]usageJob{j})
		return
	}
	if s.events != nil {
		select {
		case s.events.in <- j:
			return
		default:
		}
	}
	s.writeUsageLater(j)
}

// writeUsageLater writes j in the background. It is its own function so
// that j, captured here, is not moved to the heap on queueUsage's path.
//
//go:noinline
func (s *Server) writeUsageLater(j usageJob) {
	s.background(func() { s.writeUsage([]usageJob{j}) })
}

// writeUsage makes the refunds of batch, in one call when the Meter is a
// RefundBatcher, each under MeterTimeout, then records its events with the
// costs the refunds cleared, in one call when it is an EventBatcher. Each
// failure is logged at Warn (billing loses those events; the calls
// themselves were counted by AdmitCall).
func (s *Server) writeUsage(batch []usageJob) {
	var reqs []metering.RefundRequest
	for _, j := range batch {
		for _, m := range j.refunds {
			reqs = append(reqs, metering.RefundRequest{Call: m.call, Decision: m.decision})
		}
	}
	errs := s.refund(reqs)
	events := make([]metering.Event, 0, len(batch))
	k := 0
	for _, j := range batch {
		if len(j.refunds) > 0 && errs[k] == nil {
			j.event.Cost = 0
		}
		k += len(j.refunds)
		if j.hasEvent {
			events = append(events, j.event)
		}
	}
	if len(events) > 0 {
		s.writeEvents(events)
	}
}

// refund makes reqs under MeterTimeout and returns each one's error, with
// its metrics and a Warn line for each failure.
func (s *Server) refund(reqs []metering.RefundRequest) []error {
	if len(reqs) == 0 {
		return nil
	}
	ctx, cancel := s.meterContext(context.Background(), s.meterWaits)
	defer cancel()
	t := time.Now()
	var errs []error
	if b, ok := s.opts.Meter.(RefundBatcher); ok {
		errs = b.Refunds(ctx, reqs)
	} else {
		errs = make([]error, len(reqs))
		for i, r := range reqs {
			errs[i] = s.opts.Meter.Refund(ctx, r.Call, r.Decision)
		}
	}
	took := time.Since(t)
	for i, err := range errs {
		s.metrics.meterOp("refund", took, err)
		if err != nil {
			s.logger.Warn("refund failed", "key_id", reqs[i].Call.KeyID, "tool", reqs[i].Call.Tool, "error", err.Error())
			continue
		}
		s.metrics.refunds.Inc()
	}
	return errs
}

// writeEvents records events under MeterTimeout, in one call when the
// Meter is an EventBatcher.
func (s *Server) writeEvents(events []metering.Event) {
	ctx, cancel := s.meterContext(context.Background(), s.meterWaits)
	defer cancel()
	t := time.Now()
	if b, ok := s.opts.Meter.(EventBatcher); ok {
		err := b.RecordEvents(ctx, events)
		s.metrics.meterOp("event", time.Since(t), err)
		s.metrics.eventsDone(len(events), err)
		if err != nil {
			s.logger.Warn("recording usage events failed", "events", len(events), "error", err.Error())
		}
		return
	}
	for _, e := range events {
		t := time.Now()
		err := s.opts.Meter.RecordEvent(ctx, e)
		s.metrics.meterOp("event", time.Since(t), err)
		s.metrics.eventsDone(1, err)
		if err != nil {
			s.logger.Warn("recording usage event failed", "key_id", e.KeyID, "tool", e.Tool, "error", err.Error())
		}
	}
}

// closeEvents stops the writer once every queued job is written, or when
// ctx ends.
func (s *Server) closeEvents(ctx context.Context) error {
	if s.events == nil {
		return nil
	}
	s.closeOnce.Do(func() { close(s.events.in) })
	select {
	case <-s.events.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
