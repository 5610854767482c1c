package adapter

import (
	"context"
	"fmt"
	"time"

	"github.com/restmcp/restmcp/metering"
)

// What follows a call: its outcome counted, the refund and the usage
// event written off the response path, and Close, which waits for them.

// maxPendingAfterCall bounds the refunds and usage events being written in
// the background; beyond it they are written on the request's goroutine
// (back-pressure rather than loss).
const maxPendingAfterCall = 1024

// afterCall counts the call's outcome in the metrics and, with a Meter,
// refunds the call when the policy says so and records its usage event.
// Those writes run off the response path (the response does not wait for a
// second Redis round trip), detached from the request, so a client that
// hung up is still metered, and under MeterTimeout (queueUsage).
// [Server.Close] waits for them.
func (s *Server) afterCall(ctx context.Context, a *admission, outcome metering.Outcome, status int, bytes int64, failed bool) {
	end := time.Now()
	s.callDone(ctx, a.call.Tool, outcome)
	if s.opts.Meter == nil {
		return
	}
	refund := a.metered && s.opts.Counting.Refunds(status, failed)
	e := metering.Event{
		KeyID: a.call.KeyID, API: a.api, Tool: a.call.Tool, Outcome: outcome,
		UpstreamStatus: status, Latency: end.Sub(a.start), Bytes: bytes, Time: a.start,
	}
	if a.metered {
		e.Cost = a.decision.Cost
	}
	if a.call.Plan != nil {
		e.Plan = a.call.Plan.Name
	}
	j := usageJob{event: e, hasEvent: true}
	if refund {
		j.refunds = []*meteredCall{{call: a.call, decision: a.decision}}
		if a.also != nil {
			j.refunds = append(j.refunds, a.also)
		}
	}
	s.queueUsage(j)
}

// background runs f on its own goroutine while fewer than
// maxPendingAfterCall are pending, else on the caller's (back-pressure).
// [Server.Close] waits for it.
func (s *Server) background(f func()) {
	select {
	case s.pending <- struct{}{}:
		s.afterWG.Add(1)
		go func() {
			defer func() { <-s.pending; s.afterWG.Done() }()
			f()
		}()
	default:
		f()
	}
}

// Close waits, until ctx ends, for the tool calls still running (see
// HaltCalls) and the refunds and usage events still being written in the
// background. Call it after the HTTP server has stopped taking requests.
func (s *Server) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.running.Wait(); s.afterWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("adapter: refunds and usage events still pending: %w", ctx.Err())
	}
	if err := s.closeEvents(ctx); err != nil {
		return fmt.Errorf("adapter: usage events still queued: %w", err)
	}
	return nil
}
