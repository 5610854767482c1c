package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/restmcp/restmcp/internal/clip"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/restmcp/restmcp/internal/netaddr"
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

// AddressKeyID is the key id of a public-mode caller at a client address:
// "addr-" and the first 12 hex digits of the SHA-256 of the address, an
// IPv6 address by its /64 network (one subscriber's allocation: per-address
// limits would mean nothing if each of its 2^64 addresses had its own).
func AddressKeyID(addr string) string {
	return "addr-" + metering.KeyID(netaddr.Group(addr))
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
		j.event = metering.Event{KeyID: a.call.KeyID, API: a.api, Tool: a.call.Tool, Outcome: metering.OutcomeNotRun, Cost: a.decision.Cost, Latency: time.Since(a.start), Time: a.start}
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
	case errors.Is(err, metering.ErrUnknownPlan):
		// A key the registry holds on a plan the plans file lacks: not
		// retryable, and the operator's to fix (restmcp keys create with
		// the server's --plans-file).
		// err reads "metering: unknown plan: key_id K is on plan "P", which
		// the plans file does not define".
		_, why, ok := strings.Cut(err.Error(), metering.ErrUnknownPlan.Error()+": ")
		if !ok {
			why = "key_id " + keyID + " is on a plan this server does not define"
		}
		return "API key refused: " + why + "; ask the API provider to move the key to a plan this server serves", http.StatusForbidden
	}
	return "API key check is temporarily unavailable; retry in " + strconv.Itoa(meterRetryAfterSeconds) + " seconds", http.StatusServiceUnavailable
}

// refusalMessage is the JSON-RPC error text of a 429: which limit of which
// plan, when to retry, and for a quota the plan's upgrade URL when it has
// one.
func refusalMessage(plan *metering.Plan, d metering.Decision, retry int64) string {
	on := ""
	if plan != nil {
		on = fmt.Sprintf(" of plan %q", plan.Name)
	}
	switch d.RefusedBy {
	case "day", "month":
		msg := fmt.Sprintf("quota exceeded: the %s quota%s is %d units; retry after %d seconds, when the next %s starts (UTC)",
			d.RefusedBy, on, d.Limit, retry, d.RefusedBy)
		if plan != nil && plan.UpgradeURL != "" {
			// Waiting a day or a month is rarely the answer: say where a
			// larger plan is, as a refused tool does (Plan.DeniedMessage).
			msg += ", or upgrade: " + plan.UpgradeURL
		}
		return msg
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

// refusal is the gate's answer when a call may not proceed: all that the
// HTTP answer (renderRefusal) or a stream's JSON-RPC error (rpcError) needs,
// decided without writing anything.
type refusal struct {
	status     int    // HTTP status
	code       int    // JSON-RPC error code
	message    string // the JSON-RPC error's message
	detail     string // the message for a plain JSON error (GET /usage); "" means message
	retryAfter string // Retry-After, seconds; "" for none
	challenge  string // WWW-Authenticate; "" for none
	// limits are the rate-limit headers to set, in order (a later one
	// replaces an earlier one's).
	limits []metering.Decision
}

// renderRefusal answers r on the HTTP path: its headers, then a JSON-RPC
// error with the request's id.
func (s *Server) renderRefusal(c *gin.Context, id json.RawMessage, r *refusal) {
	r.setHeaders(c.Writer.Header())
	abortRPC(c, r.status, id, r.code, r.message)
}

// renderPlainRefusal answers r as a plain JSON error {"error": …}, for
// routes that are not JSON-RPC (GET /usage).
func (s *Server) renderPlainRefusal(c *gin.Context, r *refusal) {
	r.setHeaders(c.Writer.Header())
	c.Header("Cache-Control", "no-store")
	msg := r.detail
	if msg == "" {
		msg = r.message
	}
	abortJSON(c, r.status, gin.H{"error": msg})
}

func (r *refusal) setHeaders(h http.Header) {
	for _, d := range r.limits {
		setRateLimitHeaders(h, d)
	}
	if r.challenge != "" {
		h.Set("WWW-Authenticate", r.challenge)
	}
	if r.retryAfter != "" {
		h.Set("Retry-After", r.retryAfter)
	}
}

// rpcError is r as the JSON-RPC error a stream carries (legacy SSE), where
// no HTTP status or header can travel; the message says when to retry.
func (r *refusal) rpcError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: int64(r.code), Message: r.message}
}

// admitCall is the one admission of a call of tool, whatever door it came
// through (a tools/call on mcp_path or the OAuth endpoint, call_operation,
// resources/read, a legacy SSE message): authenticate (a key, anonymous,
// or the client address in public mode), then, for a tool, a place under
// the concurrency caps, the plan gate (authorize) and the Meter (admit).
// It fills a and returns nil, or returns the refusal, having given back
// whatever it took; it writes no answer (the door renders the refusal).
// A refusal is still accounted for: its outcome counted in the metrics
// (callDone), a refused admission's usage event queued (the Meter's own
// refusal, admit) and a key refusal or store failure logged. ex is the
// call's exchange (its caller, made by resolveCaller; no one in public
// mode), clientIP the caller's address as the HTTP edge resolved it. With
// tool nil (an unknown name) only the caller is authenticated. An admitted
// a holds a concurrency place until a.done.
func (s *Server) admitCall(ctx context.Context, ex *exchange, clientIP string, tool *openapi.Tool, a *admission) *refusal {
	if r := s.authenticate(ctx, ex, clientIP, tool, a); r != nil || tool == nil {
		return r
	}
	a.call.Tool, a.api = tool.Name, tool.API
	release, ok := s.calls.acquire(tool)
	if !ok {
		s.callDone(ctx, tool.Name, metering.OutcomeRefused)
		return &refusal{status: http.StatusTooManyRequests, code: s.opts.ErrorCodes.RateLimited, retryAfter: "1",
			message: orMessage(s.opts.Messages.RateLimited, "too many calls in progress on this server; retry in 1 second")}
	}
	a.release = release
	s.authorize(tool, a)
	if a.denied != "" {
		return nil // answered by the tool handler as a tool error, unmetered
	}
	if r := s.admit(ctx, ex, a); r != nil {
		a.done()
		return r
	}
	return nil
}

// gate admits tools/call requests: transport checks the go-sdk would make
// (checkCall), then admitCall. A refusal is rendered here; the admission
// reaches the tool handler in the exchange. initialize, tools/list, ping,
// notifications and responses pass untouched and are never metered; so is
// a tools/call naming an unknown tool, which is answered -32602 once the
// caller is authenticated. After the SDK has answered, an admission no tool
// handler took (the call never ran) is settled: refunded, and recorded with
// cost 0 (docs/security.md H4-H7).
func (s *Server) gate(c *gin.Context) {
	ex := exchangeFrom(c.Request.Context())
	if ex.msg != nil && ex.msg.id != nil && taskMethods[ex.msg.method] && s.tasksOn() {
		s.serveTaskMethod(c, ex)
		return
	}
	if !ex.msg.isToolsCall() {
		if s.opts.ResponseMeta && ex.msg != nil && ex.msg.id != nil {
			// The vendor's envelope is on every answer (initialize,
			// tools/list, ping, …), with no call arguments to echo.
			mw := &metaWriter{ResponseWriter: c.Writer, start: time.Now()}
			c.Writer = mw
			defer mw.finish(nil)
		}
		if ex.msg != nil && ex.msg.method == "resources/read" && (len(s.opts.Resources) > 0 || s.opts.BinaryLinkBytes > 0) {
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
	if name != "" && name == ex.table.jobTool && ex.inner == nil {
		// The companion tool: who the caller is, nothing metered.
		if r := s.authenticateFollower(c.Request.Context(), ex, c.ClientIP()); r != nil {
			s.renderRefusal(c, ex.msg.id, r)
			return
		}
		c.Next()
		return
	}
	tool := ex.table.tools[name]
	if tool == nil && s.opts.UnknownToolNotFound && ex.inner == nil {
		a := &admission{start: start}
		if r := s.admitCall(c.Request.Context(), ex, c.ClientIP(), nil, a); r != nil {
			s.renderRefusal(c, ex.msg.id, r)
			return
		}
		// A name that is not (or no longer) a tool: 404, as the
		// deployment asked, instead of the SDK's -32602, with the
		// caller's rate-limit headers as on every tools/call answer.
		s.standingHeaders(c.Request.Context(), c.Writer.Header(), ex, a)
		abortRPC(c, http.StatusNotFound, ex.msg.id, codeMethodNotFound, "Unknown tool: "+clip.String(ex.msg.tool, 128))
		return
	}
	s.admitAndRun(c, ex, tool, &admission{start: start})
}

// standingHeaders sets the caller's RateLimit headers on an answer that
// counted nothing (a's caller authenticated, its tool unknown), from its
// plan (Options.Keys) and a read of its usage (Meter.Report), under
// MeterTimeout: a key lookup and a Redis round trip, nothing written. None
// when there is no Meter, the key does not resolve, or the read fails; the
// answer is the same either way.
func (s *Server) standingHeaders(ctx context.Context, h http.Header, ex *exchange, a *admission) {
	if s.opts.Meter == nil || s.opts.Keys == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.MeterTimeout)
	defer cancel()
	plan, refused := s.resolveKey(ctx, ex.cred, "") // "": no outcome counted under a name that is no tool
	if refused != nil || plan == nil {
		return
	}
	r, err := s.opts.Meter.Report(ctx, a.call.KeyID, plan)
	if err != nil {
		return
	}
	if d := r.Standing(); hasLimitHeaders(d) {
		setRateLimitHeaders(h, d)
	}
}

// admitAndRun is the gate's HTTP path for a call of tool (a tools/call or a
// resources/read; nil: an unknown name, only authenticated): admitCall, its
// refusal rendered or its rate-limit headers set, then the rest of the
// chain with the admission on the exchange, then the admission settled if
// nothing below did (a refusal after admission is refunded per Counting)
// and its concurrency place given back.
func (s *Server) admitAndRun(c *gin.Context, ex *exchange, tool *openapi.Tool, a *admission) {
	if r := s.admitCall(c.Request.Context(), ex, c.ClientIP(), tool, a); r != nil {
		s.renderRefusal(c, ex.msg.id, r)
		return
	}
	if tool == nil {
		c.Next()
		return
	}
	defer a.done()
	a.limits(func(d metering.Decision) { setRateLimitHeaders(c.Writer.Header(), d) })
	ex.admission = a
	c.Next()
	if a.settle() && a.metered {
		s.settleUnrun(c.Request.Context(), a)
	}
}

// authenticate establishes who the caller is: the key id of a usable key,
// or AnonymousKeyID when keys are optional and none was sent. It refuses
// (401) a missing key (when required) or a key with characters no API key
// has (they could split the upstream header, cookie or query it goes into),
// and otherwise resolves the key's plan (Options.Keys: 401 for an unknown
// or revoked key, 503 when the store cannot tell).
func (s *Server) authenticate(ctx context.Context, ex *exchange, clientIP string, tool *openapi.Tool, a *admission) *refusal {
	if s.opts.PublicMode {
		return s.authenticatePublic(ctx, ex, clientIP, tool, a)
	}
	cred := ex.cred
	refuse := func(msg string) *refusal {
		if tool != nil {
			s.callDone(ctx, tool.Name, metering.OutcomeUnauthorized)
		}
		return s.keyRefusal(cred, msg, "", cred.keyID != "" || cred.unsafe != "")
	}
	switch {
	case cred.unsafe != "":
		return refuse("invalid API key: it contains " + cred.unsafe + ", which no API key has; send the key exactly as issued, in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>")
	case cred.keyID != "":
		a.call.KeyID = cred.keyID
		if cred.idp != nil {
			if tool == nil {
				return nil
			}
			plan, r := s.idpAdmit(ctx, ex)
			a.call.Plan = plan
			return r
		}
	case s.opts.AllowAnonymous:
		a.call.KeyID, a.anonymous = AnonymousKeyID, true
	default:
		return refuse("authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>")
	}
	if s.opts.Keys == nil || tool == nil {
		return nil
	}
	plan, r := s.resolveKey(ctx, cred, tool.Name)
	a.call.Plan = plan
	return r
}

// authenticatePublic makes the caller of a public-mode call its client
// address. The caller has no credential (resolveCaller dropped whatever the
// request presented), so none changes the budget the call is metered under
// or reaches the upstream API. The plan is the one Options.Keys gives to no
// key.
func (s *Server) authenticatePublic(ctx context.Context, ex *exchange, clientIP string, tool *openapi.Tool, a *admission) *refusal {
	a.call.KeyID = AddressKeyID(clientIP)
	a.anonymous = true
	if s.opts.Keys == nil || tool == nil {
		return nil
	}
	plan, r := s.resolveKey(ctx, ex.cred, tool.Name)
	a.call.Plan = plan
	return r
}

// authorize applies the plan gate: a tool outside the caller's plan is
// marked denied (answered by the tool handler as a tool error, so that the
// SDK writes the result envelope; not metered, nothing sent upstream), and
// an allowed one gets its cost.
func (s *Server) authorize(tool *openapi.Tool, a *admission) {
	if a.call.Plan == nil {
		a.call.Cost = max(tool.Cost, 0)
		if a.call.Cost == 0 {
			a.call.Cost = 1
		}
		return
	}
	if !a.call.Plan.Allows(tool.Name, tool.Tags) {
		a.denied = a.call.Plan.DeniedMessage(tool.Name)
		return
	}
	a.call.Cost = a.call.Plan.Cost(tool.Name, tool.Cost)
}

// admit asks the Meter to admit and count the call: a refusal is 429 (with
// Retry-After and a usage event) or 503 (the Meter could not decide).
// Without a Meter every call is admitted, unmetered.
func (s *Server) admit(ctx context.Context, ex *exchange, a *admission) *refusal {
	if s.opts.Meter == nil {
		return nil
	}
	d, r := s.meterAdmit(ctx, a.call, "", func() {
		e := metering.Event{KeyID: a.call.KeyID, API: a.api, Tool: a.call.Tool, Outcome: metering.OutcomeRefused, Latency: time.Since(a.start), Time: a.start}
		if a.call.Plan != nil {
			e.Plan = a.call.Plan.Name
		}
		s.queueUsage(usageJob{event: e, hasEvent: true})
	})
	if r != nil {
		return r
	}
	a.decision, a.metered = d, true
	if s.opts.PublicGlobalPlan != nil {
		return s.admitGlobal(ctx, ex, a)
	}
	return nil
}

// admitGlobal admits a public-mode call under Options.PublicGlobalPlan too.
// When that refuses (429) or cannot decide (503), the per-address admission
// is given back: the call does not run.
func (s *Server) admitGlobal(ctx context.Context, ex *exchange, a *admission) *refusal {
	g := &meteredCall{call: metering.Call{KeyID: PublicKeyID, Plan: s.opts.PublicGlobalPlan, Tool: a.call.Tool,
		Cost: s.opts.PublicGlobalPlan.Cost(a.call.Tool, ex.table.tools[a.call.Tool].Cost)}}
	d, r := s.meterAdmit(ctx, g.call, "the public limit for all anonymous callers together: ", nil)
	if r != nil {
		s.refundAdmission(a, false)
		own := r.limits
		r.limits = nil
		a.limits(func(d metering.Decision) { r.limits = append(r.limits, d) })
		r.limits = append(r.limits, own...)
		return r
	}
	g.decision = d
	a.also = g
	return nil
}

// meterContext is ctx under MeterTimeout when the store waited on may
// wait (Server.meterWaits, Server.keysWaits), else ctx itself: an
// in-memory meter or registry answers at once, and a deadline costs a
// timer per call.
func (s *Server) meterContext(ctx context.Context, mayWait bool) (context.Context, context.CancelFunc) {
	if !mayWait {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.opts.MeterTimeout)
}

// meterAdmit runs Meter.AdmitCall for call under MeterTimeout, with its
// metrics. When the Meter cannot decide the refusal is 503; when it
// refuses, it calls refused (if not nil) and the refusal is 429 with
// prefix and the refusal's text.
func (s *Server) meterAdmit(ctx context.Context, call metering.Call, prefix string, refused func()) (metering.Decision, *refusal) {
	mctx, cancel := s.meterContext(ctx, s.meterWaits)
	t := time.Now()
	d, err := s.opts.Meter.AdmitCall(mctx, call)
	cancel()
	took := time.Since(t)
	s.metrics.meterOp("admit", took, err)
	s.metrics.decision(d, err)
	traceAdmission(ctx, call, d, err)
	rec := &exchangeFrom(ctx).call
	rec.meter += took
	if prefix == "" || err != nil || !d.Allowed { // the caller's own admission, or a refusal of the public global plan's
		rec.decision = decisionName(d, err)
	}
	if prefix == "" {
		rec.cost = d.Cost
	}
	if err != nil {
		s.callDone(ctx, call.Tool, metering.OutcomeUnavailable)
		s.logger.Error("metering failed; refusing tools/call", "key_id", call.KeyID, "tool", call.Tool, "error", err.Error())
		return d, s.unavailable("usage metering is temporarily unavailable")
	}
	if d.Allowed {
		return d, nil
	}
	retry := ceilSeconds(d.RetryAfter)
	s.callDone(ctx, call.Tool, metering.OutcomeRefused)
	if refused != nil {
		refused()
	}
	r := &refusal{status: http.StatusTooManyRequests, code: s.opts.ErrorCodes.RateLimited, retryAfter: strconv.FormatInt(retry, 10),
		message: orMessage(s.opts.Messages.RateLimited, prefix+refusalMessage(call.Plan, d, retry))}
	if hasLimitHeaders(d) {
		r.limits = []metering.Decision{d}
	}
	return d, r
}

// resolveKey finds the plan of the key in cred (Options.Keys). A key the
// registry does not know, or has revoked, is refused 401 with a challenge;
// a registry that cannot tell, 503. tool names the call for the metrics
// and the log ("" for GET /usage).
func (s *Server) resolveKey(ctx context.Context, cred *credential, tool string) (*metering.Plan, *refusal) {
	rctx, cancel := s.meterContext(ctx, s.keysWaits)
	t := time.Now()
	plan, err := s.opts.Keys.ResolveKey(rctx, cred.key)
	cancel()
	exchangeFrom(ctx).call.meter += time.Since(t)
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
		return plan, nil
	}
	if tool != "" {
		o := metering.OutcomeUnavailable
		if keyErr {
			o = metering.OutcomeUnauthorized
		}
		s.callDone(ctx, tool, o)
	}
	msg, status := keyErrorMessage(cred.keyID, err)
	if status == http.StatusForbidden {
		s.logger.Warn("API key on a plan the plans file does not define", "key_id", cred.keyID, "tool", tool, "error", err.Error())
		return nil, &refusal{status: status, code: s.opts.ErrorCodes.Unauthorized, message: msg}
	}
	if status == http.StatusUnauthorized {
		s.logger.Info("API key refused", "key_id", cred.keyID, "tool", tool, "error", err.Error())
		return nil, s.keyRefusal(cred, msg, msg, true)
	}
	s.logger.Error("key lookup failed; refusing request", "key_id", cred.keyID, "tool", tool, "error", err.Error())
	return nil, &refusal{status: status, code: s.opts.ErrorCodes.Unavailable, message: msg, retryAfter: strconv.Itoa(meterRetryAfterSeconds)}
}
