// Package h1 is an [http.RoundTripper] for plain-HTTP/1.1 upstreams that
// makes each exchange on the calling goroutine.
//
// net/http's Transport gives every connection a reader and a writer
// goroutine: a request is handed to the writer over a channel, and the
// response comes back from the reader over another, so each exchange wakes
// two goroutines besides the caller's. For a proxy whose calls are a few
// kilobytes that hand-off is a large share of its CPU. [Transport] writes
// the request and reads the response on the caller's goroutine with the
// standard library's own wire code ([http.Request.Write],
// [http.ReadResponse]), so the bytes on the wire are the ones net/http's
// Transport writes, and keeps idle connections in a per-host pool.
//
// It takes only what it can do exactly as net/http would; everything else
// (https, a proxy, Expect: 100-continue, a request without Accept-Encoding,
// for which net/http would add gzip and decode the answer) goes to
// [Transport.Fallback].
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Defaults for the zero fields of [Transport].
const (
	DefaultMaxIdlePerHost  = 128
	DefaultIdleTimeout     = 90 * time.Second
	DefaultMaxHeaderBytes  = 10 << 20 // net/http's Transport default
	DefaultDialTimeout     = 10 * time.Second
	DefaultDialKeepAlive   = 30 * time.Second
	livenessCheckAfterIdle = time.Second
	max1xxResponses        = 5 // as net/http's Transport
	bufferSize             = 4 << 10
)

// Transport is an [http.RoundTripper] for http:// requests, each made on
// the caller's goroutine over a pooled keep-alive connection. Its zero
// value is not usable: Fallback is required. Use it from any number of
// goroutines.
//
// A request it takes is written with [http.Request.Write] (the bytes
// net/http's Transport writes when it adds no header of its own) and its
// answer read with [http.ReadResponse], skipping up to five 1xx answers
// as net/http does. The connection goes back to the pool when the body has
// been read to its end and neither side asked to close; a body closed
// early, or a read that failed, closes the connection.
//
// Cancellation: when the request's context ends, the connection's deadline
// is set in the past, so a write or read in progress returns at once, and
// the error returned is the context's ([context.Canceled],
// [context.DeadlineExceeded]).
//
// A connection that sat idle can have been closed by the server, which
// net/http's reader goroutine would have noticed. Here a replayable
// request (no body or GetBody set; GET, HEAD, OPTIONS, TRACE or an
// Idempotency-Key header, as net/http decides) that fails on a reused
// connection before any byte of the answer arrives is sent once more on a
// new connection; and before a request that is not replayable, or on a
// connection idle for over a second, the connection is probed with one
// non-blocking peek (recv(2) with MSG_PEEK|MSG_DONTWAIT).
type Transport struct {
	// Fallback makes every request this Transport does not take: https,
	// a request Proxy sends through a proxy, one with an Expect header,
	// and one without Accept-Encoding (net/http's Transport would ask for
	// gzip and decode the answer). Required.
	Fallback http.RoundTripper
	// Proxy, if not nil, is asked for each http:// request; a non-nil URL
	// sends the request to Fallback. http.ProxyFromEnvironment is the
	// usual value.
	Proxy func(*http.Request) (*url.URL, error)
	// DialContext opens connections, as http.Transport's field of that
	// name. Nil: a net.Dialer with Timeout DefaultDialTimeout and
	// KeepAlive DefaultDialKeepAlive.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost is the most idle connections kept per host:port.
	// Zero: DefaultMaxIdlePerHost.
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer. Zero:
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the bytes of an answer's status line and
	// headers (1xx answers included). Zero: DefaultMaxHeaderBytes.
	MaxHeaderBytes int64

	mu       sync.Mutex
	idle     map[string][]*conn // by host:port, most recently used last
	sweeping bool
}

// conn is one pooled connection.
type conn struct {
	nc   net.Conn
	r    countingReader
	br   *bufio.Reader
	bw   *bufio.Writer
	addr string
	used time.Time // when it went idle
}

// countingReader reads from the connection, counting the bytes of the
// current exchange and failing once an answer's head runs past limit.
type countingReader struct {
	nc    net.Conn
	n     int64 // bytes read in this exchange
	limit int64 // most bytes allowed while the head is read; <0: no limit
}

var errHeaderTooLong = errors.New("h1: server response headers exceeded the limit")

func (r *countingReader) Read(p []byte) (int, error) {
	if r.limit >= 0 {
		if r.n >= r.limit {
			return 0, errHeaderTooLong
		}
		if rest := r.limit - r.n; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	n, err := r.nc.Read(p)
	r.n += int64(n)
	return n, err
}

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.takes(req) {
		return t.Fallback.RoundTrip(req)
	}
	if t.Proxy != nil {
		if p, err := t.Proxy(req); err != nil || p != nil {
			return t.Fallback.RoundTrip(req)
		}
	}
	ctx := req.Context()
	addr := hostPort(req.URL)
	replay := replayable(req)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.conn(ctx, addr, attempt > 0, !replay)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		if reused && attempt == 0 && c.r.n == 0 && ctx.Err() == nil && replay {
			if req, err = rewound(req); err == nil {
				continue
			}
		}
		closeBody(req)
		return nil, err
	}
}

// takes tells whether t makes req itself (see Fallback). A header
// net/http would refuse is left to Fallback too, which returns its error.
func (t *Transport) takes(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" ||
		len(req.Header["Expect"]) > 0 || len(req.Header["Accept-Encoding"]) == 0 {
		return false
	}
	for k, vv := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return false
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
		}
	}
	return true
}

// exchange writes req on c and reads its answer. On error c is closed.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (*http.Response, error) {
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	}
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		return nil, ctxErrOr(ctx, err)
	}
	c.r.n, c.r.limit = 0, t.maxHeaderBytes()
	if err := req.Write(c.bw); err != nil {
		return fail(err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	var resp *http.Response
	for n1xx := 0; ; n1xx++ {
		r, err := http.ReadResponse(c.br, req)
		if err != nil {
			if errors.Is(err, errHeaderTooLong) {
				err = fmt.Errorf("h1: server response headers exceeded %d bytes; aborted", c.r.limit)
			}
			return fail(err)
		}
		if r.StatusCode < 100 || r.StatusCode > 199 || r.StatusCode == http.StatusSwitchingProtocols {
			resp = r
			break
		}
		if n1xx == max1xxResponses {
			return fail(errors.New("h1: too many 1xx informational responses"))
		}
	}
	c.r.limit = -1
	keep := !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody {
		t.finish(c, stop, keep)
		return resp, nil
	}
	resp.Body = &body{rc: resp.Body, c: c, t: t, ctx: ctx, stop: stop, keep: keep}
	return resp, nil
}

// body is an answer's body; at its end the connection goes back to the
// pool.
type body struct {
	rc   io.ReadCloser
	c    *conn
	t    *Transport
	ctx  context.Context
	stop func() bool
	keep bool
	err  error // once the body has ended: io.EOF, the read's error, or errBodyClosed
}

var errBodyClosed = errors.New("h1: read on closed response body")

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.release(io.EOF, b.keep)
	case err != nil:
		err = ctxErrOr(b.ctx, err)
		b.release(err, false)
	}
	return n, err
}

func (b *body) Close() error {
	if b.err == nil {
		b.release(errBodyClosed, false)
	}
	return nil
}

// release ends the body with err and finishes its exchange.
func (b *body) release(err error, keep bool) {
	b.err = err
	b.t.finish(b.c, b.stop, keep)
}

// finish ends an exchange on c whose answer was read whole or given up:
// stop unhooks the context's cancellation, and c goes back to the pool
// when keep and the context had not ended (stop reports that it was still
// hooked), else it is closed.
func (t *Transport) finish(c *conn, stop func() bool, keep bool) {
	if stop() && keep {
		t.put(c)
		return
	}
	c.nc.Close()
}

// ctxErrOr is ctx's error once ctx has ended (a cancelled exchange fails
// with it, whatever the connection said), else err.
func ctxErrOr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

var aLongTimeAgo = time.Unix(1, 0)

// conn returns an idle connection to addr that is still open, or a new
// one (always when fresh); reused tells which. An idle connection is
// probed when it sat idle for over a second, or always when check (a
// request that cannot be sent again).
func (t *Transport) conn(ctx context.Context, addr string, fresh, check bool) (c *conn, reused bool, err error) {
	now := time.Now()
	for !fresh {
		c = t.take(addr)
		if c == nil {
			break
		}
		idle := now.Sub(c.used)
		if idle > t.idleTimeout() || ((check || idle > livenessCheckAfterIdle) && !open(c.nc)) {
			c.nc.Close()
			continue
		}
		return c, true, nil
	}
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: DefaultDialKeepAlive}).DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	c = &conn{nc: nc, addr: addr}
	c.r.nc = nc
	c.br = bufio.NewReaderSize(&c.r, bufferSize)
	c.bw = bufio.NewWriterSize(nc, bufferSize)
	return c, false, nil
}

func (t *Transport) take(addr string) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.idle[addr]
	if len(l) == 0 {
		return nil
	}
	c := l[len(l)-1]
	l[len(l)-1] = nil
	t.idle[addr] = l[:len(l)-1]
	return c
}

func (t *Transport) put(c *conn) {
	if c.br.Buffered() > 0 { // bytes past the answer: the stream is out of step
		c.nc.Close()
		return
	}
	c.used = time.Now()
	t.mu.Lock()
	if t.idle == nil {
		t.idle = make(map[string][]*conn)
	}
	l := t.idle[c.addr]
	if len(l) >= t.maxIdlePerHost() {
		t.mu.Unlock()
		c.nc.Close()
		return
	}
	t.idle[c.addr] = append(l, c)
	if !t.sweeping {
		t.sweeping = true
		time.AfterFunc(t.idleTimeout(), t.sweep)
	}
	t.mu.Unlock()
}

// sweep closes the connections idle past IdleTimeout, and runs again
// while any stay idle.
func (t *Transport) sweep() {
	now := time.Now()
	var expired []*conn
	t.mu.Lock()
	for addr, l := range t.idle {
		kept := l[:0]
		for _, c := range l {
			if now.Sub(c.used) > t.idleTimeout() {
				expired = append(expired, c)
			} else {
				kept = append(kept, c)
			}
		}
		clear(l[len(kept):])
		if len(kept) == 0 {
			delete(t.idle, addr)
		} else {
			t.idle[addr] = kept
		}
	}
	if t.sweeping = len(t.idle) > 0; t.sweeping {
		time.AfterFunc(t.idleTimeout()/2, t.sweep)
	}
	t.mu.Unlock()
	for _, c := range expired {
		c.nc.Close()
	}
}

// CloseIdleConnections closes every idle connection, its own and
// Fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			c.nc.Close()
		}
	}
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func (t *Transport) maxIdlePerHost() int {
	if t.MaxIdlePerHost > 0 {
		return t.MaxIdlePerHost
	}
	return DefaultMaxIdlePerHost
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (t *Transport) maxHeaderBytes() int64 {
	if t.MaxHeaderBytes > 0 {
		return t.MaxHeaderBytes
	}
	return DefaultMaxHeaderBytes
}

// hostPort is u's host:port, the port 80 when u names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// replayable tells whether req may be sent again after a reused
// connection failed, as net/http's Transport decides.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// rewound is req with a fresh body from GetBody (req itself without a
// body).
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = b
	return &r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
