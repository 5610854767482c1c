package adapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	header     http.Header
	remoteAddr string
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
		ex.sse = &sseOrigin{header: c.Request.Header.Clone(), remoteAddr: c.Request.RemoteAddr}
		w := &endpointCapture{ResponseWriter: c.Writer}
		owner := sessionOwner(ex.cred)
		w.found = func(id string) { s.legacyOwners.Store(id, owner) }
		s.legacyHandler.ServeHTTP(w, c.Request)
		if w.id != "" {
			s.legacyOwners.Delete(w.id)
		}
		c.Abort()
		return
	}
	if cred := extractCredential(c.Request); cred.key != "" || cred.unsafe != "" {
		if owner, ok := s.legacyOwners.Load(c.Query("sessionid")); ok && owner.(string) != sessionOwner(cred) {
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

// captureWriter keeps what the gate's steps answer when one refuses a
// legacy SSE call.
type captureWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *captureWriter) Header() http.Header  { return w.h }
func (w *captureWriter) WriteHeader(code int) { w.status = code }
func (w *captureWriter) Write(b []byte) (int, error) {
	w.body = append(w.body, b...)
	return len(b), nil
}

// admitLegacy admits a tools/call that arrived on a legacy SSE session, with
// exactly the gate's steps (authenticate, authorize, admit) on a request
// that carries the stream's GET headers and client address. It returns the
// call's own exchange in ctx, and the admission to settle after the call;
// a refusal is the JSON-RPC error the gate would have answered (headers
// such as Retry-After cannot ride on the stream; the message says when).
func (s *Server) admitLegacy(ctx context.Context, origin *exchange, name string) (context.Context, *admission, error) {
	call := &exchange{requestID: newRequestID(), cred: origin.cred, forward: origin.forward, table: s.table.Load(),
		msg: &rpcMessage{method: "tools/call", tool: name, id: json.RawMessage("0")}}
	ctx = context.WithValue(ctx, exchangeKey{}, call)
	tool := call.table.tools[name]
	if tool == nil {
		return ctx, nil, nil // answered as an unknown tool
	}
	w := &captureWriter{h: http.Header{}}
	c := gin.CreateTestContextOnly(w, s.engine)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.LegacySSEPath, http.NoBody)
	req.Header, req.RemoteAddr = origin.sse.header.Clone(), origin.sse.remoteAddr
	c.Request = req
	a := &admission{start: time.Now()}
	ok := s.authenticate(c, call, tool, a)
	if ok {
		a.call.Tool = tool.Name
		ok = s.authorize(c, call, tool, a) && (a.denied != "" || s.admit(c, call, a))
	}
	if !ok {
		var e rpcError
		if json.Unmarshal(w.body, &e) != nil {
			return ctx, nil, &jsonrpc.Error{Code: codeInternalError, Message: "the call was refused"}
		}
		return ctx, nil, &jsonrpc.Error{Code: int64(e.Error.Code), Message: e.Error.Message}
	}
	call.admission = a
	return ctx, a, nil
}

// newLegacyHandler is the go-sdk's SSE handler over s.mcp.
func (s *Server) newLegacyHandler() http.Handler {
	return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.SSEOptions{MaxRequestBodyBytes: s.opts.MaxBodyBytes})
}
