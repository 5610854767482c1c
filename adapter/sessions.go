package adapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/adapter/session"
)

// Defaults of sessions mode.
const (
	DefaultSessionIdleTimeout    = 30 * time.Minute
	DefaultSessionStreamLifetime = time.Minute
	DefaultSessionKeepAlive      = 15 * time.Second
)

// The messages of sessions mode's refusals (JSON-RPC -32600).
const (
	msgMissingSession = "Missing Mcp-Session-Id header."
	msgUnknownSession = "Session not found or expired. Re-initialize."
)

// listChangedNotification is the notification sent on session streams
// when the tool table changes (MCP 2025-11-25 §Tools "List Changed
// Notification").
const listChangedNotification = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// sessionGate applies sessions mode (Options.Sessions) to a request of the
// MCP endpoint (MCP 2025-11-25 §Transports "Session Management"): an
// initialize gets a new Mcp-Session-Id; every other request must carry a
// live one (missing: 400; unknown or expired: 404, both -32600), which its
// use keeps alive; DELETE ends the session (204); GET with Accept:
// text/event-stream opens the session's stream, and GET without it is 405.
// Requests on the 2026-07-28 wire, which has no sessions, pass.
//
// A session belongs to a caller (sessionOwner): created with a key, it
// serves only that key; created without one, it belongs to the first key
// that calls a tool on it. Another key is answered as for an unknown
// session, and only the owner may DELETE it (docs/security.md H30).
func (s *Server) sessionGate(c *gin.Context) {
	r := c.Request
	if r.Header.Get("Mcp-Protocol-Version") >= protocolVersionStandardHeaders {
		c.Next()
		return
	}
	ctx := r.Context()
	ex := exchangeFrom(ctx)
	var rpcID []byte
	if ex.msg != nil {
		rpcID = ex.msg.id
	}
	refuse := func(r *refusal) { s.renderRefusal(c, rpcID, r) }
	unavailable := func(err error) {
		s.logger.Error("session store failed; refusing request", "error", err.Error())
		refuse(s.sessionsUnavailable())
	}
	sctx, cancel := context.WithTimeout(ctx, s.opts.MeterTimeout)
	defer cancel()
	owner := sessionOwner(ex.cred)
	if r.Method == http.MethodPost && ex.msg != nil && ex.msg.method == "initialize" {
		id := session.NewID()
		addr := AddressKeyID(c.ClientIP())
		if r := s.sessionCapRefusal(s.sessionCaps.admit(addr, id, time.Now(), s.opts.SessionIdleTimeout)); r != nil {
			refuse(r)
			return
		}
		if err := s.opts.Sessions.Create(sctx, id, owner, s.opts.SessionIdleTimeout); err != nil {
			s.sessionCaps.end(addr, id)
			unavailable(err)
			return
		}
		c.Header("Mcp-Session-Id", id)
		c.Next()
		if c.Writer.Status() != http.StatusOK {
			s.sessionCaps.end(addr, id)
			_ = s.opts.Sessions.Delete(context.WithoutCancel(ctx), id)
		}
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		refuse(&refusal{status: http.StatusBadRequest, code: codeInvalidRequest, message: msgMissingSession})
		return
	}
	stored, alive, err := s.opts.Sessions.Touch(sctx, id, s.opts.SessionIdleTimeout)
	if err == nil && alive && stored == "" && owner != "" && ex.msg.isToolsCall() {
		// A session opened without a key belongs to the first key that
		// calls a tool on it.
		stored, alive, err = s.opts.Sessions.Claim(sctx, id, owner)
	}
	switch {
	case err != nil:
		unavailable(err)
		return
	case !alive || stored != "" && stored != owner && (owner != "" || r.Method == http.MethodDelete):
		// Another caller's session is answered as an unknown one: its id
		// serves nothing to another key, and only its owner ends it. A
		// request without a key may still read on it (tools/list, ping,
		// the stream), as before it was claimed: it can call no tool as
		// the owner, and a keyless call is metered as anonymous.
		refuse(&refusal{status: http.StatusNotFound, code: codeInvalidRequest, message: msgUnknownSession})
		return
	}
	switch r.Method {
	case http.MethodDelete:
		if err := s.opts.Sessions.Delete(sctx, id); err != nil {
			unavailable(err)
			return
		}
		s.sessionCaps.end(AddressKeyID(c.ClientIP()), id)
		c.AbortWithStatus(http.StatusNoContent)
	case http.MethodGet:
		if _, sse := acceptMode(r.Header.Values("Accept")); !sse || s.opts.StreamAcceptStrict && !namesEventStream(r.Header.Values("Accept")) {
			c.Header("Allow", "GET, POST, DELETE")
			c.AbortWithStatus(http.StatusMethodNotAllowed)
			return
		}
		s.serveSessionStream(c, id)
	default:
		c.Next()
	}
}

// sessionsUnavailable is the 503 for a session store that did not answer.
func (s *Server) sessionsUnavailable() *refusal {
	return s.unavailable("sessions are temporarily unavailable")
}

// sessionCapRefusal is the answer to a new session over a cap
// (sessionCaps.admit: "address" 429, "total" 503), or nil.
func (s *Server) sessionCapRefusal(over string) *refusal {
	switch over {
	case "address":
		return &refusal{status: http.StatusTooManyRequests, code: s.opts.ErrorCodes.RateLimited, retryAfter: strconv.Itoa(int(s.opts.SessionIdleTimeout.Seconds())),
			message: "too many live sessions from this address (" + strconv.Itoa(s.sessionCaps.maxAddr) + "): end one with DELETE, or let one go unused for " + s.opts.SessionIdleTimeout.String()}
	case "total":
		return &refusal{status: http.StatusServiceUnavailable, code: s.opts.ErrorCodes.Unavailable, retryAfter: "60",
			message: "this server holds its most live sessions (" + strconv.Itoa(s.sessionCaps.maxAll) + "); retry in 60 seconds"}
	}
	return nil
}

// sessionOwner is who a session belongs to: "k:" and the first 128 bits of
// the SHA-256 of the caller's key (an OAuth access token's key), or "" for
// a request without a usable key. The key itself is never stored.
func sessionOwner(cred *credential) string {
	if cred == nil || cred.key == "" || cred.unsafe != "" {
		return ""
	}
	sum := sha256.Sum256([]byte(cred.key))
	return "k:" + hex.EncodeToString(sum[:16])
}

// serveSessionStream is a session's GET stream: keep-alive comments every
// SessionKeepAlive, the list-changed notification when the tools change,
// closed by the server after SessionStreamLifetime (clients open a new
// one), when the client leaves, or at shutdown.
func (s *Server) serveSessionStream(c *gin.Context, id string) {
	if !s.streamCaps.open(id) {
		s.renderRefusal(c, nil, &refusal{status: http.StatusTooManyRequests, code: s.opts.ErrorCodes.RateLimited, retryAfter: "1",
			message: "this session has its most open streams (" + strconv.Itoa(s.streamCaps.max) + "); close one first"})
		return
	}
	defer s.streamCaps.close(id)
	w := c.Writer
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("Mcp-Session-Id", id)
	w.WriteHeader(http.StatusOK)
	w.Flush()
	c.Abort()
	sub := s.streams.subscribe()
	defer s.streams.unsubscribe(sub)
	s.logger.Debug("session stream opened", "request_id", exchangeFrom(c.Request.Context()).requestID)
	keep := time.NewTicker(s.opts.SessionKeepAlive)
	defer keep.Stop()
	end := time.NewTimer(s.opts.SessionStreamLifetime)
	defer end.Stop()
	for {
		select {
		case <-c.Request.Context().Done():
			return
		case <-end.C:
			return
		case <-s.streams.closed:
			return
		case <-keep.C:
			if _, err := w.WriteString(": keep-alive\n\n"); err != nil {
				return
			}
			w.Flush()
		case msg := <-sub:
			if _, err := w.WriteString("event: message\ndata: " + msg + "\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}

// streamHub holds the open session streams of this process.
type streamHub struct {
	mu     sync.Mutex
	subs   map[chan string]struct{}
	closed chan struct{}
	once   sync.Once
}

func newStreamHub() *streamHub {
	return &streamHub{subs: map[chan string]struct{}{}, closed: make(chan struct{})}
}

func (h *streamHub) subscribe() chan string {
	ch := make(chan string, 4)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch
}

func (h *streamHub) unsubscribe(ch chan string) {
	h.mu.Lock()
	delete(h.subs, ch)
	h.mu.Unlock()
}

// broadcast offers msg to every open stream; a stream whose buffer is full
// (a client that does not read) misses it rather than block the sender.
func (h *streamHub) broadcast(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for ch := range h.subs {
		select {
		case ch <- msg:
			n++
		default:
		}
	}
	return n
}

// EndStreams closes every session stream (they would otherwise hold an
// HTTP server's Shutdown for up to SessionStreamLifetime). Register it with
// http.Server.RegisterOnShutdown.
func (s *Server) EndStreams() { s.streams.once.Do(func() { close(s.streams.closed) }) }
