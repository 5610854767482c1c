package adapter

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/openapi"
)

// Safe retries. An operation that declares an Idempotency-Key (or
// X-Idempotency-Key) header gets one on every call: the model's when it
// passes the argument, else one restmcp makes (a UUID). net/http resends a
// request that carries such a header, with the same key, when a reused
// connection fails before the answer (its only retries; restmcp makes
// none). A call that fails says whether its request was sent, and with a
// key, how to retry it without the API acting twice; a key restmcp made is
// in the result's _meta. https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/

// metaKeyIdempotency is the _meta member holding the key restmcp made.
const metaKeyIdempotency = "io.restmcp/idempotency-key"

// idempotency is one call's key and where it went.
type idempotency struct {
	arg, header, key string
	generated        bool
}

// newIdempotencyKey is a random UUID (version 4, RFC 9562 §5.4).
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// prepareSend gives req t's idempotency key (the caller's, or a new one)
// and, for a method that is not safe, a trace that records whether the
// request was written. It returns the request to send and what to note.
func prepareSend(t *openapi.Tool, req *http.Request) (*http.Request, *idempotency, *atomic.Bool) {
	var idem *idempotency
	if arg, header := t.IdempotencyHeader(); header != "" {
		idem = &idempotency{arg: arg, header: header, key: req.Header.Get(header)}
		if idem.key == "" {
			idem.key, idem.generated = newIdempotencyKey(), true
			req.Header.Set(header, idem.key)
		}
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return req, idem, nil
	}
	wrote := new(atomic.Bool)
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}
	return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), idem, wrote
}

// noteSend adds to res what a retry needs: after a transport failure,
// whether the request was sent; after an error with a key, the key to
// retry with; and the key restmcp made, in _meta.
func noteSend(res *mcp.CallToolResult, failed bool, idem *idempotency, wrote *atomic.Bool) {
	var note string
	switch {
	case failed && wrote != nil && wrote.Load():
		note = "the request was sent before the failure: the API may have acted on it"
	case failed && wrote != nil:
		note = "the request was not sent: the API did not act on it, and retrying is safe"
	}
	if idem != nil && res.IsError && (note == "" || wrote.Load()) {
		if note != "" {
			note += "; "
		}
		note += "it carried " + idem.header + " " + idem.key + ": to retry it, pass the same key (" + strconv.Quote(idem.arg) + ": " + strconv.Quote(idem.key) + ") so the API acts at most once"
	}
	if note != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: note})
	}
	if idem != nil && idem.generated {
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[metaKeyIdempotency] = idem.key
	}
}
