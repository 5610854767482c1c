package adapter

import (
	"container/list"
	"context"
	"net/http"
	"sync"
)

// callerPools is the default upstream client's RoundTripper: one
// net/http Transport, so one pool of upstream connections, for each
// caller's key, so that no connection ever carries two callers' requests.
//
// An HTTP/1.1 connection has nothing that ties an answer to its request:
// it is the next answer on the connection. An upstream that sends bytes
// past an answer (a second answer, a body longer than its
// Content-Length, a body after 204) leaves them to be read as the answer
// to the next request on that connection. net/http's Transport closes a
// connection on which it finds such bytes while the connection is idle,
// but bytes that arrive after the next request was written, or while the
// connection is being handed to it, are that request's answer: in
// TestAnswerIntegrity, 32 callers and 2,000 calls with one pool gave 132
// callers another caller's answer. With a pool per key, what such an
// upstream can do is give a caller an earlier answer of its own key, never
// another key's.
//
// The pools of the maxCallerPools keys used most recently are kept; the
// least recently used is dropped past that (its idle connections closed;
// one still carrying a call is closed when idle, within IdleConnTimeout).
// Calls without a key (public mode, the OAuth front's checks) share one
// pool. The cost of the separation: each key opens its own connections
// (a TLS handshake per key and connection on an https upstream) where one
// pool would reuse another caller's.
type callerPools struct {
	newTransport func() *http.Transport

	mu    sync.Mutex
	byKey map[string]*list.Element // of *callerPool
	order *list.List               // most recently used first
	max   int
}

type callerPool struct {
	key string
	t   *http.Transport
}

// maxCallerPools is how many keys' connection pools the default upstream
// client keeps (each at most upstreamIdlePerCaller idle connections).
const maxCallerPools = 4096

// upstreamIdlePerCaller is how many idle upstream connections one key's
// pool keeps per host (and twice that in all).
const upstreamIdlePerCaller = 32

func newCallerPools(max int, newTransport func() *http.Transport) *callerPools {
	return &callerPools{newTransport: newTransport, byKey: map[string]*list.Element{}, order: list.New(), max: max}
}

// upstreamCallerKey is the context key of the caller's key for the
// upstream client (withUpstreamCaller).
type upstreamCallerKey struct{}

// withUpstreamCaller returns ctx carrying key, the caller's key, for the
// upstream client to pick the caller's connection pool by.
func withUpstreamCaller(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, upstreamCallerKey{}, key)
}

// RoundTrip sends req on the connections of the caller its context names.
func (p *callerPools) RoundTrip(req *http.Request) (*http.Response, error) {
	key, _ := req.Context().Value(upstreamCallerKey{}).(string)
	return p.pool(key).RoundTrip(req)
}

// pool returns key's Transport, made on first use.
func (p *callerPools) pool(key string) *http.Transport {
	p.mu.Lock()
	if e, ok := p.byKey[key]; ok {
		p.order.MoveToFront(e)
		t := e.Value.(*callerPool).t
		p.mu.Unlock()
		return t
	}
	t := p.newTransport()
	p.byKey[key] = p.order.PushFront(&callerPool{key: key, t: t})
	var dropped *http.Transport
	if p.order.Len() > p.max {
		last := p.order.Back()
		p.order.Remove(last)
		old := last.Value.(*callerPool)
		delete(p.byKey, old.key)
		dropped = old.t
	}
	p.mu.Unlock()
	if dropped != nil {
		// A call still on one of its connections finishes; the
		// connection is closed when it comes back idle.
		dropped.CloseIdleConnections()
	}
	return t
}

// CloseIdleConnections closes every pool's idle connections
// (http.Client.CloseIdleConnections).
func (p *callerPools) CloseIdleConnections() {
	p.mu.Lock()
	var ts []*http.Transport
	for e := p.order.Front(); e != nil; e = e.Next() {
		ts = append(ts, e.Value.(*callerPool).t)
	}
	p.mu.Unlock()
	for _, t := range ts {
		t.CloseIdleConnections()
	}
}
