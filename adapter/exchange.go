package adapter

import (
	"context"
	"net/http"
	"time"

	"github.com/restmcp/restmcp/adapter/task"
	"github.com/restmcp/restmcp/metering"
)

// exchange is the state of one HTTP request to restmcp, created once by the
// first middleware and carried, under one context key, to every later
// middleware, the tool handler and the after-call writer. Each field is set
// by one middleware (named beside it) and only read after that.
type exchange struct {
	requestID string       // requestID
	table     *toolTable   // requestID: the tool table this request is served from
	body      []byte       // bodyLimit: the POST body, read once
	cred      *credential  // extractCredential; never nil after it
	noCred    credential   // what cred points at before extractCredential
	forward   http.Header  // extractCredential: the Options.ForwardHeaders the caller sent
	sse       *sseOrigin   // serveLegacySSE: set on the GET that opens a legacy SSE stream
	msg       *rpcMessage  // decode: restmcp's one reading of the body
	handler   http.Handler // decode: the go-sdk handler chosen by Accept
	admission *admission   // gate: the verdict on a tools/call
	// upstream is the credential upstream calls carry when it is not the
	// caller's own: the token the gate obtained for an identity
	// provider's caller (idpAdmit). Nil: cred. Read it with upstreamCred.
	upstream *credential
	// takesTasks is set by fastCall for a 2026-07-28 tools/call that
	// declares the tasks extension; task is the task the tool handler made of the call's job, for a
	// client that takes tasks: fastCall answers it (tasks.go).
	takesTasks bool
	task       *task.Task
	// writesDirect is set by fastCall when the tool handler's result goes
	// straight to its writer: a large JSON answer may then be read into a
	// pooled buffer and written from it (pooledbody.go).
	writesDirect bool
	// inner is the operation call inside a compact-mode call_operation, as
	// the gate read it; catalogPlan is the caller's plan for
	// search_operations and describe_operation (nil: every operation).
	// Set by gate.
	inner       *innerCall
	catalogPlan *metering.Plan
	// clientGone is closed when the client has gone (the HTTP request's
	// context ends): the tool handler cancels its upstream call then. The
	// go-sdk does not pass that cancellation to handlers on the pre-2026
	// wire. Set by decode.
	clientGone <-chan struct{}
	// call is what the access log says of a tools/call, filled in as the
	// call goes (on the request's goroutine, or the SDK's before it
	// answers); zero for other methods.
	call callRecord
}

// upstreamCred is the credential the call's upstream requests carry.
func (ex *exchange) upstreamCred() *credential {
	if ex.upstream != nil {
		return ex.upstream
	}
	return ex.cred
}

// callRecord is one tools/call as the access log reports it.
type callRecord struct {
	outcome  metering.Outcome // "" until the call has an outcome
	decision string           // the meter's: allowed, refused, degraded, error; "" without a Meter
	cost     int64            // units charged at admission
	status   int              // the upstream's HTTP status; 0 when none arrived
	isError  bool             // the result was an error result
	meter    time.Duration    // key lookup and admission
	upstream time.Duration    // the upstream request, body included
}

type exchangeKey struct{}

// exchangeFrom returns the request's exchange, or an empty one when ctx did
// not come through the middleware.
func exchangeFrom(ctx context.Context) *exchange {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return ex
	}
	ex := &exchange{}
	ex.cred = &ex.noCred
	return ex
}

// credentialFrom returns the caller's credential, or an empty one.
func credentialFrom(ctx context.Context) *credential {
	if c := exchangeFrom(ctx).cred; c != nil {
		return c
	}
	return &credential{}
}

func requestIDFrom(ctx context.Context) string { return exchangeFrom(ctx).requestID }

// Admission states: an admission is taken by exactly one tool handler, or
// settled by the gate when no handler took it (the transport refused the
// call after admission, or the client left first).
const (
	admissionPending int32 = iota
	admissionTaken
	admissionSettled
)

// take marks a as used by the tool handler; false when it already was, or
// the gate has settled it.
func (a *admission) take() bool { return a.state.CompareAndSwap(admissionPending, admissionTaken) }

// settle marks a as never run; false when a handler took it.
func (a *admission) settle() bool { return a.state.CompareAndSwap(admissionPending, admissionSettled) }
