package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// The interfaces below are what the adapter needs from plans and metering.
// The metering package has the real implementations; cmd/restmcp adapts
// them with small shims, so that adapter never imports metering (STYLE.md:
// the consumer declares the interface). The types are deliberately plain:
// names, numbers and durations.

var (
	// ErrUnknownKey is returned (possibly wrapped) by a [KeyResolver] for a
	// key it does not know; the adapter answers 401.
	ErrUnknownKey = errors.New("unknown API key")
	// ErrRevokedKey is returned (possibly wrapped) by a [KeyResolver] for a
	// revoked key; the adapter answers 401.
	ErrRevokedKey = errors.New("revoked API key")
)

// KeyResolver maps a caller's API key to its plan.
type KeyResolver interface {
	// ResolveKey returns the plan of key. An empty key (a call without a
	// key under Options.AllowAnonymous) resolves to the default plan. An
	// error wrapping ErrUnknownKey or ErrRevokedKey is answered 401 on
	// tools/call and GET /usage; any other error means the key cannot be
	// checked right now and is answered 503 with Retry-After.
	ResolveKey(ctx context.Context, key string) (Plan, error)
}

// Plan is what a caller's plan decides for one tool. Implementations must
// be safe for concurrent use.
type Plan interface {
	// Name names the plan, for messages, events and logs.
	Name() string
	// Allows reports whether the plan lets its keys call tool, whose
	// OpenAPI tags are tags.
	Allows(tool string, tags []string) bool
	// Cost returns the units one call of tool costs; specCost is the
	// operation's x-restmcp-cost (0 when it has none).
	Cost(tool string, specCost int64) int64
	// DeniedMessage is the tool-error text for a call of a tool outside the
	// plan: it names the tool, the plan and how to upgrade.
	DeniedMessage(tool string) string
}

// Meter admits and counts tools/call requests under a plan, refunds them,
// records usage events and reads usage. Implementations must be safe for
// concurrent use.
type Meter interface {
	// AdmitCall checks every limit of c.Plan and, when all allow, counts
	// c.Cost, atomically. An error means the store could not decide (the
	// adapter answers 503).
	AdmitCall(ctx context.Context, c Call) (Decision, error)
	// Refund gives back what an allowed call was charged
	// (Options.RefundFailedCalls).
	Refund(ctx context.Context, c Call, d Decision) error
	// RecordEvent appends one usage event for billing pipelines.
	RecordEvent(ctx context.Context, e Event) error
	// Report reads keyID's usage under plan. The adapter does not look
	// inside the value: GET /usage answers it encoded as JSON.
	Report(ctx context.Context, keyID string, plan Plan) (any, error)
}

// Call is one tools/call to admit.
type Call struct {
	// KeyID is [KeyID] of the caller's key, or AnonymousKeyID; never the key.
	KeyID string
	// Plan is the caller's plan; nil when Options.Keys is nil.
	Plan Plan
	// Tool is the MCP tool name.
	Tool string
	// Cost is the units the call costs: Plan.Cost(Tool, the tool's
	// x-restmcp-cost), or without a plan the x-restmcp-cost, else 1.
	Cost int64
}

// Decision is a [Meter]'s answer for one call. Limit, Remaining, Reset,
// Policy and Window describe the most restrictive limit and feed the
// RateLimit headers; a Decision with Limit 0 and no Policy has none to
// report (no limits, or admitted while the store was down), and the
// headers are left out.
type Decision struct {
	// Allowed reports whether the call may proceed.
	Allowed bool
	// Limit is the calls (rate limit) or units (quota) per Window.
	Limit int64
	// Remaining is what is left of Limit after this call; 0 when refused.
	Remaining int64
	// Reset is the time until the limit has fully recovered (rate limit) or
	// its period ends (quota).
	Reset time.Duration
	// RetryAfter is, for a refused call, the exact wait until the call
	// would be admitted; sent rounded up to whole seconds, at least 1.
	RetryAfter time.Duration
	// Policy names the limit described ("per_minute", "month", …).
	Policy string
	// Window is the length of Policy's window or calendar period.
	Window time.Duration
	// RefusedBy names the limit that refused the call; "" when allowed.
	RefusedBy string
	// Cost is the units charged: the call's cost when allowed, else 0.
	Cost int64
	// At is when the call was admitted, by the store's clock; Refund uses
	// it to find the periods charged.
	At time.Time
	// Degraded is set when the call was admitted without checking limits
	// because the store was down and the outage policy is fail_open.
	Degraded bool
}

// hasHeaders reports whether d has limit values to report.
func (d Decision) hasHeaders() bool { return d.Limit > 0 || d.Policy != "" }

// Outcome classifies how a tools/call ended, in usage events and metrics.
type Outcome string

// Outcomes. The values are those of the metering package's usage events.
const (
	// OutcomeOK: the upstream answered 2xx.
	OutcomeOK Outcome = "ok"
	// OutcomeUpstreamError: the upstream answered with a non-2xx status.
	OutcomeUpstreamError Outcome = "upstream_error"
	// OutcomeUpstreamFailed: no usable answer (timeout, refused
	// connection, unreadable body).
	OutcomeUpstreamFailed Outcome = "upstream_failed"
	// OutcomeRefused: refused by a rate limit or quota (429).
	OutcomeRefused Outcome = "refused"
	// OutcomeNotInPlan: the tool is outside the caller's plan.
	OutcomeNotInPlan Outcome = "not_in_plan"
	// OutcomeInvalidArguments: the arguments failed the tool's schema, or
	// the operation needs a credential the caller did not send; nothing
	// was sent upstream.
	OutcomeInvalidArguments Outcome = "invalid_arguments"
	// OutcomeUnavailable: the meter or key store could not decide (503).
	OutcomeUnavailable Outcome = "unavailable"
	// OutcomeNotRun: admitted, then refused by the MCP transport before
	// any tool handler ran it (or the client left first); refunded.
	OutcomeNotRun Outcome = "not_run"
	// OutcomeUnauthorized: no key, or an unknown or revoked one (401).
	// Metrics only: no usage event is recorded for it.
	OutcomeUnauthorized Outcome = "unauthorized"
)

// Event is one tools/call as recorded by [Meter.RecordEvent].
type Event struct {
	// KeyID is the caller's key id, never the key.
	KeyID string
	// Plan names the caller's plan; "" without one.
	Plan string
	// Tool is the MCP tool name.
	Tool string
	// Cost is the units charged: 0 when not admitted or refunded.
	Cost int64
	// Outcome classifies how the call ended.
	Outcome Outcome
	// UpstreamStatus is the upstream's HTTP status; 0 when none arrived.
	UpstreamStatus int
	// Latency is the time from the call's arrival to its result.
	Latency time.Duration
	// Bytes is the size of the upstream response body read.
	Bytes int64
	// Time is when the call arrived.
	Time time.Time
}

// admission is the gate's verdict on one tools/call, handed to the tool
// handler in the request's exchange (the go-sdk keeps the envelope: the
// handler answers with the request's id). A tool handler serves a call only
// with an admission made for its own tool and the caller's key id, and only
// once (see take).
type admission struct {
	start    time.Time
	call     Call
	decision Decision
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
}

// meteredCall is one admission: the call and the Meter's decision.
type meteredCall struct {
	call     Call
	decision Decision
}

// maxPendingAfterCall bounds the refunds and usage events being written in
// the background; beyond it they are written on the request's goroutine
// (back-pressure rather than loss).
const maxPendingAfterCall = 1024

// afterCall counts the call's outcome in the metrics and, with a Meter,
// refunds the call when the policy says so and records its usage event.
// Those writes run off the response path (the response does not wait for a
// second Redis round trip), under context.WithoutCancel, so a client that
// hung up is still metered, and MeterTimeout. [Server.Close] waits for
// them.
func (s *Server) afterCall(ctx context.Context, a *admission, outcome Outcome, status int, bytes int64, failed bool) {
	end := time.Now()
	s.metrics.callDone(a.call.Tool, outcome)
	if s.opts.Meter == nil {
		return
	}
	refund := a.metered && s.opts.RefundFailedCalls && (failed || status >= 500)
	e := Event{
		KeyID: a.call.KeyID, Tool: a.call.Tool, Outcome: outcome,
		UpstreamStatus: status, Latency: end.Sub(a.start), Bytes: bytes, Time: a.start,
	}
	if a.metered {
		e.Cost = a.decision.Cost
	}
	if a.call.Plan != nil {
		e.Plan = a.call.Plan.Name()
	}
	s.background(ctx, func(ctx context.Context) {
		if refund {
			t := time.Now()
			err := s.opts.Meter.Refund(ctx, a.call, a.decision)
			s.metrics.meterOp("refund", time.Since(t), err)
			if err != nil {
				s.logger.Warn("refund failed", "key_id", a.call.KeyID, "tool", a.call.Tool, "error", err.Error())
			} else {
				e.Cost = 0
				s.metrics.refunds.Inc()
			}
			if g := a.also; g != nil {
				err := s.opts.Meter.Refund(ctx, g.call, g.decision)
				s.metrics.meterOp("refund", time.Since(t), err)
				if err != nil {
					s.logger.Warn("refund failed", "key_id", g.call.KeyID, "tool", g.call.Tool, "error", err.Error())
				}
			}
		}
		s.recordEvent(ctx, e)
	})
}

// background runs f with a detached context bounded by MeterTimeout, on
// its own goroutine while fewer than maxPendingAfterCall are pending, else
// on the caller's.
func (s *Server) background(ctx context.Context, f func(context.Context)) {
	run := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.MeterTimeout)
		defer cancel()
		f(ctx)
	}
	select {
	case s.pending <- struct{}{}:
		s.afterWG.Add(1)
		go func() {
			defer func() { <-s.pending; s.afterWG.Done() }()
			run()
		}()
	default:
		run()
	}
}

// Close waits, until ctx ends, for the refunds and usage events still being
// written in the background. Call it after the HTTP server has stopped
// taking requests.
func (s *Server) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.afterWG.Wait(); close(done) }()
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

// recordEvent writes e, timing it; failures are logged at Warn (billing
// loses one event; the call itself was counted by AdmitCall).
func (s *Server) recordEvent(ctx context.Context, e Event) {
	if s.events != nil {
		select {
		case s.events.in <- e:
			return
		default: // the queue is full: write this one here (back-pressure, not loss)
		}
	}
	t := time.Now()
	err := s.opts.Meter.RecordEvent(ctx, e)
	s.metrics.meterOp("event", time.Since(t), err)
	s.metrics.eventsDone(1, err)
	if err != nil {
		s.logger.Warn("recording usage event failed", "key_id", e.KeyID, "tool", e.Tool, "error", err.Error())
	}
}
