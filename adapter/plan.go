package adapter

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/restmcp/restmcp/metering"
)

// The interfaces below are what the adapter needs from plans and metering,
// declared here by their consumer and satisfied by the metering package's
// types without adapters (the value types of one call, metering.Call,
// Decision, Event, Outcome and Plan, exist once, in metering, which
// imports neither gin nor the go-sdk).

// KeyResolver maps a caller's API key to its plan; *metering.Registry
// implements it.
type KeyResolver interface {
	// ResolveKey returns the plan of key. An empty key (a call without a
	// key under Options.AllowAnonymous) resolves to the default plan. An
	// error wrapping metering.ErrUnknownKey or metering.ErrRevokedKey is
	// answered 401 on tools/call and GET /usage; any other error means the
	// key cannot be checked right now and is answered 503 with Retry-After.
	ResolveKey(ctx context.Context, key string) (*metering.Plan, error)
}

// Meter admits and counts tools/call requests under a plan, refunds them,
// records usage events and reads usage; metering.RedisMeter, MemoryMeter
// and OutageMeter implement it. Implementations must be safe for
// concurrent use.
type Meter interface {
	// AdmitCall checks every limit of c.Plan and, when all allow, counts
	// c.Cost, atomically. An error means the store could not decide (the
	// adapter answers 503).
	AdmitCall(ctx context.Context, c metering.Call) (metering.Decision, error)
	// Refund gives back what an allowed call was charged (counting policy
	// success, Options.Counting).
	Refund(ctx context.Context, c metering.Call, d metering.Decision) error
	// RecordEvent appends one usage event for billing pipelines.
	RecordEvent(ctx context.Context, e metering.Event) error
	// Report reads keyID's usage under plan, for GET /usage.
	Report(ctx context.Context, keyID string, plan *metering.Plan) (metering.Report, error)
}

// hasLimitHeaders reports whether d has limit values to report in the
// RateLimit headers.
func hasLimitHeaders(d metering.Decision) bool { return d.Limit > 0 || d.Policy != "" }

// admission is the gate's verdict on one tools/call, handed to the tool
// handler in the request's exchange (the go-sdk keeps the envelope: the
// handler answers with the request's id). A tool handler serves a call only
// with an admission made for its own tool and the caller's key id, and only
// once (see take).
type admission struct {
	start    time.Time
	call     metering.Call
	api      string // the tool's API among several (openapi.Tool.API); "" for one document
	decision metering.Decision
	metered  bool   // AdmitCall allowed the call: refund and event apply
	denied   string // non-empty: the tool is outside the plan; this is the message
	state    atomic.Int32
	// anonymous: admitted for a caller without a key (its KeyID is
	// AnonymousKeyID, or an AddressKeyID in public mode).
	anonymous bool
	// also is the second admission of a public-mode call, under
	// Options.PublicGlobalPlan; nil when there is none. It is refunded
	// whenever the call is.
	also *meteredCall
	// release gives back the call's place under the concurrency caps
	// (admitCall); done calls it once.
	release func()
}

// done gives back the admission's concurrency place, once.
func (a *admission) done() {
	if r := a.release; r != nil {
		a.release = nil
		r()
	}
}

// limits calls f with each decision whose rate-limit headers an admitted
// call's answer carries, in order: its own, then the public global plan's.
func (a *admission) limits(f func(metering.Decision)) {
	if a.metered && hasLimitHeaders(a.decision) {
		f(a.decision)
	}
	if a.also != nil && hasLimitHeaders(a.also.decision) {
		f(a.also.decision)
	}
}

// meteredCall is one admission: the call and the Meter's decision.
type meteredCall struct {
	call     metering.Call
	decision metering.Decision
}

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
