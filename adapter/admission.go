package adapter

import (
	"context"
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
