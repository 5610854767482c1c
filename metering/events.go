package metering

import (
	"strconv"
	"time"
)

// DefaultEventStream is the Redis stream usage events are appended to.
const DefaultEventStream = KeyPrefix + "events"

// DefaultEventMaxLen is the approximate number of events the stream keeps.
const DefaultEventMaxLen = 1_000_000

// MemoryEventMax is the most events a MemoryMeter keeps.
const MemoryEventMax = 10_000

// Outcome classifies how one tools/call ended, for usage events and
// metrics. The adapter chooses it; these are the values it uses.
type Outcome string

const (
	// OutcomeOK: the upstream answered 2xx.
	OutcomeOK Outcome = "ok"
	// OutcomeUpstreamError: the upstream answered with a non-2xx status.
	OutcomeUpstreamError Outcome = "upstream_error"
	// OutcomeUpstreamFailed: no usable answer (timeout, refused
	// connection, client gone, unreadable body).
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
	// OutcomeNotRun: admitted, then refused by the MCP transport before the
	// tool ran (or the client left first); refunded, cost 0.
	OutcomeNotRun Outcome = "not_run"
	// OutcomeUnauthorized: no key, or an unknown or revoked one (401).
	// Metrics only: no usage event is recorded for it.
	OutcomeUnauthorized Outcome = "unauthorized"
	// OutcomeJobOK, OutcomeJobError and OutcomeJobCancelled record, once,
	// how a job that a call started (HTTP 202) ended when it ended after
	// the call answered: its result, an error result (a failed job
	// included), or cancelled. Cost 0: the starting call was metered.
	OutcomeJobOK        Outcome = "job_ok"
	OutcomeJobError     Outcome = "job_error"
	OutcomeJobCancelled Outcome = "job_cancelled"
)

// Event is one tools/call, for billing pipelines.
//
// RedisMeter.RecordEvent appends it to the stream Options.EventStream
// (default "restmcp:events") with XADD … MAXLEN ~ Options.EventMaxLen * ,
// so each entry's ID is Redis's time-ordered stream ID and its fields are,
// in this order, all as strings:
//
//	key_id           the caller's key id (12 hex digits), never the key
//	plan             the plan name ("" when the key had none, e.g. refused before lookup)
//	tool             the MCP tool name
//	cost             units charged, a decimal integer (0 when not admitted or refunded)
//	outcome          one of the Outcome values: ok, upstream_error, upstream_failed,
//	                 refused, not_in_plan, invalid_arguments, unavailable,
//	                 not_run
//	upstream_status  the upstream HTTP status, "0" when none arrived
//	latency_ms       time spent on the call in milliseconds, 3 decimals ("12.345")
//	bytes            bytes of the upstream response body read
//	time             when the call started, UTC, RFC 3339 with up to 9 fractional
//	                 digits, trailing zeros dropped (Go's time.RFC3339Nano):
//	                 "2026-11-15T12:00:00.1234Z", "2026-11-15T12:00:00Z"
type Event struct {
	// KeyID is the caller's key id, never the key.
	KeyID string
	// Plan names the caller's plan; may be empty.
	Plan string
	// API is the tool's API when several documents are served on one
	// endpoint (docs/apis.md); "" for a single document, and then the
	// entry has no api field.
	API string
	// Tool is the MCP tool name.
	Tool string
	// Cost is the units charged: Decision.Cost, or 0 when refunded.
	Cost int64
	// Outcome classifies how the call ended.
	Outcome Outcome
	// UpstreamStatus is the upstream's HTTP status; 0 when none arrived.
	UpstreamStatus int
	// Latency is the call's duration, kept to the microsecond.
	Latency time.Duration
	// Bytes is the size of the upstream response body read.
	Bytes int64
	// Time is when the call started; zero means the meter's clock at
	// RecordEvent.
	Time time.Time
}

// values returns the stream entry's fields and values in order; "api"
// only when the event has one.
func (e Event) values() []string {
	v := make([]string, 0, 20)
	v = append(v, "key_id", e.KeyID, "plan", e.Plan)
	if e.API != "" {
		v = append(v, "api", e.API)
	}
	return append(v,
		"tool", e.Tool,
		"cost", strconv.FormatInt(e.Cost, 10),
		"outcome", string(e.Outcome),
		"upstream_status", strconv.Itoa(e.UpstreamStatus),
		"latency_ms", strconv.FormatFloat(float64(e.Latency.Microseconds())/1000, 'f', 3, 64),
		"bytes", strconv.FormatInt(e.Bytes, 10),
		"time", e.Time.UTC().Format(time.RFC3339Nano),
	)
}
