package adapter

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// gin context keys set by the middleware.
const (
	ctxPeek       = "restmcp.peek"
	ctxCredential = "restmcp.credential"
	ctxHandler    = "restmcp.handler"
)

// newEngine builds the gin engine: gin.New, so every middleware is ours and
// in the order of DESIGN.md "Data path".
func (s *Server) newEngine() *gin.Engine {
	e := gin.New()
	e.Use(s.recovery, s.requestID, s.accessLog)

	e.GET("/health", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	})
	e.GET("/ready", s.ready)
	e.GET("/usage", s.extractCredential, s.usage)
	if s.opts.Metrics != nil {
		e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{})))
	}

	mcpChain := []gin.HandlerFunc{
		s.originCheck,
		s.bodyLimit,
		s.extractCredential,
		s.peek,
		s.gate,
		s.serveMCP,
	}
	// Every method reaches the go-sdk, which answers anything but POST with
	// 405 and "Allow: POST" in stateless mode (C26 row 5).
	e.Any(s.opts.MCPPath, mcpChain...)
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
		abortRPC(c, http.StatusInternalServerError, peekID(c), codeInternalError, "internal error")
	}()
	c.Next()
}

type requestIDKey struct{}

// requestID takes a sane X-Request-Id from the client (up to 64 visible
// ASCII characters) or makes one, echoes it on the response and puts it in
// the request context for the tool handler's log lines.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !saneRequestID(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Header("X-Request-Id", id)
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestIDKey{}, id))
	c.Next()
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

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// accessLog writes one Info line per HTTP request (Debug for /health and
// /ready). The URL's query is
// redacted (api_key and the key's value wherever it appears); the caller is
// identified by key_id only.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	attrs := []any{
		"method", c.Request.Method,
		"path", c.Request.URL.Path,
		"status", c.Writer.Status(),
		"duration_ms", time.Since(start).Milliseconds(),
		"request_id", requestIDFrom(c.Request.Context()),
	}
	var key string
	if v, ok := c.Get(ctxCredential); ok {
		if cred, ok := v.(*credential); ok {
			key = cred.key
			if cred.keyID != "" {
				attrs = append(attrs, "key_id", cred.keyID, "key_source", cred.source)
			}
		}
	}
	if q := c.Request.URL.RawQuery; q != "" {
		attrs = append(attrs, "query", redactQuery(q, key))
	}
	if v, ok := c.Get(ctxPeek); ok {
		if p, ok := v.(*rpcPeek); ok {
			attrs = append(attrs, "rpc_method", p.method)
			if p.tool != "" {
				attrs = append(attrs, "tool", p.tool)
			}
		}
	}
	level := slog.LevelInfo
	if p := c.Request.URL.Path; p == "/health" || p == "/ready" {
		level = slog.LevelDebug // probes would drown the log
	}
	s.logger.Log(c.Request.Context(), level, "http request", attrs...)
}

// redactQuery replaces the value of api_key, and any value equal to the
// caller's key, with REDACTED.
func redactQuery(raw, key string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return redact(raw, key)
	}
	for name, vals := range q {
		for i, v := range vals {
			if strings.EqualFold(name, apiKeyQuery) || (key != "" && v == key) {
				vals[i] = "REDACTED"
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
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil {
		abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest, "reading request body failed")
		return
	}
	if int64(len(body)) > limit {
		abortRPC(c, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", limit))
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	c.Request.ContentLength = int64(len(body))
	c.Set(ctxPeekBody, body)
	c.Next()
}

const ctxPeekBody = "restmcp.body"

// extractCredential stores the caller's key (see extractCredential in
// apikey.go) in the request context, where the tool handler finds it, and
// removes every inbound copy of it from the request so that nothing below
// (the SDK's RequestExtra.Header included) sees it.
func (s *Server) extractCredential(c *gin.Context) {
	cred := extractCredential(c.Request)
	c.Request.Header.Del(apiKeyHeader)
	if cred.source == "bearer" {
		c.Request.Header.Del("Authorization")
	}
	c.Set(ctxCredential, cred)
	c.Request = c.Request.WithContext(withCredential(c.Request.Context(), cred))
	c.Next()
}

// peek reads the one JSON-RPC message of a POST: a batch gets 400, invalid
// JSON 400 with a parse error; otherwise method, id and tool name are kept
// for the gate and the log, and the body is restored for the SDK. It also
// settles the Accept header, see acceptMode.
func (s *Server) peek(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	v, _ := c.Get(ctxPeekBody)
	body, _ := v.([]byte)
	p, err := peekMessage(body)
	if errors.Is(err, errBatch) {
		abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest, err.Error())
		return
	}
	if err != nil {
		abortRPC(c, http.StatusBadRequest, nil, codeParseError, "parse error: the body must be one JSON-RPC message")
		return
	}
	c.Set(ctxPeek, p)

	jsonOK, sseOK := acceptMode(c.Request.Header.Values("Accept"))
	switch {
	case jsonOK:
		c.Set(ctxHandler, s.jsonHandler)
	case sseOK:
		c.Set(ctxHandler, s.sseHandler)
	default:
		abortRPC(c, http.StatusNotAcceptable, p.id, codeInvalidRequest, "Accept must allow application/json or text/event-stream")
		return
	}
	// The SDK insists on both media types; the choice is made above.
	c.Request.Header.Set("Accept", "application/json, text/event-stream")
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
	for _, value := range values {
		for _, part := range strings.Split(value, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if qZero(params) {
				continue // "q=0": explicitly not acceptable
			}
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK, sseOK
}

// qZero reports whether Accept parameters carry a quality of 0.
func qZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// gate applies, to tools/call requests for tools of the table, the key
// requirement, key resolution (Options.Keys), the plan gate and the Meter,
// and sets the rate-limit headers; its verdict reaches the tool handler
// through the request context. initialize, tools/list, ping, notifications
// and responses pass untouched and are never metered; so is a tools/call
// naming an unknown tool, which the SDK answers with -32602.
func (s *Server) gate(c *gin.Context) {
	v, _ := c.Get(ctxPeek)
	p, _ := v.(*rpcPeek)
	if !p.isToolsCall() {
		c.Next()
		return
	}
	start := time.Now()
	v, _ = c.Get(ctxCredential)
	cred, _ := v.(*credential)
	tool := s.tools[p.tool]
	keyID := cred.keyID
	if keyID == "" {
		if !s.opts.AllowAnonymous {
			if tool != nil {
				s.metrics.callDone(tool.Name, OutcomeUnauthorized)
			}
			c.Header("WWW-Authenticate", `ApiKey realm="restmcp", Bearer realm="restmcp"`)
			abortRPC(c, http.StatusUnauthorized, p.id, CodeUnauthorized,
				"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>")
			return
		}
		keyID = AnonymousKeyID
	}
	if tool == nil {
		c.Next()
		return
	}

	a := &admission{start: start, call: Call{KeyID: keyID, Tool: tool.Name}}
	if s.opts.Keys != nil {
		plan, ok := s.resolveKey(c, cred, p.id, tool.Name)
		if !ok {
			return
		}
		a.call.Plan = plan
		if !plan.Allows(tool.Name, tool.Tags) {
			// Answered by the tool handler, so that the go-sdk writes the
			// result envelope; not metered, nothing sent upstream.
			a.denied = plan.DeniedMessage(tool.Name)
			c.Request = c.Request.WithContext(withAdmission(c.Request.Context(), a))
			c.Next()
			return
		}
		a.call.Cost = plan.Cost(tool.Name, tool.Cost)
	} else {
		a.call.Cost = max(tool.Cost, 0)
		if a.call.Cost == 0 {
			a.call.Cost = 1
		}
	}

	if s.opts.Meter != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
		t := time.Now()
		d, err := s.opts.Meter.AdmitCall(ctx, a.call)
		cancel()
		s.metrics.meterOp("admit", time.Since(t), err)
		s.metrics.decision(d, err)
		if err != nil {
			s.metrics.callDone(tool.Name, OutcomeUnavailable)
			s.logger.Error("metering failed; refusing tools/call", "key_id", keyID, "tool", tool.Name, "error", err.Error())
			c.Header("Retry-After", strconv.Itoa(meterRetryAfterSeconds))
			abortRPC(c, http.StatusServiceUnavailable, p.id, CodeUnavailable,
				"usage metering is temporarily unavailable; retry in "+strconv.Itoa(meterRetryAfterSeconds)+" seconds")
			return
		}
		if d.hasHeaders() {
			setRateLimitHeaders(c.Writer.Header(), d)
		}
		if !d.Allowed {
			retry := ceilSeconds(d.RetryAfter)
			c.Header("Retry-After", strconv.FormatInt(retry, 10))
			s.metrics.callDone(tool.Name, OutcomeRefused)
			e := Event{KeyID: keyID, Tool: tool.Name, Outcome: OutcomeRefused, Latency: time.Since(start), Time: start}
			if a.call.Plan != nil {
				e.Plan = a.call.Plan.Name()
			}
			s.background(c.Request.Context(), func(ctx context.Context) { s.recordEvent(ctx, e) })
			abortRPC(c, http.StatusTooManyRequests, p.id, CodeRateLimited, refusalMessage(a.call.Plan, d, retry))
			return
		}
		a.decision, a.metered = d, true
	}
	c.Request = c.Request.WithContext(withAdmission(c.Request.Context(), a))
	c.Next()
}

// resolveKey resolves the caller's key to its plan. On failure it answers
// (401 for an unknown or revoked key, 503 when the key store cannot
// decide) and returns false.
func (s *Server) resolveKey(c *gin.Context, cred *credential, id json.RawMessage, tool string) (Plan, bool) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
	t := time.Now()
	plan, err := s.opts.Keys.ResolveKey(ctx, cred.key)
	cancel()
	keyErr := errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrRevokedKey)
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
		o := OutcomeUnavailable
		if keyErr {
			o = OutcomeUnauthorized
		}
		s.metrics.callDone(tool, o)
	}
	msg, status := keyErrorMessage(cred.keyID, err)
	if status == http.StatusUnauthorized {
		s.logger.Info("API key refused", "key_id", cred.keyID, "tool", tool, "error", err.Error())
		c.Header("WWW-Authenticate", `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`)
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
	code := CodeUnauthorized
	if status != http.StatusUnauthorized {
		code = CodeUnavailable
	}
	abortRPC(c, status, id, code, msg)
	return nil, false
}

// keyErrorMessage is the text and HTTP status for a key resolution error.
func keyErrorMessage(keyID string, err error) (string, int) {
	switch {
	case errors.Is(err, ErrRevokedKey):
		return "API key revoked (key_id " + keyID + "): this key no longer works; ask the API provider for a new key and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>", http.StatusUnauthorized
	case errors.Is(err, ErrUnknownKey):
		return "unknown API key (key_id " + keyID + "): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>", http.StatusUnauthorized
	}
	return "API key check is temporarily unavailable; retry in " + strconv.Itoa(meterRetryAfterSeconds) + " seconds", http.StatusServiceUnavailable
}

// refusalMessage is the JSON-RPC error text of a 429: which limit of which
// plan, and when to retry.
func refusalMessage(plan Plan, d Decision, retry int64) string {
	on := ""
	if plan != nil {
		on = fmt.Sprintf(" of plan %q", plan.Name())
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
func setRateLimitHeaders(h http.Header, d Decision) {
	limit := strconv.FormatInt(d.Limit, 10)
	remaining := strconv.FormatInt(max(d.Remaining, 0), 10)
	reset := strconv.FormatInt(ceilSecondsMin0(d.Reset), 10)
	h.Set("RateLimit-Limit", limit)
	h.Set("RateLimit-Remaining", remaining)
	h.Set("RateLimit-Reset", reset)
	h.Set("X-RateLimit-Limit", limit)
	h.Set("X-RateLimit-Remaining", remaining)
	h.Set("X-RateLimit-Reset", reset)
	if d.Window > 0 {
		policy := limit + ";w=" + strconv.FormatInt(ceilSecondsMin0(d.Window), 10)
		if d.Policy != "" {
			policy += `;policy="` + d.Policy + `"`
		}
		h.Set("RateLimit-Policy", policy)
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

// serveMCP hands the request to the go-sdk handler chosen by peek.
func (s *Server) serveMCP(c *gin.Context) {
	h := s.jsonHandler
	if v, ok := c.Get(ctxHandler); ok {
		if hv, ok := v.(http.Handler); ok {
			h = hv
		}
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
