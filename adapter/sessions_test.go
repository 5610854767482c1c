package adapter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/adapter/session"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/openapi"
)

// TestSessionsMode: initialize issues an Mcp-Session-Id; a later request
// without it is 400, with an unknown one 404 (both -32600 with the fixed
// messages), with the live one served; GET without Accept:
// text/event-stream is 405 with no body; DELETE is 204 and kills the id; an
// idle session expires.
func TestSessionsMode(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Sessions: session.NewMemoryStore(clk.now), SessionIdleTimeout: time.Minute})
	url := srv.URL + "/mcp"

	init := post(t, url, initializeBody, nil)
	id := init.header.Get("Mcp-Session-Id")
	// Nothing watches the document, so no tools/list_changed will come.
	if init.status != 200 || len(id) != 22 || !strings.Contains(init.body, `"capabilities":{"tools":{}}`) {
		t.Fatalf("initialize: %d %v %s", init.status, init.header, init.body)
	}
	watched := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Sessions: session.NewMemoryStore(clk.now), Watched: true})
	if got := post(t, watched.URL+"/mcp", initializeBody, nil); !strings.Contains(got.body, `"capabilities":{"tools":{"listChanged":true}}`) {
		t.Errorf("initialize with a watched document: %s, want tools.listChanged", got.body)
	}
	for _, tc := range []struct {
		header map[string]string
		status int
		body   string
	}{
		{nil, 400, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Missing Mcp-Session-Id header."}}`},
		{map[string]string{"Mcp-Session-Id": "nope"}, 404, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Session not found or expired. Re-initialize."}}`},
	} {
		got := post(t, url, toolsListBody, tc.header)
		if got.status != tc.status || got.body != tc.body {
			t.Errorf("%v: %d %s, want %d %s", tc.header, got.status, got.body, tc.status, tc.body)
		}
	}
	if got := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); got.status != 400 || got.body != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Missing Mcp-Session-Id header."}}` {
		t.Errorf("notification without the session: %d %s", got.status, got.body)
	}
	withID := map[string]string{"Mcp-Session-Id": id}
	if got := post(t, url, toolsListBody, withID); got.status != 200 || !strings.Contains(got.body, `"name":"get_pet"`) {
		t.Errorf("tools/list in the session: %d %s", got.status, got.body)
	}

	get := func(accept string) rpcResponse {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		return do(t, req)
	}
	if got := get("application/json"); got.status != 405 || got.body != "" || got.header.Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("GET without SSE: %d %v %q", got.status, got.header, got.body)
	}

	// 59 s idle: alive (and the use slides the expiry); then 61 s: gone.
	clk.add(59 * time.Second)
	if got := post(t, url, pingBody, withID); got.status != 200 {
		t.Errorf("after 59 s: %d %s", got.status, got.body)
	}
	clk.add(59 * time.Second)
	if got := post(t, url, pingBody, withID); got.status != 200 {
		t.Errorf("59 s after the last use: %d %s", got.status, got.body)
	}
	clk.add(61 * time.Second)
	if got := post(t, url, pingBody, withID); got.status != 404 {
		t.Errorf("61 s idle: %d %s", got.status, got.body)
	}

	id2 := post(t, url, initializeBody, nil).header.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id2)
	if got := do(t, req); got.status != 204 || got.body != "" {
		t.Errorf("DELETE: %d %q", got.status, got.body)
	}
	if got := post(t, url, pingBody, map[string]string{"Mcp-Session-Id": id2}); got.status != 404 {
		t.Errorf("after DELETE: %d %s", got.status, got.body)
	}
}

// testClock is a settable clock, safe for the server's goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestSessionStreamListChanged: the go-sdk client, which keeps the session
// and opens its stream, hears notifications/tools/list_changed when the
// tools are reloaded, and its next tools/list has the new tools. A raw
// stream carries keep-alive comments and ends after its lifetime.
func TestSessionStreamListChanged(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	tools := loadTools(t, "testdata/c23.yaml", up.URL)
	s, err := New(Options{Tools: tools, Sessions: session.NewMemoryStore(nil), SessionKeepAlive: 20 * time.Millisecond, SessionStreamLifetime: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() == "" {
		t.Fatal("the client has no session id")
	}

	// Wait until the client's stream is open, then reload.
	testenv.Eventually(t, 5*time.Second, "the client's stream", func() bool {
		s.streams.mu.Lock()
		defer s.streams.mu.Unlock()
		return len(s.streams.subs) > 0
	})
	renamed := *tools[0]
	renamed.Name = "fetch_pet"
	if err := s.Reload([]*openapi.Tool{&renamed}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed reached the client")
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "fetch_pet" {
		t.Errorf("tools after the notification: %v", list.Tools)
	}

	// A raw stream: keep-alive comments, then the server ends it.
	id := post(t, srv.URL+"/mcp", initializeBody, nil).header.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Accept", "text/event-stream")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(lines) < 3 || slices.ContainsFunc(lines, func(l string) bool { return l != ": keep-alive" }) {
		t.Errorf("stream: %d %v %q", resp.StatusCode, resp.Header, lines)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("the stream ended after %v, before its lifetime", took)
	}
}

// TestSessionsBelongToTheirCaller: a session created with key A serves only
// A: key B with A's session id gets the unknown-session answer, on every
// method, and cannot DELETE it; A's session still works. A session created
// without a key belongs to the first key that calls a tool on it. A request
// without a key may read on an owned session but not end it.
func TestSessionsBelongToTheirCaller(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Sessions: session.NewMemoryStore(nil)})
	url := srv.URL + "/mcp"
	const unknown = `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Session not found or expired. Re-initialize."}}`
	with := func(sid, key string) map[string]string {
		h := map[string]string{"Mcp-Session-Id": sid}
		if key != "" {
			h["X-API-Key"] = key
		}
		return h
	}
	del := func(sid, key string) int {
		req, _ := http.NewRequest(http.MethodDelete, url, nil)
		for k, v := range with(sid, key) {
			req.Header.Set(k, v)
		}
		return do(t, req).status
	}

	a := post(t, url, initializeBody, map[string]string{"X-API-Key": "key-a"}).header.Get("Mcp-Session-Id")
	for _, body := range []string{toolsListBody, toolsCallBody(2, "get_pet", `{"petId":"p1"}`)} {
		got := post(t, url, body, with(a, "key-b"))
		if got.status != 404 || got.body != fmt.Sprintf(unknown, "2") {
			t.Errorf("key B on A's session: %d %s", got.status, got.body)
		}
	}
	if st := del(a, "key-b"); st != 404 {
		t.Errorf("key B DELETE of A's session: %d, want 404", st)
	}
	if st := del(a, ""); st != 404 {
		t.Errorf("keyless DELETE of A's session: %d, want 404", st)
	}
	if got := post(t, url, toolsListBody, with(a, "")); got.status != 200 {
		t.Errorf("keyless tools/list on A's session: %d %s, want 200", got.status, got.body)
	}
	if got := post(t, url, toolsCallBody(3, "get_pet", `{"petId":"p1"}`), with(a, "key-a")); got.status != 200 || strings.Contains(got.body, `"isError":true`) {
		t.Errorf("A on its own session after B: %d %s", got.status, got.body)
	}

	// Opened without a key: the first key to call a tool owns it.
	open := post(t, url, initializeBody, nil).header.Get("Mcp-Session-Id")
	if got := post(t, url, toolsListBody, with(open, "key-b")); got.status != 200 {
		t.Errorf("key B listing on an unclaimed session: %d", got.status)
	}
	if got := post(t, url, toolsCallBody(4, "get_pet", `{"petId":"p1"}`), with(open, "key-a")); got.status != 200 {
		t.Errorf("key A claiming by a call: %d %s", got.status, got.body)
	}
	if got := post(t, url, toolsCallBody(5, "get_pet", `{"petId":"p1"}`), with(open, "key-b")); got.status != 404 || got.body != fmt.Sprintf(unknown, "5") {
		t.Errorf("key B after A claimed: %d %s", got.status, got.body)
	}
	if st := del(open, "key-a"); st != 204 {
		t.Errorf("A DELETE of its claimed session: %d, want 204", st)
	}
	if st := del(a, "key-a"); st != 204 {
		t.Errorf("A DELETE of its session: %d, want 204", st)
	}
}

// TestSessionCaps: live sessions are capped per client address (429) and
// in total (503), a DELETE frees a place; GET streams are capped per
// session (429); legacy SSE streams per address (429). Each answer names
// the cap.
func TestSessionCaps(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	tools := loadTools(t, "testdata/c23.yaml", up.URL)
	srv := serve(t, Options{Tools: tools, Sessions: session.NewMemoryStore(nil), MaxSessions: 4, MaxSessionsPerAddress: 2, MaxStreamsPerSession: 1,
		TrustedProxies: []string{"127.0.0.1/32"}, LegacySSEPath: "/sse", MaxLegacyStreamsPerAddress: 1})
	url := srv.URL + "/mcp"
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	var ids []string
	for i := range 2 {
		got := post(t, url, initializeBody, from("203.0.113.1"))
		if got.status != 200 {
			t.Fatalf("initialize %d: %d %s", i, got.status, got.body)
		}
		ids = append(ids, got.header.Get("Mcp-Session-Id"))
	}
	got := post(t, url, initializeBody, from("203.0.113.1"))
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31429,"message":"too many live sessions from this address (2): end one with DELETE, or let one go unused for 30m0s"}}`; got.status != 429 || got.body != want || got.header.Get("Retry-After") != "1800" {
		t.Errorf("third session from one address: %d %q %s\nwant 429 %s", got.status, got.header.Get("Retry-After"), got.body, want)
	}
	// IPv6 addresses of one /64 are one address.
	for i, addr := range []string{"2001:db8:1:2::a", "2001:db8:1:2::b", "2001:db8:1:2:ffff::1"} {
		want := 200
		if i == 2 {
			want = 429
		}
		if got := post(t, url, initializeBody, from(addr)); got.status != want {
			t.Errorf("session %d from the /64: %d, want %d", i, got.status, want)
		}
	}
	got = post(t, url, initializeBody, from("198.51.100.7"))
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31503,"message":"this server holds its most live sessions (4); retry in 60 seconds"}}`; got.status != 503 || got.body != want {
		t.Errorf("fifth session: %d %s\nwant 503 %s", got.status, got.body, want)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	req.Header.Set("X-Forwarded-For", "203.0.113.1")
	if got := do(t, req); got.status != 204 {
		t.Fatalf("DELETE: %d", got.status)
	}
	if got := post(t, url, initializeBody, from("203.0.113.1")); got.status != 200 {
		t.Errorf("a session after a DELETE: %d %s", got.status, got.body)
	}

	// One GET stream per session.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Mcp-Session-Id", ids[1])
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := stream()
	defer first.Body.Close()
	second := stream()
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-31429,"message":"this session has its most open streams (1); close one first"}}`; first.StatusCode != 200 || second.StatusCode != 429 || string(body) != want {
		t.Errorf("streams: first %d, second %d %s\nwant 200, 429 %s", first.StatusCode, second.StatusCode, body, want)
	}

	// One legacy SSE stream per address.
	legacy := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Forwarded-For", "192.0.2.9")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	l1 := legacy()
	defer l1.Body.Close()
	l2 := legacy()
	body, _ = io.ReadAll(l2.Body)
	l2.Body.Close()
	if l1.StatusCode != 200 || l2.StatusCode != 429 || string(body) != "too many open streams from this address (1); close one first\n" {
		t.Errorf("legacy streams: %d, %d %q", l1.StatusCode, l2.StatusCode, body)
	}
}

// TestFailedInitializeOpensNoSession: an initialize the go-sdk could not
// read (params missing, not an object, protocolVersion missing or not a
// string, capabilities or clientInfo not objects) is refused with 400
// -32602 naming the member, echoing the request's id, with no
// Mcp-Session-Id and no session kept; a good one still opens a session.
func TestFailedInitializeOpensNoSession(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(up.Close)
	store := &countingStore{MemoryStore: session.NewMemoryStore(nil)}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Sessions: store})
	refused := func(id, msg string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":` + quoteJSON(msg) + `}}`
	}
	for _, c := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			refused("1", `invalid params: initialize params.protocolVersion must be a string such as "2025-06-18", got 5`)},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize"}`,
			refused(`"a"`, `invalid params: initialize needs params {"protocolVersion": "<revision>", "capabilities": {}, "clientInfo": {"name": …, "version": …}}`)},
		{`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			refused("2", `invalid params: initialize params.protocolVersion is missing: send the MCP revision the client speaks, e.g. "2025-06-18"`)},
		{`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"t","version":"1"}}}`,
			refused("3", `invalid params: initialize params.capabilities must be an object, got []`)},
		{`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":"t"}}`,
			refused("4", `invalid params: initialize params.clientInfo must be an object, got "t"`)},
	} {
		r := post(t, srv.URL+"/mcp", c.body, nil)
		if r.status != http.StatusBadRequest || r.body != c.want || r.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s:\ngot  %d %s (session %q)\nwant 400 %s, no session", c.body, r.status, r.body, r.header.Get("Mcp-Session-Id"), c.want)
		}
	}
	if n := store.live.Load(); n != 0 {
		t.Errorf("%d sessions kept after refused initializes, want 0", n)
	}
	r := post(t, srv.URL+"/mcp", initializeBody, nil)
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" || store.live.Load() != 1 {
		t.Errorf("a good initialize: %d, session %q, %d kept; want 200 and one session", r.status, r.header.Get("Mcp-Session-Id"), store.live.Load())
	}
}

// countingStore is a MemoryStore that counts the sessions created and not
// deleted.
type countingStore struct {
	*session.MemoryStore
	live atomic.Int64
}

func (s *countingStore) Create(ctx context.Context, id, owner string, idle time.Duration) error {
	s.live.Add(1)
	return s.MemoryStore.Create(ctx, id, owner, idle)
}

func (s *countingStore) Delete(ctx context.Context, id string) error {
	s.live.Add(-1)
	return s.MemoryStore.Delete(ctx, id)
}

// TestSessionIdleExpiry: a session unused for SessionIdleTimeout is gone
// (404, as an unknown one), and its place under the per-address cap is
// free again; one in use stays. On synctest's clock: the 30 minutes pass
// at once, and the server is driven in-process, without a socket.
func TestSessionIdleExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Options{Tools: loadTools(t, "testdata/c23.yaml", "http://127.0.0.1:9"), Sessions: session.NewMemoryStore(nil),
			SessionIdleTimeout: 30 * time.Minute, MaxSessionsPerAddress: 1, MaxSessions: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close(context.Background()) }()
		rpc := func(body, sid string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if sid != "" {
				req.Header.Set("Mcp-Session-Id", sid)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			return rec
		}
		const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		sid := rpc(initializeBody, "").Header().Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatal("no session")
		}
		if got := rpc(initializeBody, ""); got.Code != 429 {
			t.Fatalf("a second session from the address: %d, want 429", got.Code)
		}
		time.Sleep(29 * time.Minute)
		if got := rpc(list, sid); got.Code != 200 {
			t.Fatalf("after 29 idle minutes: %d %s", got.Code, got.Body)
		}
		time.Sleep(29 * time.Minute) // 58 minutes old, 29 idle: still alive
		if got := rpc(list, sid); got.Code != 200 {
			t.Fatalf("used 29 minutes ago: %d %s", got.Code, got.Body)
		}
		time.Sleep(30*time.Minute + time.Second)
		got := rpc(list, sid)
		if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"` + msgUnknownSession + `"}}`; got.Code != 404 || strings.TrimSpace(got.Body.String()) != want {
			t.Fatalf("idle past 30 minutes: %d %s\nwant 404 %s", got.Code, got.Body, want)
		}
		if got := rpc(initializeBody, ""); got.Code != 200 || got.Header().Get("Mcp-Session-Id") == "" {
			t.Fatalf("a new session once the old one expired: %d %s", got.Code, got.Body)
		}
	})
}
