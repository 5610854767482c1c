package adapter

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// newEngine builds the gin engine: gin.New, so every middleware is ours and
// in the order the chains below list.
func (s *Server) newEngine() *gin.Engine {
	e := gin.New()
	e.Use(s.recovery, s.requestID, s.accessLog)

	e.GET("/health", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	})
	e.GET("/ready", s.ready)
	e.GET("/.well-known/mcp", s.serveCard)
	if s.opts.LLMsTxt {
		e.GET("/llms.txt", s.serveLLMsTxt)
	}
	if s.opts.MarkdownPage != "" {
		e.GET(s.opts.MarkdownPage, s.serveMarkdownPage)
	}
	if s.opts.Document != nil {
		e.GET("/openapi.json", s.serveDocument)
	}
	e.GET("/usage", s.extractCredential, s.usage)
	if s.opts.Metrics != nil {
		e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{})))
	}

	// The MCP endpoint's chain; cred is extractCredential, or
	// oauthCredential on the OAuth endpoint.
	chain := func(cred gin.HandlerFunc) []gin.HandlerFunc {
		var hs []gin.HandlerFunc
		if s.tracer != nil {
			hs = append(hs, s.traceMCP)
		}
		hs = append(hs, s.originCheck, s.bodyLimit, cred, s.decode)
		if s.opts.Sessions != nil {
			hs = append(hs, s.sessionGate)
		}
		return append(hs, s.gate, s.serveMCP)
	}
	mcpChain := chain(s.extractCredential)
	// Every method reaches the go-sdk, which answers anything but POST with
	// 405 and "Allow: POST" in stateless mode (C26 row 5); in sessions mode
	// sessionGate answers GET and DELETE.
	e.Any(s.opts.MCPPath, mcpChain...)
	if s.opts.OAuth != nil {
		s.opts.OAuth.Mount(e)
		// The same chain, with the caller taken from an access token.
		e.Any(s.opts.OAuth.ResourcePath(), chain(s.oauthCredential)...)
	}
	if p := s.opts.LegacySSEPath; p != "" {
		e.GET(p, s.originCheck, s.extractCredential, s.serveLegacySSE)
		e.POST(p, s.originCheck, s.serveLegacySSE)
	}
	e.NoRoute(func(c *gin.Context) {
		c.JSON(http.StatusNotFound, gin.H{"error": "not found"})
	})
	return e
}

// recovery turns a panic in any middleware into a 500 with a JSON-RPC error
// body (the id of the message when it was already read); the process keeps
// serving. Panics inside tool handlers never get here: the go-sdk runs them
// on other goroutines, so toolHandler recovers them itself.
func (s *Server) recovery(c *gin.Context) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
			panic(p)
		}
		s.logger.Error("panic while serving request",
			"request_id", requestIDFrom(c.Request.Context()),
			"panic", fmt.Sprint(p),
			"stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort()
			return
		}
		var id json.RawMessage
		if m := exchangeFrom(c.Request.Context()).msg; m != nil {
			id = m.id
		}
		abortRPC(c, http.StatusInternalServerError, id, codeInternalError, "internal error")
	}()
	c.Next()
}

// requestID takes a sane X-Request-Id from the client (up to 64 visible
// ASCII characters) or makes one, echoes it on the response, and creates
// the request's exchange, which carries it to the tool handler's log lines.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !saneRequestID(id) {
		id = newRequestID()
	}
	c.Header("X-Request-Id", id)
	ex := &exchange{requestID: id, table: s.table.Load()}
	ex.cred = &ex.noCred
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), exchangeKey{}, ex))
	c.Next()
}

// newRequestID is a fresh request id: 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var h [16]byte
	hex.Encode(h[:], b[:])
	return string(h[:])
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// accessLog writes one Info line per HTTP request (Debug for /health and
// /ready). The URL's query is
// redacted (api_key and the key's value wherever it appears); the caller is
// identified by key_id only.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelInfo
	if p := c.Request.URL.Path; p == "/health" || p == "/ready" {
		level = slog.LevelDebug // probes would drown the log
	}
	ctx := c.Request.Context()
	if !s.logger.Enabled(ctx, level) {
		return
	}
	// slog.Attr values, not alternating key/value arguments: no boxing.
	attrs := make([]slog.Attr, 0, 17)
	attrs = append(attrs,
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()),
		slog.Int64("duration_ms", time.Since(start).Milliseconds()),
		slog.String("request_id", requestIDFrom(ctx)),
	)
	ex := exchangeFrom(ctx)
	if ex.cred.keyID != "" {
		attrs = append(attrs, slog.String("key_id", ex.cred.keyID), slog.String("key_source", ex.cred.source))
	}
	if q := c.Request.URL.RawQuery; q != "" {
		attrs = append(attrs, slog.String("query", truncate(redactQuery(q, ex.cred.key), maxLoggedField)))
	}
	if m := ex.msg; m != nil {
		attrs = append(attrs, slog.String("rpc_method", truncate(m.method, maxLoggedField)))
		if m.tool != "" {
			attrs = append(attrs, slog.String("tool", truncate(m.tool, maxLoggedField)))
		}
		if ex.inner != nil && ex.inner.name != "" {
			attrs = append(attrs, slog.String("operation", truncate(ex.inner.name, maxLoggedField)))
		}
		if r := ex.call; m.method == "tools/call" && r.outcome != "" {
			attrs = append(attrs, slog.String("outcome", string(r.outcome)), slog.Int("upstream_status", r.status),
				slog.Bool("is_error", r.isError), slog.String("meter", r.decision), slog.Int64("cost", r.cost),
				slog.Float64("meter_ms", milliseconds(r.meter)), slog.Float64("upstream_ms", milliseconds(r.upstream)))
		}
	}
	s.logger.LogAttrs(ctx, level, "http request", attrs...)
}

// milliseconds is d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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

// maxLoggedField caps, in bytes, each access-log field taken from the
// request (query, JSON-RPC method, tool name): a client cannot grow the log
// by sending a 1 MiB method name.
const maxLoggedField = 256

// redactQuery replaces the value of api_key, and any value equal to the
// caller's key, with REDACTED, and a legacy SSE session id (sessionid, a
// capability) with "sha256:" and the first 8 hex digits of its hash, which
// ties a session's lines together without handing it out. A query that does
// not parse is not logged.
func redactQuery(raw, key string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "(a query that does not parse; not logged)"
	}
	for name, vals := range q {
		for i, v := range vals {
			switch {
			case strings.EqualFold(name, apiKeyQuery) || (key != "" && v == key):
				vals[i] = "REDACTED"
			case strings.EqualFold(name, "sessionid"):
				sum := sha256.Sum256([]byte(v))
				vals[i] = "sha256:" + hex.EncodeToString(sum[:4])
			}
		}
		q[name] = vals
	}
	return redact(q.Encode(), key)
}

// originCheck refuses, with 403, a request whose Origin header is present and
// not in Options.AllowedOrigins. Requests without Origin (non-browser
// clients) pass: the check exists to stop web pages, including DNS-rebinding
// attacks on a server reached at a loopback address, which always send Origin
// on POST.
func (s *Server) originCheck(c *gin.Context) {
	origin := c.GetHeader("Origin")
	if origin == "" {
		c.Next()
		return
	}
	if !s.originAllowed(origin, c.Request.Host) {
		if s.opts.OriginRefusalText {
			c.Data(http.StatusForbidden, "text/plain; charset=utf-8", []byte("Forbidden: origin not allowed\n"))
			c.Abort()
			return
		}
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "origin not allowed: " + origin})
		return
	}
	c.Header("Access-Control-Allow-Origin", origin)
	c.Header("Vary", "Origin")
	c.Header("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id")
	if c.Request.Method == http.MethodOptions {
		// CORS preflight for an allowed browser origin.
		c.Header("Access-Control-Allow-Methods", "POST")
		c.Header("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, X-API-Key, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id")
		c.Header("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// originAllowed reports whether a browser origin may call the endpoint.
// With no AllowedOrigins configured, an origin passes only when both it and
// the request's Host are loopback (localhost, 127.0.0.0/8, ::1): a local tool
// such as the MCP Inspector works, while a DNS-rebinding page (a public
// origin, or a loopback origin reaching a non-loopback Host) does not.
func (s *Server) originAllowed(origin, host string) bool {
	o := normalizeOrigin(origin)
	if len(s.opts.AllowedOrigins) == 0 {
		u, err := url.Parse(o)
		return o != "" && err == nil && isLoopbackHost(u.Hostname()) && isLoopbackHost(hostOnly(host))
	}
	for _, a := range s.opts.AllowedOrigins {
		if a == "*" || (o != "" && normalizeOrigin(a) == o) {
			return true
		}
	}
	return false
}

// isLoopbackHost reports whether host (no port) is localhost or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// normalizeOrigin returns scheme://host[:port] in lower case, without a
// default port, or "" when v is not an origin.
func normalizeOrigin(v string) string {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = u.Hostname()
		if strings.Contains(host, ":") {
			host = "[" + strings.ToLower(host) + "]"
		}
		return scheme + "://" + strings.ToLower(host) + ":" + port
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// bodyLimit answers 413 when the body is larger than MaxBodyBytes, whether
// or not Content-Length says so up front, and otherwise buffers the body for
// the peek.
func (s *Server) bodyLimit(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	limit := s.opts.MaxBodyBytes
	if c.Request.ContentLength > limit {
		abortRPC(c, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", limit))
		return
	}
	body, err := readAtMost(c.Request.Body, c.Request.ContentLength, limit+1)
	if err != nil {
		abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest, "reading request body failed")
		return
	}
	if int64(len(body)) > limit {
		abortRPC(c, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", limit))
		return
	}
	c.Request.Body = &bodyReader{Reader: bytes.NewReader(body)}
	c.Request.ContentLength = int64(len(body))
	exchangeFrom(c.Request.Context()).body = body
	c.Next()
}

// extractCredential stores the caller's key (see extractCredential in
// apikey.go) in the request context, where the tool handler finds it, and
// removes every inbound copy of it from the request so that nothing below
// (the SDK's RequestExtra.Header included) sees it.
func (s *Server) extractCredential(c *gin.Context) {
	if !s.readForwarded(c) {
		return
	}
	cred := extractCredential(c.Request)
	c.Request.Header.Del(apiKeyHeader)
	if cred.source == "bearer" {
		c.Request.Header.Del("Authorization")
		if s.opts.OAuth != nil && oauth.IsAccessToken(cred.key) {
			// An OAuth access token works here too, standing for its key.
			if s.resolveAccessToken(c, cred.key) {
				c.Next()
			}
			return
		}
	}
	exchangeFrom(c.Request.Context()).cred = cred
	c.Next()
}

// decode reads the one JSON-RPC message of a POST with decodeMessage
// (refusals: 400 with a JSON-RPC error, before anything is metered), keeps it
// in the exchange for the gate, the log and the tool handler, and hands the
// SDK a body on which its own decoder reaches the same reading. It also
// settles the Accept header, see acceptMode.
func (s *Server) decode(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	ex := exchangeFrom(c.Request.Context())
	m, err := decodeMessage(ex.body)
	if err != nil {
		me, _ := asMessageError(err)
		abortRPC(c, me.status, nil, me.code, me.message)
		return
	}
	ex.msg = m
	ex.clientGone = c.Request.Context().Done()
	if m.hasMethod && m.id != nil && !servedMethods[m.method] && !(len(s.opts.Resources) > 0 && resourceMethods[m.method]) {
		// A request for a method restmcp does not serve, or of a capability
		// it does not declare (prompts, resources, logging, completion), is
		// a JSON-RPC "method not found" (JSON-RPC 2.0 §5.1), on the
		// 2026-07-28 wire with HTTP 404, before it with 200 as the SDK
		// answers server/discover on that wire.
		status := http.StatusOK
		if s.opts.UnknownMethodNotFound || c.Request.Header.Get("Mcp-Protocol-Version") >= protocolVersionStandardHeaders {
			status = http.StatusNotFound
		}
		abortRPC(c, status, m.id, codeMethodNotFound, "method not found: "+strconv.Quote(truncate(m.method, 80)))
		return
	}
	if m.hasMethod && m.id != nil && !s.versionServed(c, m) {
		return
	}

	jsonOK, sseOK := acceptMode(c.Request.Header.Values("Accept"))
	switch {
	case jsonOK:
		ex.handler = s.jsonHandler
	case sseOK:
		ex.handler = s.sseHandler
		// Proxies such as nginx buffer event streams unless told not to.
		c.Header("X-Accel-Buffering", "no")
	default:
		abortRPC(c, http.StatusNotAcceptable, m.id, codeInvalidRequest, "Accept must allow application/json or text/event-stream")
		return
	}
	// The SDK insists on both media types; the choice is made above.
	c.Request.Header.Set("Accept", "application/json, text/event-stream")
	if body, sw, ok := m.swapID(c.Writer); ok {
		c.Request.Body = &bodyReader{Reader: bytes.NewReader(body)}
		c.Request.ContentLength = int64(len(body))
		c.Writer = sw
	}
	c.Next()
}

// acceptMode reports which response forms the client accepts. The MCP spec
// asks clients to list both application/json and text/event-stream, and the
// go-sdk answers 400 otherwise; restmcp is lenient (C26 rows 6, 7, 9): a
// client that accepts JSON gets JSON, one that accepts only event streams
// gets one SSE message event, one that accepts neither gets 406. A missing
// Accept header means */*. When both are accepted restmcp answers JSON: a
// stateless tools/call has exactly one response and no server-to-client
// messages, and a plain JSON body passes through every proxy unbuffered.
func acceptMode(values []string) (jsonOK, sseOK bool) {
	if len(values) == 0 {
		return true, true
	}
	eachAccepted(values, func(mt string) {
		switch mt {
		case "application/json", "application/*":
			jsonOK = true
		case "text/event-stream", "text/*":
			sseOK = true
		case "*/*":
			jsonOK, sseOK = true, true
		}
	})
	return jsonOK, sseOK
}

// namesEventStream reports whether Accept lists text/event-stream itself,
// not only */* or text/* (Options.StreamAcceptStrict).
func namesEventStream(values []string) (named bool) {
	eachAccepted(values, func(mt string) { named = named || mt == "text/event-stream" })
	return named
}

// eachAccepted calls f with each media type of Accept header values, lower
// case and without parameters, leaving out those with q=0 (explicitly not
// acceptable).
func eachAccepted(values []string, f func(mediaType string)) {
	for _, value := range values {
		for rest, more := value, true; more; {
			var part string
			part, rest, more = strings.Cut(rest, ",")
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !qZero(params) {
				f(strings.ToLower(strings.TrimSpace(mt)))
			}
		}
	}
}

// qZero reports whether Accept parameters carry a quality of 0.
func qZero(params string) bool {
	for rest, more := params, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
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

// checkCall refuses, before admission, a tools/call that the go-sdk's
// Streamable HTTP transport would refuse after it (MCP 2025-11-25
// §Transports, https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
// and the 2026-07-28 standard headers): a Content-Type other than
// application/json (415), a Last-Event-ID on a POST, an MCP-Protocol-Version
// restmcp does not speak, a call without an id, and on the 2026-07-28 wire
// an Mcp-Method or Mcp-Name header that does not match the body, a missing
// or different _meta protocol version, or _meta client capabilities or
// client info that are missing or not objects (400). Whatever else the SDK
// refuses after admission is settled by the gate (see settleUnrun). A base64-encoded
// Mcp-Name ("=?base64?…?=") that names the tool is handed to the SDK as the
// plain name, which the SDK compares without decoding.
func (s *Server) checkCall(c *gin.Context, m *rpcMessage) bool {
	h := c.Request.Header
	if contentType(h.Get("Content-Type")) != "application/json" {
		abortRPC(c, http.StatusUnsupportedMediaType, m.id, codeInvalidRequest, "Content-Type must be application/json")
		return false
	}
	if len(h.Values("Last-Event-ID")) > 0 {
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidRequest, "Last-Event-ID is not allowed on a POST")
		return false
	}
	if m.id == nil {
		abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest, "invalid request: tools/call needs an id (a notification cannot call a tool)")
		return false
	}
	version := h.Get("Mcp-Protocol-Version") // one restmcp serves (versionServed)
	if version < protocolVersionStandardHeaders && m.metaVersion == "" {
		return true
	}
	fail := func(msg string) bool {
		abortRPC(c, http.StatusBadRequest, m.id, CodeHeaderMismatch, msg)
		return false
	}
	switch {
	case version == "":
		return fail("Mcp-Protocol-Version header is required for requests carrying " + strconv.Quote(metaKeyProtocolVersion))
	case m.metaVersion == "":
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "missing or invalid _meta field "+strconv.Quote(metaKeyProtocolVersion))
		return false
	case m.metaVersion != version:
		return fail("Mcp-Protocol-Version header " + strconv.Quote(version) + " does not match _meta " + strconv.Quote(truncate(m.metaVersion, 40)))
	case m.metaBadClientInfo:
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "invalid _meta field "+strconv.Quote(metaKeyClientInfo))
		return false
	case !m.metaCapabilities:
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "missing or invalid _meta field "+strconv.Quote(metaKeyClientCapabilities))
		return false
	case h.Get("Mcp-Method") != m.method:
		return fail("Mcp-Method header " + strconv.Quote(truncate(h.Get("Mcp-Method"), 80)) + " does not match the body's method \"tools/call\"")
	}
	name, ok := decodeHeaderValue(h.Get("Mcp-Name"))
	if !ok || name != m.tool {
		return fail("Mcp-Name header " + strconv.Quote(truncate(h.Get("Mcp-Name"), 80)) + " does not match the body's params.name " + strconv.Quote(truncate(m.tool, 80)))
	}
	h.Set("Mcp-Name", name)
	return true
}

// versionServed answers the request m itself, and returns false, when its
// MCP revision is not one restmcp serves (J2, J3): an MCP-Protocol-Version
// header outside the revisions served, on any method, is 400 -32600 naming
// them (the go-sdk would answer plain text, or -32602 about _meta); an
// initialize when no revision served has initialize (all of them are the
// 2026-07-28 wire or later) is 400 -32602, since the SDK would otherwise
// negotiate a revision outside protocol_versions. An initialize asking for
// a revision outside the list is answered by the SDK with the newest listed
// one (MCP 2025-11-25 "Lifecycle": version negotiation).
func (s *Server) versionServed(c *gin.Context, m *rpcMessage) bool {
	if v := c.Request.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(s.versions, v) {
		if mv := metaProtocolVersion(m); mv != "" {
			// The 2026-07-28 wire (SEP-2575) names its own error for this:
			// UnsupportedProtocolVersionError, data {supported, requested}.
			abortRPCData(c, http.StatusBadRequest, m.id, rpcErrorBody{Code: mcp.CodeUnsupportedProtocolVersion,
				Message: "unsupported protocol version " + strconv.Quote(truncate(mv, 40)) + "; supported: " + strings.Join(s.versions, ", "),
				Data:    mcp.UnsupportedProtocolVersionData{Supported: s.versions, Requested: mv}})
			return false
		}
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidRequest, "unsupported MCP-Protocol-Version "+strconv.Quote(truncate(v, 40))+"; supported: "+strings.Join(s.versions, ", "))
		return false
	}
	if m.method == "initialize" && !slices.ContainsFunc(s.versions, func(v string) bool { return v < protocolVersionStandardHeaders }) {
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "initialize is not part of the MCP revisions this server speaks ("+strings.Join(s.versions, ", ")+
			"): send requests with MCP-Protocol-Version and _meta as the "+protocolVersionStandardHeaders+" revision defines, without initialize")
		return false
	}
	return true
}

// metaProtocolVersion is the request's params._meta protocol version (the
// 2026-07-28 wire's), read for methods other than tools/call only here, on
// the refusal path; "" when absent.
func metaProtocolVersion(m *rpcMessage) string {
	if m.metaVersion != "" || m.params == nil {
		return m.metaVersion
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	if json.Unmarshal(m.params, &p) == nil && json.Unmarshal(p.Meta[metaKeyProtocolVersion], &v) == nil {
		return v
	}
	return ""
}

// protocolVersionStandardHeaders is the first MCP revision whose requests
// carry Mcp-Method and Mcp-Name headers and _meta protocol metadata.
const protocolVersionStandardHeaders = "2026-07-28"

// decodeHeaderValue decodes an MCP standard header value: either plain, or
// "=?base64?<standard base64 of UTF-8>?=" (MCP 2026-07-28 standard headers).
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			return string(b), err == nil
		}
	}
	return v, true
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

// servedMethods are the JSON-RPC request methods restmcp answers: the
// lifecycle, tools (the one capability it declares) and the 2026-07-28
// discovery and subscription methods the go-sdk serves.
var servedMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"server/discover": true, "subscriptions/listen": true,
}

// resourceMethods are served too when Options.Resources declares the
// resources capability.
var resourceMethods = map[string]bool{"resources/list": true, "resources/read": true, "resources/templates/list": true}

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

// readAtMost reads r to its end or to max bytes, whichever comes first,
// into a buffer sized from sizeHint (a Content-Length, -1 when unknown) so
// that a body of the length announced takes one allocation. The hint only
// sizes the buffer: a body longer or shorter than it is read as it is.
func readAtMost(r io.Reader, sizeHint, max int64) ([]byte, error) {
	c := int64(512)
	if sizeHint >= 0 {
		c = sizeHint + 1 // room to see the end without growing
	}
	b := make([]byte, 0, min(c, max))
	for int64(len(b)) < max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := min(int64(cap(b)), max)
		n, err := r.Read(b[len(b):room])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// bodyReader is the buffered request body handed on to the go-sdk.
type bodyReader struct{ *bytes.Reader }

func (*bodyReader) Close() error { return nil }

// ceilSeconds rounds d up to whole seconds, at least 1 (Retry-After: 0
// invites an immediate retry storm).
func ceilSeconds(d time.Duration) int64 { return max(ceilSecondsMin0(d), 1) }

func ceilSecondsMin0(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}

// serveMCP answers tools/call and tools/list on the fast path where it
// applies (fastpath.go), and hands everything else to the go-sdk handler
// chosen by decode.
func (s *Server) serveMCP(c *gin.Context) {
	ex := exchangeFrom(c.Request.Context())
	if c.Request.Method == http.MethodPost && s.serveFast(c, ex) {
		return
	}
	h := ex.handler
	if h == nil {
		h = s.jsonHandler
	}
	h.ServeHTTP(c.Writer, c.Request)
}

// ready answers GET /ready: 200 while Options.Ready returns nil, 503
// otherwise. The error is logged, not shown: it may name internal hosts.
func (s *Server) ready(c *gin.Context) {
	if s.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		err := s.opts.Ready(ctx)
		cancel()
		if err != nil {
			s.logger.Warn("not ready", "error", err.Error())
			c.Header("Retry-After", "5")
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable"})
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}
