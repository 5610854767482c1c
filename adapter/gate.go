package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// The gate: every tools/call (and resources/read of a configured resource)
// is admitted here before it runs. The admission itself (admitCall) is a
// value: it returns an admission or a *refusal and writes nothing; the HTTP
// path renders a refusal as its status, headers and JSON-RPC error
// (renderRefusal), a legacy SSE stream as a JSON-RPC error (rpcError).

// callDone counts a tools/call's outcome in the metrics and, the first
// time, in the access log's record of the call.
func (s *Server) callDone(ctx context.Context, tool string, o metering.Outcome) {
	s.metrics.callDone(tool, o)
	if rec := &exchangeFrom(ctx).call; rec.outcome == "" {
		rec.outcome = o
	}
}

// decisionName names a Meter's answer, in the metrics and the access log.
func decisionName(d metering.Decision, err error) string {
	switch {
	case err != nil:
		return "error"
	case d.Degraded:
		return "degraded"
	case d.Allowed:
		return "allowed"
	}
	return "refused"
}

// gate admits tools/call requests: transport checks the go-sdk would make
// (checkCall), then authenticate (a key, or anonymous), authorize (the
// key's plan allows the tool) and admit (the Meter). Each refusal is
// answered here; the verdict reaches the tool handler in the exchange.
// initialize, tools/list, ping, notifications and responses pass untouched
// and are never metered; so is a tools/call naming an unknown tool, which
// is answered -32602 once the caller is authenticated. After the SDK has
// answered, an admission no tool handler took (the call never ran) is
// settled: refunded, and recorded with cost 0 (docs/security.md H4-H7).
func (s *Server) gate(c *gin.Context) {
	ex := exchangeFrom(c.Request.Context())
	if !ex.msg.isToolsCall() {
		if ex.msg != nil && ex.msg.method == "resources/read" && len(s.opts.Resources) > 0 {
			s.gateResource(c, ex)
			return
		}
		c.Next()
		return
	}
	start := time.Now()
	c.Writer = &timingWriter{ResponseWriter: c.Writer, ex: ex, start: start}
	if s.opts.ResponseMeta {
		mw := &metaWriter{ResponseWriter: c.Writer, start: start}
		c.Writer = mw
		defer mw.finish(ex.msg.arguments)
	}
	if !s.checkCall(c, ex.msg) {
		return
	}
	a := &admission{start: start}
	name := ex.msg.tool
	if ex.table.compact != nil {
		switch name {
		case toolCallOperation:
			ex.inner = readInnerCall(ex.msg.arguments)
			name = ex.inner.name // "" when unreadable: answered by call_operation, nothing admitted
		case toolSearchOperations, toolDescribeOperation:
			// Catalogue reads, like tools/list: never metered, a key optional.
			s.catalogue(c.Request.Context(), ex)
			c.Next()
			return
		default:
			name = "" // operations are called through call_operation only
		}
	}
	tool := ex.table.tools[name]
	if !s.authenticate(c, ex, tool, a) {
		return
	}
	if tool == nil {
		if s.opts.UnknownToolNotFound && ex.inner == nil {
			// A name that is not (or no longer) a tool: 404, as the
			// deployment asked, instead of the SDK's -32602.
			abortRPC(c, http.StatusNotFound, ex.msg.id, codeMethodNotFound, "Unknown tool: "+truncate(ex.msg.tool, 128))
			return
		}
		c.Next()
		return
	}
	a.call.Tool = tool.Name
	release, ok := s.calls.acquire(tool)
	if !ok {
		s.callDone(c.Request.Context(), tool.Name, metering.OutcomeRefused)
		c.Header("Retry-After", "1")
		abortRPC(c, http.StatusTooManyRequests, ex.msg.id, s.opts.ErrorCodes.RateLimited,
			orMessage(s.opts.Messages.RateLimited, "too many calls in progress on this server; retry in 1 second"))
		return
	}
	defer release()
	s.admitAndRun(c, ex, tool, a)
}

// admitAndRun is the end of the gate for a call of tool (a tools/call or a
// resources/read): the plan gate, then admission, then the rest of the
// chain with the admission on the exchange, then the admission settled if
// nothing below did (a refusal after admission is refunded per Counting).
func (s *Server) admitAndRun(c *gin.Context, ex *exchange, tool *openapi.Tool, a *admission) {
	if !s.authorize(c, ex, tool, a) {
		return
	}
	if a.denied == "" && !s.admit(c, ex, a) {
		return
	}
	ex.admission = a
	c.Next()
	if a.settle() && a.metered {
		s.settleUnrun(c.Request.Context(), a)
	}
}

// authenticate establishes who the caller is: the key id of a usable key,
// or AnonymousKeyID when keys are optional and none was sent. It answers
// 401 for a missing key (when required) or a key with characters no API
// key has (they could split the upstream header, cookie or query it goes
// into), and otherwise resolves the key's plan (Options.Keys: 401 for an
// unknown or revoked key, 503 when the store cannot tell).
func (s *Server) authenticate(c *gin.Context, ex *exchange, tool *openapi.Tool, a *admission) bool {
	if s.opts.PublicMode {
		return s.authenticatePublic(c, ex, tool, a)
	}
	cred, id := ex.cred, ex.msg.id
	refuse := func(msg string) bool {
		if tool != nil {
			s.callDone(c.Request.Context(), tool.Name, metering.OutcomeUnauthorized)
		}
		c.Header("WWW-Authenticate", `ApiKey realm="restmcp", Bearer realm="restmcp"`)
		abortRPC(c, http.StatusUnauthorized, id, s.opts.ErrorCodes.Unauthorized, orMessage(s.opts.Messages.Unauthorized, msg))
		return false
	}
	switch {
	case cred.unsafe != "":
		return refuse("invalid API key: it contains " + cred.unsafe + ", which no API key has; send the key exactly as issued, in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>")
	case cred.keyID != "":
		a.call.KeyID = cred.keyID
	case s.opts.AllowAnonymous:
		a.call.KeyID, a.anonymous = AnonymousKeyID, true
	default:
		return refuse("authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>")
	}
	if s.opts.Keys == nil || tool == nil {
		return true
	}
	plan, ok := s.resolveKey(c, cred, id, tool.Name)
	a.call.Plan = plan
	return ok
}

// authenticatePublic makes the caller of a public-mode call its client
// address: whatever credential the request presented is dropped, so it
// neither changes the budget the call is metered under nor reaches the
// upstream API. The plan is the one Options.Keys gives to no key.
func (s *Server) authenticatePublic(c *gin.Context, ex *exchange, tool *openapi.Tool, a *admission) bool {
	ex.cred = &credential{}
	a.call.KeyID = AddressKeyID(c.ClientIP())
	a.anonymous = true
	if s.opts.Keys == nil || tool == nil {
		return true
	}
	plan, ok := s.resolveKey(c, ex.cred, ex.msg.id, tool.Name)
	a.call.Plan = plan
	return ok
}

// AddressKeyID is the key id of a public-mode caller at a client address:
// "addr-" and the first 12 hex digits of the SHA-256 of the address, an
// IPv6 address by its /64 network (one subscriber's allocation: per-address
// limits would mean nothing if each of its 2^64 addresses had its own).
func AddressKeyID(addr string) string {
	if ip := net.ParseIP(addr); ip != nil && ip.To4() == nil {
		addr = ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return "addr-" + metering.KeyID(addr)
}

// authorize applies the plan gate: a tool outside the caller's plan is
// marked denied (answered by the tool handler as a tool error, so that the
// SDK writes the result envelope; not metered, nothing sent upstream), and
// an allowed one gets its cost.
func (s *Server) authorize(_ *gin.Context, _ *exchange, tool *openapi.Tool, a *admission) bool {
	if a.call.Plan == nil {
		a.call.Cost = max(tool.Cost, 0)
		if a.call.Cost == 0 {
			a.call.Cost = 1
		}
		return true
	}
	if !a.call.Plan.Allows(tool.Name, tool.Tags) {
		a.denied = a.call.Plan.DeniedMessage(tool.Name)
		return true
	}
	a.call.Cost = a.call.Plan.Cost(tool.Name, tool.Cost)
	return true
}

// admit asks the Meter to admit and count the call, sets the rate-limit
// headers, and answers 429 (refused, with Retry-After and a usage event)
// or 503 (the Meter could not decide). Without a Meter every call is
// admitted, unmetered.
func (s *Server) admit(c *gin.Context, ex *exchange, a *admission) bool {
	if s.opts.Meter == nil {
		return true
	}
	d, ok := s.meterAdmit(c, ex.msg.id, a.call, "", func() {
		e := metering.Event{KeyID: a.call.KeyID, Tool: a.call.Tool, Outcome: metering.OutcomeRefused, Latency: time.Since(a.start), Time: a.start}
		if a.call.Plan != nil {
			e.Plan = a.call.Plan.Name
		}
		s.queueUsage(usageJob{event: e, hasEvent: true})
	})
	if !ok {
		return false
	}
	a.decision, a.metered = d, true
	if s.opts.PublicGlobalPlan != nil {
		return s.admitGlobal(c, ex, a)
	}
	return true
}

// admitGlobal admits a public-mode call under Options.PublicGlobalPlan too.
// When that refuses (429) or cannot decide (503), the per-address admission
// is given back: the call does not run.
func (s *Server) admitGlobal(c *gin.Context, ex *exchange, a *admission) bool {
	g := &meteredCall{call: metering.Call{KeyID: PublicKeyID, Plan: s.opts.PublicGlobalPlan, Tool: a.call.Tool,
		Cost: s.opts.PublicGlobalPlan.Cost(a.call.Tool, ex.table.tools[a.call.Tool].Cost)}}
	d, ok := s.meterAdmit(c, ex.msg.id, g.call, "the public limit for all anonymous callers together: ", nil)
	if !ok {
		s.refundAdmission(a, false)
		return false
	}
	g.decision = d
	a.also = g
	return true
}

// meterAdmit runs Meter.AdmitCall for call under MeterTimeout, with its
// metrics and rate-limit headers. When the Meter cannot decide it answers
// 503; when it refuses, it calls refused (if not nil) and answers 429 with
// prefix and the refusal's text. ok reports whether the call was admitted.
func (s *Server) meterAdmit(c *gin.Context, id json.RawMessage, call metering.Call, prefix string, refused func()) (d metering.Decision, ok bool) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
	t := time.Now()
	d, err := s.opts.Meter.AdmitCall(ctx, call)
	cancel()
	took := time.Since(t)
	s.metrics.meterOp("admit", took, err)
	s.metrics.decision(d, err)
	traceAdmission(c.Request.Context(), call, d, err)
	rec := &exchangeFrom(c.Request.Context()).call
	rec.meter += took
	if prefix == "" || err != nil || !d.Allowed { // the caller's own admission, or a refusal of the public global plan's
		rec.decision = decisionName(d, err)
	}
	if prefix == "" {
		rec.cost = d.Cost
	}
	if err != nil {
		s.callDone(c.Request.Context(), call.Tool, metering.OutcomeUnavailable)
		s.logger.Error("metering failed; refusing tools/call", "key_id", call.KeyID, "tool", call.Tool, "error", err.Error())
		c.Header("Retry-After", strconv.Itoa(meterRetryAfterSeconds))
		abortRPC(c, http.StatusServiceUnavailable, id, s.opts.ErrorCodes.Unavailable,
			"usage metering is temporarily unavailable; retry in "+strconv.Itoa(meterRetryAfterSeconds)+" seconds")
		return d, false
	}
	if hasLimitHeaders(d) {
		setRateLimitHeaders(c.Writer.Header(), d)
	}
	if d.Allowed {
		return d, true
	}
	retry := ceilSeconds(d.RetryAfter)
	c.Header("Retry-After", strconv.FormatInt(retry, 10))
	s.callDone(c.Request.Context(), call.Tool, metering.OutcomeRefused)
	if refused != nil {
		refused()
	}
	abortRPC(c, http.StatusTooManyRequests, id, s.opts.ErrorCodes.RateLimited, orMessage(s.opts.Messages.RateLimited, prefix+refusalMessage(call.Plan, d, retry)))
	return d, false
}

// refundAdmission gives back, off the response path, what a's admissions
// were charged; with event, it also records the call as not run (at no
// cost once its own refund is made).
func (s *Server) refundAdmission(a *admission, event bool) {
	j := usageJob{refunds: []*meteredCall{{call: a.call, decision: a.decision}}}
	if a.also != nil {
		j.refunds = append(j.refunds, a.also)
	}
	if event {
		j.hasEvent = true
		j.event = metering.Event{KeyID: a.call.KeyID, Tool: a.call.Tool, Outcome: metering.OutcomeNotRun, Cost: a.decision.Cost, Latency: time.Since(a.start), Time: a.start}
		if a.call.Plan != nil {
			j.event.Plan = a.call.Plan.Name
		}
	}
	s.queueUsage(j)
}

// settleUnrun refunds an admitted call that no tool handler ran (the SDK
// refused the message after admission, or the client left before it was
// dispatched), whatever the counting policy: a call that never ran is not
// billed. Its usage event has outcome not_run and cost 0.
func (s *Server) settleUnrun(ctx context.Context, a *admission) {
	s.logger.Warn("admitted tools/call was not run; refunding it", "key_id", a.call.KeyID, "tool", a.call.Tool)
	s.callDone(ctx, a.call.Tool, metering.OutcomeNotRun)
	s.refundAdmission(a, true)
}

// resolveKey resolves the caller's key to its plan. On failure it answers
// (401 for an unknown or revoked key, 503 when the key store cannot
// decide) and returns false.
func (s *Server) resolveKey(c *gin.Context, cred *credential, id json.RawMessage, tool string) (*metering.Plan, bool) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
	t := time.Now()
	plan, err := s.opts.Keys.ResolveKey(ctx, cred.key)
	cancel()
	exchangeFrom(c.Request.Context()).call.meter += time.Since(t)
	keyErr := errors.Is(err, metering.ErrUnknownKey) || errors.Is(err, metering.ErrRevokedKey)
	if keyErr {
		s.metrics.meterOp("resolve", time.Since(t), nil)
	} else {
		s.metrics.meterOp("resolve", time.Since(t), err)
	}
	if err == nil && plan == nil {
		err = errors.New("key resolver returned no plan")
	}
	if err == nil {
		return plan, true
	}
	if tool != "" {
		o := metering.OutcomeUnavailable
		if keyErr {
			o = metering.OutcomeUnauthorized
		}
		s.callDone(c.Request.Context(), tool, o)
	}
	msg, status := keyErrorMessage(cred.keyID, err)
	if status == http.StatusUnauthorized {
		s.logger.Info("API key refused", "key_id", cred.keyID, "tool", tool, "error", err.Error())
		c.Header("WWW-Authenticate", s.keyChallenge(cred))
	} else {
		s.logger.Error("key lookup failed; refusing request", "key_id", cred.keyID, "tool", tool, "error", err.Error())
		c.Header("Retry-After", strconv.Itoa(meterRetryAfterSeconds))
	}
	if id == nil && tool == "" {
		// GET /usage: a plain JSON error.
		c.Header("Cache-Control", "no-store")
		c.AbortWithStatusJSON(status, gin.H{"error": msg})
		return nil, false
	}
	code := s.opts.ErrorCodes.Unauthorized
	if status != http.StatusUnauthorized {
		code = s.opts.ErrorCodes.Unavailable
	} else {
		msg = orMessage(s.opts.Messages.Unauthorized, msg)
	}
	abortRPC(c, status, id, code, msg)
	return nil, false
}

// orMessage is the deployment's message when it set one, else restmcp's.
func orMessage(configured, own string) string {
	if configured != "" {
		return configured
	}
	return own
}

// keyErrorMessage is the text and HTTP status for a key resolution error.
func keyErrorMessage(keyID string, err error) (string, int) {
	switch {
	case errors.Is(err, metering.ErrRevokedKey):
		return "API key revoked (key_id " + keyID + "): this key no longer works; ask the API provider for a new key and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>", http.StatusUnauthorized
	case errors.Is(err, metering.ErrUnknownKey):
		return "unknown API key (key_id " + keyID + "): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>", http.StatusUnauthorized
	}
	return "API key check is temporarily unavailable; retry in " + strconv.Itoa(meterRetryAfterSeconds) + " seconds", http.StatusServiceUnavailable
}

// refusalMessage is the JSON-RPC error text of a 429: which limit of which
// plan, and when to retry.
func refusalMessage(plan *metering.Plan, d metering.Decision, retry int64) string {
	on := ""
	if plan != nil {
		on = fmt.Sprintf(" of plan %q", plan.Name)
	}
	switch d.RefusedBy {
	case "day", "month":
		return fmt.Sprintf("quota exceeded: the %s quota%s is %d units; retry after %d seconds, when the next %s starts (UTC)",
			d.RefusedBy, on, d.Limit, retry, d.RefusedBy)
	}
	return fmt.Sprintf("rate limit exceeded: %d calls per %s%s; retry after %d seconds", d.Limit, windowName(d.Window), on, retry)
}

// windowName writes a rate-limit window as "second", "minute", "hour" or a
// duration; "window" when unknown.
func windowName(w time.Duration) string {
	switch w {
	case 0:
		return "window"
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	}
	return formatSeconds(w)
}

// formatSeconds writes d as whole seconds ("90s") when it is whole, else
// as Go writes it.
func formatSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// meterRetryAfterSeconds is the Retry-After sent when the Meter fails.
const meterRetryAfterSeconds = 5

// setRateLimitHeaders writes RateLimit-Limit/Remaining/Reset, their
// X-RateLimit-* twins and RateLimit-Policy for the most restrictive limit
// of d. Reset is in seconds from now (rounded up).
func setRateLimitHeaders(h http.Header, d metering.Decision) {
	limit := strconv.FormatInt(d.Limit, 10)
	remaining := strconv.FormatInt(max(d.Remaining, 0), 10)
	reset := strconv.FormatInt(ceilSecondsMin0(d.Reset), 10)
	if d.Window <= 0 {
		setHeaders(h, "Ratelimit-Limit", limit, "Ratelimit-Remaining", remaining, "Ratelimit-Reset", reset,
			"X-Ratelimit-Limit", limit, "X-Ratelimit-Remaining", remaining, "X-Ratelimit-Reset", reset)
		return
	}
	policy := limit + ";w=" + strconv.FormatInt(ceilSecondsMin0(d.Window), 10)
	if d.Policy != "" {
		policy += `;policy="` + d.Policy + `"`
	}
	setHeaders(h, "Ratelimit-Limit", limit, "Ratelimit-Remaining", remaining, "Ratelimit-Reset", reset,
		"X-Ratelimit-Limit", limit, "X-Ratelimit-Remaining", remaining, "X-Ratelimit-Reset", reset, "Ratelimit-Policy", policy)
}

// setHeaders sets header keys to values, given as key, value pairs, with
// one allocation for all the values where http.Header.Set makes one per
// header (and one more per key not in canonical form). Each key must be in
// canonical form (textproto.CanonicalMIMEHeaderKey), as Set would store
// it; the response is the same on the wire.
func setHeaders(h http.Header, kv ...string) {
	vals := make([]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		j := i / 2
		vals[j] = kv[i+1]
		h[kv[i]] = vals[j : j+1 : j+1]
	}
}

// ceilSeconds rounds d up to whole seconds, at least 1 (Retry-After: 0
// invites an immediate retry storm).
func ceilSeconds(d time.Duration) int64 { return max(ceilSecondsMin0(d), 1) }

func ceilSecondsMin0(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
