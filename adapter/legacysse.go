package adapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Legacy HTTP+SSE transport (MCP 2024-11-05 §Transports,
// https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse):
// GET Options.LegacySSEPath opens a stream whose first event names the
// message endpoint (the same path with ?sessionid=…); POSTs there deliver
// messages, answered on the stream. The caller is whoever opened the
// stream: its credential is read from the GET. A session lives in the
// process that holds its stream, so replicas need sticky routing.

// sseOrigin is what a legacy SSE session keeps of the GET that opened it,
// for admitting each of its calls.
type sseOrigin struct {
	header   http.Header
	clientIP string // as the HTTP edge resolved it (trusted proxies)
}

// serveLegacySSE is the legacy endpoint: a GET (after the origin check and
// credential extraction) opens the stream, a POST delivers a message.
//
// The session URL is the capability the 2024-11-05 transport defines: a
// POST without a credential runs as the stream's opener. A POST that
// carries one must carry the opener's (the same key: sessionOwner), else it
// is answered as for an unknown session and nothing runs. The session id is
// never logged (the access log shows a hash of it) nor put in an error.
func (s *Server) serveLegacySSE(c *gin.Context) {
	if c.Request.Method == http.MethodGet {
		addr := AddressKeyID(c.ClientIP())
		if !s.legacyCaps.open(addr) {
			c.Header("Retry-After", "1")
			c.String(http.StatusTooManyRequests, "too many open streams from this address (%d); close one first\n", s.legacyCaps.max)
			c.Abort()
			return
		}
		defer s.legacyCaps.close(addr)
		ex := exchangeFrom(c.Request.Context())
		ex.sse = &sseOrigin{header: c.Request.Header.Clone(), clientIP: c.ClientIP()}
		w := &endpointCapture{ResponseWriter: c.Writer}
		owner := callerOwner(ex.cred)
		w.found = func(id string) { s.legacyOwners.Store(id, owner) }
		s.legacyHandler.ServeHTTP(w, c.Request)
		if w.id != "" {
			s.legacyOwners.Delete(w.id)
		}
		c.Abort()
		return
	}
	if cred := extractCredential(c.Request); cred.key != "" || cred.unsafe != "" {
		if owner, ok := s.legacyOwners.Load(c.Query("sessionid")); ok && owner.(string) != s.postOwner(c.Request.Context(), cred) {
			http.Error(c.Writer, "session not found", http.StatusNotFound) // the SDK's answer for an unknown one
			c.Abort()
			return
		}
	}
	s.legacyHandler.ServeHTTP(c.Writer, c.Request)
	c.Abort()
}

// endpointCapture passes a legacy SSE stream through and reads its session
// id from the first event, the "endpoint" event whose data is the message
// URL (…?sessionid=<id>).
type endpointCapture struct {
	gin.ResponseWriter
	id    string
	found func(id string)
}

func (w *endpointCapture) Write(b []byte) (int, error) {
	if w.id == "" {
		if _, rest, ok := strings.Cut(string(b), "sessionid="); ok {
			if i := strings.IndexAny(rest, "&\r\n"); i >= 0 {
				rest = rest[:i]
			}
			w.id = rest
			w.found(rest)
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *endpointCapture) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// admitLegacy admits a tools/call that arrived on a legacy SSE session
// through admitCall, as every door does, with the stream's opener as the
// caller (its credential, forwarded headers and client address). It
// returns the call's own exchange in ctx, and the admission to settle (and
// release) after the call; a refusal is its JSON-RPC error (headers such as
// Retry-After cannot ride on the stream; the message says when).
func (s *Server) admitLegacy(ctx context.Context, origin *exchange, name string) (context.Context, *admission, error) {
	call := &exchange{requestID: newRequestID(), cred: origin.cred, forward: origin.forward, table: s.table.Load(),
		msg: &rpcMessage{method: "tools/call", tool: name, id: json.RawMessage("0")}}
	ctx = context.WithValue(ctx, exchangeKey{}, call)
	tool := call.table.tools[name]
	if tool == nil {
		return ctx, nil, nil // answered as an unknown tool
	}
	a := &admission{start: time.Now()}
	if r := s.admitCall(ctx, call, origin.sse.clientIP, tool, a); r != nil {
		return ctx, nil, r.rpcError()
	}
	call.admission = a
	return ctx, a, nil
}

// newLegacyHandler is the go-sdk's SSE handler over s.mcp.
func (s *Server) newLegacyHandler() http.Handler {
	return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.SSEOptions{MaxRequestBodyBytes: s.opts.MaxBodyBytes})
}

// callerOwner is who a resolved credential names, as a stream's owner: an
// identity provider's caller by its key id, any other by sessionOwner (an
// OAuth access token's caller by the key it stands for).
func callerOwner(cred *credential) string {
	if cred != nil && cred.idp != nil {
		return "i:" + cred.keyID
	}
	return sessionOwner(cred)
}

// postOwner is callerOwner for the credential of a legacy SSE POST,
// resolved as the GET's was (resolveCaller: the credential middleware does
// not run on these POSTs). A credential that does not resolve names no
// one ("-"), so it matches no stream.
func (s *Server) postOwner(ctx context.Context, cred *credential) string {
	caller, r := s.resolveCaller(ctx, cred)
	if r != nil {
		return "-"
	}
	return callerOwner(caller)
}
