package adapter

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/loopback"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/restmcp/restmcp/adapter/oauth"
)

// The HTTP edge: the gin engine and its routes, and the middleware every
// request meets before the transport and the gate (recovery, request id,
// access log, Origin check, body limit, credential).

// newEngine builds the gin engine: gin.New, so every middleware is ours and
// in the order the chains below list.
func (s *Server) newEngine() *gin.Engine {
	e := gin.New()
	e.Use(s.recovery, s.requestID, s.accessLog)

	e.GET("/health", func(c *gin.Context) {
		writeJSON(c, http.StatusOK, gin.H{"status": "ok"})
	})
	e.GET("/ready", s.ready)
	e.GET("/.well-known/mcp", s.serveCard)
	e.GET("/.well-known/mcp/server-card.json", s.serveServerCard)
	e.GET("/.well-known/mcp/catalog.json", s.serveCatalog)
	e.GET(strings.TrimSuffix(s.opts.MCPPath, "/")+cardSuffix, s.serveServerCard)
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
	if s.opts.IdP != nil && s.opts.OAuth == nil {
		e.GET("/.well-known/oauth-protected-resource"+s.opts.MCPPath, s.idpResourceMetadata)
		e.GET("/.well-known/oauth-protected-resource", s.idpResourceMetadata)
	}
	if s.opts.OAuth != nil {
		s.opts.OAuth.Mount(e)
		// The same chain, with the caller taken from an access token.
		e.Any(s.opts.OAuth.ResourcePath(), chain(s.oauthCredential)...)
		e.GET(strings.TrimSuffix(s.opts.OAuth.ResourcePath(), "/")+cardSuffix, s.serveServerCard)
	} else {
		for _, p := range []string{"/register", oauth.PathRegister} {
			if p != s.opts.MCPPath && p != s.opts.LegacySSEPath {
				e.POST(p, s.noOAuthRegistration)
			}
		}
	}
	if p := s.opts.LegacySSEPath; p != "" {
		e.GET(p, s.originCheck, s.extractCredential, s.serveLegacySSE)
		e.POST(p, s.originCheck, s.serveLegacySSE)
	}
	e.NoRoute(func(c *gin.Context) {
		writeJSON(c, http.StatusNotFound, gin.H{"error": "not found"})
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
	now := time.Now()
	// slog.Attr values, not alternating key/value arguments: no boxing.
	attrs := make([]slog.Attr, 0, 17)
	attrs = append(attrs,
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()),
		slog.Int64("duration_ms", now.Sub(start).Milliseconds()),
		slog.String("request_id", requestIDFrom(ctx)),
	)
	ex := exchangeFrom(ctx)
	if ex.cred.keyID != "" {
		attrs = append(attrs, slog.String("key_id", ex.cred.keyID), slog.String("key_source", ex.cred.source))
	}
	if q := c.Request.URL.RawQuery; q != "" {
		attrs = append(attrs, slog.String("query", clip.String(redactQuery(q, ex.cred.key), maxLoggedField)))
	}
	if m := ex.msg; m != nil {
		attrs = append(attrs, slog.String("rpc_method", clip.String(m.method, maxLoggedField)))
		if m.tool != "" {
			attrs = append(attrs, slog.String("tool", clip.String(m.tool, maxLoggedField)))
		}
		if ex.inner != nil && ex.inner.name != "" {
			attrs = append(attrs, slog.String("operation", clip.String(ex.inner.name, maxLoggedField)))
		}
		if api := ex.table.apiOf(m.tool, ex.inner); api != "" {
			attrs = append(attrs, slog.String("api", api))
		}
		if r := ex.call; m.method == "tools/call" && r.outcome != "" {
			attrs = append(attrs, slog.String("outcome", string(r.outcome)), slog.Int("upstream_status", r.status),
				slog.Bool("is_error", r.isError), slog.String("meter", r.decision), slog.Int64("cost", r.cost),
				slog.Float64("meter_ms", milliseconds(r.meter)), slog.Float64("upstream_ms", milliseconds(r.upstream)))
		}
	}
	// The record as Logger.LogAttrs makes it, but for its source: no
	// handler here prints one (no AddSource), and LogAttrs finds it by
	// walking the stack (runtime.Callers) on every request.
	r := slog.NewRecord(now, level, "http request", 0)
	r.AddAttrs(attrs...)
	_ = s.logger.Handler().Handle(ctx, r) // a failed write of the log is the log's (os.Stderr)
}

// milliseconds is d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
		abortJSON(c, http.StatusForbidden, gin.H{"error": "origin not allowed: " + origin})
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
		return o != "" && err == nil && loopback.Host(u.Hostname()) && loopback.Host(hostOnly(host))
	}
	for _, a := range s.opts.AllowedOrigins {
		if a == "*" || (o != "" && normalizeOrigin(a) == o) {
			return true
		}
	}
	return false
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
			writeJSON(c, http.StatusServiceUnavailable, gin.H{"status": "unavailable"})
			return
		}
	}
	writeJSON(c, http.StatusOK, gin.H{"status": "ready"})
}
