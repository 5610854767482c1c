package adapter

import (
	"context"
	"time"

	"github.com/restmcp/restmcp/metering"
)

// EventBatcher is implemented by a [Meter] that can write many usage
// events at once (one Redis round trip for a batch). With one, the adapter
// queues usage events and a single writer sends them in batches, so the
// store's work per call does not grow by a round trip per event.
type EventBatcher interface {
	// RecordEvents appends events in order.
	RecordEvents(ctx context.Context, events []metering.Event) error
}

// Usage events queued for the writer, and the most one batch carries.
const (
	eventQueueSize = 4096
	maxEventBatch  = 256
)

// eventWriter sends queued usage events in batches: it waits for one, takes
// every event already queued (up to maxEventBatch), and writes them in one
// call. Under load batches grow; at rest each event goes at once.
type eventWriter struct {
	in   chan metering.Event
	done chan struct{}
}

func (s *Server) startEventWriter(b EventBatcher) {
	w := &eventWriter{in: make(chan metering.Event, eventQueueSize), done: make(chan struct{})}
	s.events = w
	go func() {
		defer close(w.done)
		batch := make([]metering.Event, 0, maxEventBatch)
		for e := range w.in {
			batch = append(batch[:0], e)
		fill:
			for len(batch) < maxEventBatch {
				select {
				case e, ok := <-w.in:
					if !ok {
						break fill
					}
					batch = append(batch, e)
				default:
					break fill
				}
			}
			s.writeEvents(b, batch)
		}
	}()
}

// writeEvents writes one batch under MeterTimeout; a failure is logged at
// Warn with the count (billing loses those events; the calls themselves
// were counted by AdmitCall).
func (s *Server) writeEvents(b EventBatcher, batch []metering.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.MeterTimeout)
	defer cancel()
	t := time.Now()
	err := b.RecordEvents(ctx, batch)
	s.metrics.meterOp("event", time.Since(t), err)
	s.metrics.eventsDone(len(batch), err)
	if err != nil {
		s.logger.Warn("recording usage events failed", "events", len(batch), "error", err.Error())
	}
}

// closeEvents stops the writer once every queued event is written, or
// when ctx ends.
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
