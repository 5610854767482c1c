package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordingTripper answers every request itself and keeps its URL.
type recordingTripper struct {
	mu   sync.Mutex
	seen []string
}

func (r *recordingTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.String())
	r.mu.Unlock()
	return &http.Response{StatusCode: 299, Body: http.NoBody, Request: req}, nil
}

// rawServer accepts connections and hands each to serve.
func rawServer(t *testing.T, serve func(net.Conn)) (addr string, conns *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns = new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go serve(c)
		}
	}()
	return l.Addr().String(), conns
}

// countingServer is an httptest server of h that counts the connections
// it accepts.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	srv := httptest.NewUnstartedServer(h)
	n := new(atomic.Int32)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, n
}

// identityRequest is a request the Transport makes itself: it has an
// Accept-Encoding.
func identityRequest(ctx context.Context, method, target string, body io.Reader) *http.Request {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	return req
}

// captureOne reads one request's bytes from c (its head, then the body its
// Content-Length or chunking gives), answers 200 "ok" and closes.
func captureOne(c net.Conn, got chan<- string) {
	defer c.Close()
	br := bufio.NewReader(c)
	var raw strings.Builder
	req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(br, &raw)))
	if err != nil {
		got <- "error: " + err.Error()
		return
	}
	io.Copy(io.Discard, req.Body)
	got <- raw.String()
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
}

// TestWritesNetHTTPsBytes sends the same requests through net/http's
// Transport and through Transport to a server that keeps the raw bytes:
// they must be identical, and equal to the exact bytes written out here.
func TestWritesNetHTTPsBytes(t *testing.T) {
	got := make(chan string, 1)
	addr, _ := rawServer(t, func(c net.Conn) { captureOne(c, got) })
	type build func() *http.Request
	withBody := func(method, target, body string, length int64) build {
		return func() *http.Request {
			req, _ := http.NewRequest(method, target, strings.NewReader(body))
			req.ContentLength = length
			if length < 0 {
				req.Body = io.NopCloser(strings.NewReader(body)) // unknown length: chunked
				req.GetBody = nil
			}
			req.Header.Set("Accept-Encoding", "gzip, br")
			req.Header.Set("X-Api-Key", "k1")
			req.Header.Set("Content-Type", "application/json")
			return req
		}
	}
	cases := []struct {
		name string
		req  build
		want string
	}{
		{"get with query", func() *http.Request {
			req, _ := http.NewRequest("GET", "http://"+addr+"/v1/pets/p%2F1?api_key=k%201&q=a+b", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			req.Header.Set("Accept", "application/json")
			req.Header.Add("X-Multi", "one")
			req.Header.Add("X-Multi", "two")
			return req
		}, "GET /v1/pets/p%2F1?api_key=k%201&q=a+b HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: Go-http-client/1.1\r\n" +
			"Accept: application/json\r\nAccept-Encoding: gzip\r\nX-Multi: one\r\nX-Multi: two\r\n\r\n"},
		{"post with length", withBody("POST", "http://"+addr+"/v1/pets", `{"name":"Rex"}`, 14),
			"POST /v1/pets HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 14\r\n" +
				"Accept-Encoding: gzip, br\r\nContent-Type: application/json\r\nX-Api-Key: k1\r\n\r\n{\"name\":\"Rex\"}"},
		{"post chunked", withBody("PATCH", "http://"+addr+"/v1/pets/1", `{"a":1}`, -1),
			"PATCH /v1/pets/1 HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: Go-http-client/1.1\r\nTransfer-Encoding: chunked\r\n" +
				"Accept-Encoding: gzip, br\r\nContent-Type: application/json\r\nX-Api-Key: k1\r\n\r\n7\r\n{\"a\":1}\r\n0\r\n\r\n"},
		{"host and user agent set, close", func() *http.Request {
			req, _ := http.NewRequest("DELETE", "http://"+addr+"/x", nil)
			req.Host = "api.example.com"
			req.Close = true
			req.Header.Set("User-Agent", "restmcp/1")
			req.Header.Set("Accept-Encoding", "identity")
			return req
		}, "DELETE /x HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: restmcp/1\r\nConnection: close\r\nAccept-Encoding: identity\r\n\r\n"},
	}
	std := &http.Transport{DisableKeepAlives: false}
	defer std.CloseIdleConnections()
	ours := &Transport{Fallback: &recordingTripper{}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, rt := range []http.RoundTripper{std, ours} {
				resp, err := rt.RoundTrip(c.req())
				if err != nil {
					t.Fatalf("%T: %v", rt, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "ok" {
					t.Fatalf("%T: body %q", rt, b)
				}
				if raw := <-got; raw != c.want {
					t.Errorf("%T wrote\n%q\nwant\n%q", rt, raw, c.want)
				}
			}
		})
	}
}

// TestKeepsConnections: calls in turn reuse one connection and read each
// answer whole, whatever its framing.
func TestKeepsConnections(t *testing.T) {
	srv, newConns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte("part one, "))
			w.(http.Flusher).Flush()
			w.Write([]byte("part two"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Length", "5")
			w.Write([]byte("hello"))
		}
	})
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()
	for i, c := range []struct{ method, path, body string }{
		{"GET", "/", "hello"}, {"GET", "/chunked", "part one, part two"}, {"HEAD", "/", ""},
		{"GET", "/empty", ""}, {"GET", "/", "hello"},
	} {
		req := identityRequest(context.Background(), c.method, srv.URL+c.path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != c.body {
			t.Fatalf("call %d %s %s: %q, %v; want %q", i, c.method, c.path, b, err, c.body)
		}
	}
	if n := newConns.Load(); n != 1 {
		t.Errorf("%d connections for five calls in turn, want 1", n)
	}
}

// TestEarlyCloseDropsConnection: a body closed before its end closes the
// connection, so the next call opens another.
func TestEarlyCloseDropsConnection(t *testing.T) {
	srv, newConns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 100<<10)))
	})
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()
	for i := range 2 {
		req := identityRequest(context.Background(), "GET", srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := resp.Body.Read(buf); !errors.Is(err, errBodyClosed) {
			t.Errorf("call %d: read after Close: %v, want %v", i, err, errBodyClosed)
		}
	}
	if n := newConns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// closingServer answers each connection's first request with body, without
// saying it will close, and then closes the connection.
func closingServer(t *testing.T) (string, *atomic.Int32, chan struct{}) {
	closed := make(chan struct{}, 16)
	addr, conns := rawServer(t, func(c net.Conn) {
		defer func() { c.Close(); closed <- struct{}{} }()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(req.Method), req.Method)
	})
	return addr, conns, closed
}

// TestServerClosedIdleConnection: the server closed the pooled
// connection. A GET is sent again on a new connection; a POST, which may
// not be sent twice, finds the connection closed before it is written.
func TestServerClosedIdleConnection(t *testing.T) {
	addr, conns, closed := closingServer(t)
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()
	call := func(method string) string {
		t.Helper()
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader("{}")
		}
		req, _ := http.NewRequest(method, "http://"+addr+"/", body)
		req.GetBody = nil // not replayable
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		<-closed
		return string(b)
	}
	for i, m := range []string{"GET", "GET", "POST", "POST", "GET"} {
		if got := call(m); got != m {
			t.Fatalf("call %d: %q, want %q", i, got, m)
		}
	}
	if n := conns.Load(); n != 5 {
		t.Errorf("%d connections, want 5", n)
	}
}

// TestNoRetryWhenNotReplayable: a POST on a connection that fails after
// it was written is not sent again.
func TestNoRetryWhenNotReplayable(t *testing.T) {
	var requests atomic.Int32
	addr, _ := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if requests.Add(1) > 1 {
				return // the second request gets no answer: the connection closes
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()
	for i := range 2 {
		req := identityRequest(context.Background(), "POST", "http://"+addr+"/", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if i == 0 {
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("second POST: %v, want EOF", err)
		}
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("server read %d requests, want 2 (no resend)", n)
	}
}

// TestCancelStopsTheExchange: a context that ends while the head or the
// body is awaited ends the call with the context's error.
func TestCancelStopsTheExchange(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	addr, _ := rawServer(t, func(c net.Conn) {
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		if req.URL.Path == "/body" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
		}
		<-release
	})
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req := identityRequest(ctx, "GET", "http://"+addr+"/head", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("head awaited: %v, want %v", err, context.DeadlineExceeded)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	req = identityRequest(ctx2, "GET", "http://"+addr+"/body", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "abc" {
		t.Fatalf("%q, %v", buf, err)
	}
	cancel2()
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("body awaited: %v, want %v", err, context.Canceled)
	}
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read again: %v, want %v", err, context.Canceled)
	}
	resp.Body.Close()
}

// TestSkips1xx: informational answers before the final one are skipped,
// up to five.
func TestSkips1xx(t *testing.T) {
	for _, n := range []int{1, 5, 6} {
		addr, _ := rawServer(t, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			for range n {
				io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
		})
		tr := &Transport{Fallback: &recordingTripper{}}
		req := identityRequest(context.Background(), "GET", "http://"+addr+"/", nil)
		resp, err := tr.RoundTrip(req)
		if n > max1xxResponses {
			if err == nil || err.Error() != "h1: too many 1xx informational responses" {
				t.Errorf("%d 1xx: %v", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d 1xx: %v", n, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "done" {
			t.Errorf("%d 1xx: %d %q", n, resp.StatusCode, b)
		}
		tr.CloseIdleConnections()
	}
}

// TestHeaderLimit: an answer whose head runs past MaxHeaderBytes is an
// error naming the limit.
func TestHeaderLimit(t *testing.T) {
	addr, _ := rawServer(t, func(c net.Conn) {
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 8<<10)+"\r\nContent-Length: 0\r\n\r\n")
	})
	tr := &Transport{Fallback: &recordingTripper{}, MaxHeaderBytes: 1 << 10}
	req := identityRequest(context.Background(), "GET", "http://"+addr+"/", nil)
	_, err := tr.RoundTrip(req)
	if err == nil || err.Error() != "h1: server response headers exceeded 1024 bytes; aborted" {
		t.Errorf("got %v", err)
	}

	// The limit is the head's only: a body past it reads whole.
	big := strings.Repeat("b", 100<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	defer srv.Close()
	req = identityRequest(context.Background(), "GET", srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != big {
		t.Errorf("body of %d bytes read as %d, %v", len(big), len(b), err)
	}
}

// TestFallback: what the Transport does not take goes to Fallback.
func TestFallback(t *testing.T) {
	fb := &recordingTripper{}
	proxied := "http://via-proxy.example/"
	tr := &Transport{Fallback: fb, Proxy: func(r *http.Request) (*url.URL, error) {
		if r.URL.String() == proxied {
			return url.Parse("http://proxy.example:3128")
		}
		return nil, nil
	}}
	mk := func(target string, h map[string]string) *http.Request {
		req, _ := http.NewRequest("GET", target, nil)
		for k, v := range h {
			req.Header[k] = []string{v}
		}
		return req
	}
	ae := map[string]string{"Accept-Encoding": "gzip"}
	for _, req := range []*http.Request{
		mk("https://api.example/", ae),
		mk("http://api.example/no-accept-encoding", nil),
		mk("http://api.example/expect", map[string]string{"Accept-Encoding": "gzip", "Expect": "100-continue"}),
		mk(proxied, ae),
		mk("http://api.example/bad-value", map[string]string{"Accept-Encoding": "gzip", "X-Bad": "a\r\nInjected: 1"}),
		mk("http://api.example/bad-name", map[string]string{"Accept-Encoding": "gzip", "Bad Name": "v"}),
	} {
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 299 {
			t.Fatalf("%s: %v", req.URL, err)
		}
	}
	want := []string{"GET https://api.example/", "GET http://api.example/no-accept-encoding", "GET http://api.example/expect",
		"GET " + proxied, "GET http://api.example/bad-value", "GET http://api.example/bad-name"}
	if fmt.Sprint(fb.seen) != fmt.Sprint(want) {
		t.Errorf("fallback saw %q, want %q", fb.seen, want)
	}
}

// TestIdleTimeout: idle connections are closed once IdleTimeout passes,
// and CloseIdleConnections closes the rest.
func TestIdleTimeout(t *testing.T) {
	closed := make(chan string, 4)
	addr, _ := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		_, err = br.ReadByte() // waits for the client to close
		closed <- req.URL.Path + ": " + fmt.Sprint(err)
		c.Close()
	})
	call := func(tr *Transport, path string) {
		req := identityRequest(context.Background(), "GET", "http://"+addr+path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	call(&Transport{Fallback: &recordingTripper{}, IdleTimeout: 20 * time.Millisecond}, "/swept")
	select {
	case got := <-closed:
		if got != "/swept: EOF" {
			t.Errorf("got %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("idle connection not closed")
	}
	tr := &Transport{Fallback: &recordingTripper{}}
	call(tr, "/kept")
	tr.CloseIdleConnections()
	if got := <-closed; got != "/kept: EOF" {
		t.Errorf("got %q", got)
	}
}

// TestConcurrentCalls: many goroutines share the pool; each reads its own
// answer.
func TestConcurrentCalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.URL.Query().Get("n")))
	}))
	defer srv.Close()
	tr := &Transport{Fallback: &recordingTripper{}, MaxIdlePerHost: 4}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				n := fmt.Sprint(g*1000 + i)
				req := identityRequest(context.Background(), "GET", srv.URL+"/?n="+n, nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != n {
					errs <- fmt.Errorf("asked %s, got %q", n, b)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tr.mu.Lock()
	kept := len(tr.idle[hostPort(mustURL(srv.URL))])
	tr.mu.Unlock()
	if kept > 4 {
		t.Errorf("%d idle connections kept, MaxIdlePerHost 4", kept)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestBytesPastTheAnswerDropConnection: a server that sends more than its
// answer's framing says has put the connection out of step; it is not
// reused.
func TestBytesPastTheAnswerDropConnection(t *testing.T) {
	addr, conns := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
		}
	})
	tr := &Transport{Fallback: &recordingTripper{}}
	defer tr.CloseIdleConnections()
	for i := range 2 {
		req := identityRequest(context.Background(), "GET", "http://"+addr+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "ok" {
			t.Fatalf("call %d: %q, %v", i, b, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// FuzzAnswersMatchNetHTTP serves the same raw answer to net/http's
// Transport and to Transport, over in-memory connections: both fail, or
// both give the same status, headers, body, body error and trailer, and
// neither hangs.
func FuzzAnswersMatchNetHTTP(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n{\"a\":1}",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 301 Moved\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"garbage\r\n\r\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// Each dial is one end of a pipe whose other end reads the request,
		// writes raw and closes.
		dial := func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
					return
				}
				io.WriteString(server, raw)
			}()
			return client, nil
		}
		std := &http.Transport{DialContext: dial}
		defer std.CloseIdleConnections()
		ours := &Transport{Fallback: &recordingTripper{}, DialContext: dial}
		defer ours.CloseIdleConnections()
		outcome := func(rt http.RoundTripper) string {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req := identityRequest(ctx, "GET", "http://upstream.test/", nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("%T hung: %v", rt, err)
				}
				return "error"
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if ctx.Err() != nil {
				t.Fatalf("%T hung reading the body", rt)
			}
			return fmt.Sprintf("%s %d %v %q %v trailer %v", resp.Proto, resp.StatusCode, resp.Header, b, err != nil, resp.Trailer)
		}
		if a, b := outcome(std), outcome(ours); a != b {
			t.Errorf("answer %q:\nnet/http: %s\nh1:       %s", raw, a, b)
		}
	})
}
