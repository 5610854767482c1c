package adapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// fakeMeter answers AdmitCall from a function and counts calls, refunds and
// events.
type fakeMeter struct {
	calls   atomic.Int64
	refunds atomic.Int64
	admit   func(c metering.Call) (metering.Decision, error)
	mu      chan string // optional: receives every keyID

	evMu   sync.Mutex
	events []metering.Event
}

func (m *fakeMeter) AdmitCall(_ context.Context, c metering.Call) (metering.Decision, error) {
	m.calls.Add(1)
	if m.mu != nil {
		m.mu <- c.KeyID
	}
	return m.admit(c)
}

func (m *fakeMeter) Refund(context.Context, metering.Call, metering.Decision) error {
	m.refunds.Add(1)
	return nil
}

func (m *fakeMeter) RecordEvent(_ context.Context, e metering.Event) error {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.events = append(m.events, e)
	return nil
}

// Report answers a month period whose Used is the number of AdmitCalls.
func (m *fakeMeter) Report(_ context.Context, keyID string, plan *metering.Plan) (metering.Report, error) {
	name := ""
	if plan != nil {
		name = plan.Name
	}
	month := time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)
	return metering.Report{KeyID: keyID, Plan: name, Time: month, RateLimits: []metering.RateUsage{},
		Periods: []metering.PeriodUsage{{Period: metering.PeriodMonth, Name: "202611", Start: month, Reset: month.AddDate(0, 1, 0),
			Used: m.calls.Load(), Limit: -1, Remaining: -1}}}, nil
}

// settledEvents waits, with s.Close, for the refunds and usage events s
// writes after its responses, and returns the events, which must be
// exactly n.
func (m *fakeMeter) settledEvents(t testing.TB, s *Server, n int) []metering.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ev := m.takeEvents()
	if len(ev) != n {
		t.Fatalf("%d usage events, want %d: %+v", len(ev), n, ev)
	}
	return ev
}

// awaitEvents waits, up to 5 s, until n usage events have been recorded.
// Events are recorded after the response is written, so a test that asserts
// their order waits for each call's event before it makes the next call.
func (m *fakeMeter) awaitEvents(t testing.TB, n int) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, fmt.Sprintf("%d usage events", n), func() bool {
		m.evMu.Lock()
		defer m.evMu.Unlock()
		return len(m.events) >= n
	})
}

func (m *fakeMeter) takeEvents() []metering.Event {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	e := m.events
	m.events = nil
	return e
}

func allowAll(int64) *fakeMeter {
	return &fakeMeter{admit: func(metering.Call) (metering.Decision, error) {
		return metering.Decision{Allowed: true, Limit: 100, Remaining: 99, Reset: 1500 * time.Millisecond}, nil
	}}
}

// handTools are tools built by hand, enough for HTTP-level tests: their
// NewRequest is never relied on for a particular outcome.
func handTools() []*openapi.Tool {
	return []*openapi.Tool{{
		Name:        "get_pet",
		Method:      "GET",
		Description: "Get a pet",
		InputSchema: []byte(`{"type":"object","properties":{"petId":{"type":"string"}},"required":["petId"]}`),
		ReadOnly:    true,
	}}
}

func TestHealthAndReady(t *testing.T) {
	var notReady atomic.Bool
	notReady.Store(true)
	srv := serve(t, Options{Tools: handTools(), Ready: func(context.Context) error {
		if notReady.Load() {
			return errors.New("redis at 10.0.0.7:6379 unreachable")
		}
		return nil
	}})
	get := func(path string) rpcResponse {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		return do(t, req)
	}
	tests := []struct {
		name, path string
		ready      bool
		status     int
		body       string
	}{
		{"health", "/health", false, 200, `{"status":"ok"}`},
		{"ready while not ready", "/ready", false, 503, `{"status":"unavailable"}`},
		{"ready", "/ready", true, 200, `{"status":"ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notReady.Store(!tt.ready)
			got := get(tt.path)
			if got.status != tt.status || got.body != tt.body {
				t.Errorf("GET %s = %d %s, want %d %s", tt.path, got.status, got.body, tt.status, tt.body)
			}
		})
	}
}

var rateLimitHeaders = []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

func rateHeaders(h http.Header) map[string]string {
	m := map[string]string{}
	for _, k := range rateLimitHeaders {
		if v := h.Get(k); v != "" {
			m[k] = v
		}
	}
	return m
}

func TestMethodsWithoutKeyAreNotMetered(t *testing.T) {
	meter := allowAll(0)
	srv := serve(t, Options{Tools: handTools(), Meter: meter})
	for _, body := range []string{initializeBody, toolsListBody, pingBody} {
		got := post(t, srv.URL+"/mcp", body, nil)
		if got.status != 200 {
			t.Fatalf("POST %s = %d %s, want 200", body, got.status, got.body)
		}
		if m := decodeRPC(t, got.body); m["result"] == nil {
			t.Errorf("POST %s: no result in %s", body, got.body)
		}
		if h := rateHeaders(got.header); len(h) != 0 {
			t.Errorf("POST %s: rate-limit headers %v on a method that is not tools/call", body, h)
		}
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("meter called %d times, want 0", n)
	}
}

func TestInitializeAdvertisesToolsOnly(t *testing.T) {
	srv := serve(t, Options{Tools: handTools(), Name: "petstore", Version: "1.2.3", Instructions: "Use get_pet."})
	got := post(t, srv.URL+"/mcp", initializeBody, nil)
	res := decodeRPC(t, got.body)["result"].(map[string]any)
	want := map[string]any{
		"capabilities":    map[string]any{"tools": map[string]any{}},
		"instructions":    "Use get_pet.",
		"protocolVersion": "2025-11-25",
		"serverInfo":      map[string]any{"name": "petstore", "version": "1.2.3"},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("initialize result (-want +got):\n%s", diff)
	}
}

func TestToolsCallWithoutKey(t *testing.T) {
	meter := allowAll(0)
	srv := serve(t, Options{Tools: handTools(), Meter: meter})
	got := post(t, srv.URL+"/mcp", toolsCallBody(7, "get_pet", `{"petId":"p1"}`), nil)
	if got.status != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", got.status)
	}
	if g, w := got.header.Get("WWW-Authenticate"), `ApiKey realm="restmcp", Bearer realm="restmcp"`; g != w {
		t.Errorf("WWW-Authenticate = %q, want %q", g, w)
	}
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-31401,"message":"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	if got.body != want {
		t.Errorf("body =\n%s\nwant\n%s", got.body, want)
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("meter called %d times, want 0", n)
	}
}

func TestHTTPContract(t *testing.T) {
	srv := serve(t, Options{Tools: handTools(), MaxBodyBytes: 1024, AllowedOrigins: []string{"https://app.example.com"}})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	tests := []struct {
		name       string
		method     string
		body       string
		header     map[string]string
		wantStatus int
		wantBody   string // exact unless empty
		wantHeader map[string]string
	}{
		{name: "body over the limit", method: "POST", body: big, wantStatus: 413,
			wantBody: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request body exceeds 1024 bytes"}}`},
		{name: "batch", method: "POST", body: `[` + pingBody + `]`, wantStatus: 400,
			wantBody: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported: send one JSON-RPC message per POST"}}`},
		{name: "not JSON", method: "POST", body: `{"jsonrpc":`, wantStatus: 400,
			wantBody: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body must be one JSON-RPC message (UTF-8 JSON)"}}`},
		{name: "origin not allowed", method: "POST", body: pingBody, header: map[string]string{"Origin": "https://evil.example"}, wantStatus: 403,
			wantBody: `{"error":"origin not allowed: https://evil.example"}`},
		{name: "origin allowed", method: "POST", body: pingBody, header: map[string]string{"Origin": "https://APP.example.com:443"}, wantStatus: 200,
			wantBody: `{"jsonrpc":"2.0","id":3,"result":{}}`, wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://APP.example.com:443"}},
		{name: "notification", method: "POST", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantStatus: 202},
		{name: "JSON-RPC response", method: "POST", body: `{"jsonrpc":"2.0","id":"s-1","result":{}}`, wantStatus: 202},
		{name: "GET", method: "GET", header: map[string]string{"Accept": "text/event-stream"}, wantStatus: 405, wantHeader: map[string]string{"Allow": "POST"}},
		{name: "DELETE", method: "DELETE", wantStatus: 405, wantHeader: map[string]string{"Allow": "POST"}},
		{name: "Accept JSON only", method: "POST", body: pingBody, header: map[string]string{"Accept": "application/json"}, wantStatus: 200,
			wantBody: `{"jsonrpc":"2.0","id":3,"result":{}}`, wantHeader: map[string]string{"Content-Type": "application/json"}},
		{name: "Accept SSE only", method: "POST", body: pingBody, header: map[string]string{"Accept": "text/event-stream"}, wantStatus: 200,
			wantHeader: map[string]string{"Content-Type": "text/event-stream"}},
		{name: "Accept HTML only", method: "POST", body: pingBody, header: map[string]string{"Accept": "text/html"}, wantStatus: 406,
			wantBody: `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Accept must allow application/json or text/event-stream"}}`},
		{name: "unsupported protocol version", method: "POST", body: pingBody, header: map[string]string{"MCP-Protocol-Version": "1999-01-01"}, wantStatus: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got rpcResponse
			if tt.method == "POST" {
				got = post(t, srv.URL+"/mcp", tt.body, tt.header)
			} else {
				req, _ := http.NewRequest(tt.method, srv.URL+"/mcp", nil)
				for k, v := range tt.header {
					req.Header.Set(k, v)
				}
				got = do(t, req)
			}
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d (%s), want %d", got.status, got.body, tt.wantStatus)
			}
			if tt.wantStatus == 202 && got.body != "" {
				t.Errorf("202 body = %q, want empty", got.body)
			}
			if tt.wantBody != "" && strings.TrimSpace(got.body) != tt.wantBody {
				t.Errorf("body =\n%s\nwant\n%s", got.body, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if g := got.header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
		})
	}
}

func TestAcceptEventStreamOnly(t *testing.T) {
	srv := serve(t, Options{Tools: handTools()})
	got := post(t, srv.URL+"/mcp", pingBody, map[string]string{"Accept": "text/event-stream"})
	// One message event carrying the response.
	var data []string
	event := ""
	for _, line := range strings.Split(got.body, "\n") {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, v)
		}
	}
	if event != "message" || len(data) != 1 || data[0] != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("SSE body = %q, want one message event with the ping result", got.body)
	}
}

func TestMetering(t *testing.T) {
	var allow atomic.Bool
	keys := make(chan string, 10)
	meter := &fakeMeter{mu: keys, admit: func(metering.Call) (metering.Decision, error) {
		if allow.Load() {
			return metering.Decision{Allowed: true, Limit: 100, Remaining: 41, Reset: 1500 * time.Millisecond}, nil
		}
		return metering.Decision{Allowed: false, Limit: 100, Remaining: 0, Reset: 30 * time.Second, RetryAfter: 2100 * time.Millisecond}, nil
	}}
	srv := serve(t, Options{Tools: handTools(), Meter: meter})
	key := map[string]string{"X-API-Key": "k-123"}

	t.Run("allowed", func(t *testing.T) {
		allow.Store(true)
		got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"p1"}`), key)
		if got.status != 200 {
			t.Fatalf("status = %d %s, want 200", got.status, got.body)
		}
		want := map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "41", "RateLimit-Reset": "2",
			"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "41", "X-RateLimit-Reset": "2"}
		if diff := cmp.Diff(want, rateHeaders(got.header)); diff != "" {
			t.Errorf("rate-limit headers (-want +got):\n%s", diff)
		}
		if k := <-keys; k != metering.KeyID("k-123") {
			t.Errorf("Admit keyID = %q, want %q", k, metering.KeyID("k-123"))
		}
	})
	t.Run("refused", func(t *testing.T) {
		allow.Store(false)
		got := post(t, srv.URL+"/mcp", toolsCallBody(2, "get_pet", `{"petId":"p1"}`), key)
		<-keys
		if got.status != 429 {
			t.Fatalf("status = %d %s, want 429", got.status, got.body)
		}
		if g := got.header.Get("Retry-After"); g != "3" {
			t.Errorf("Retry-After = %q, want 3", g)
		}
		want := map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "30",
			"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"}
		if diff := cmp.Diff(want, rateHeaders(got.header)); diff != "" {
			t.Errorf("rate-limit headers (-want +got):\n%s", diff)
		}
		wantBody := `{"jsonrpc":"2.0","id":2,"error":{"code":-31429,"message":"rate limit exceeded: 100 calls per window; retry after 3 seconds"}}`
		if got.body != wantBody {
			t.Errorf("body = %s, want %s", got.body, wantBody)
		}
	})
	t.Run("tools/list has no rate-limit headers", func(t *testing.T) {
		got := post(t, srv.URL+"/mcp", toolsListBody, key)
		if h := rateHeaders(got.header); got.status != 200 || len(h) != 0 {
			t.Errorf("tools/list = %d with rate-limit headers %v, want 200 and none", got.status, h)
		}
	})
	t.Run("unknown tool is not metered", func(t *testing.T) {
		before := meter.calls.Load()
		got := post(t, srv.URL+"/mcp", toolsCallBody(3, "no_such_tool", `{}`), key)
		m := decodeRPC(t, got.body)
		errObj, _ := m["error"].(map[string]any)
		if got.status != 200 || errObj == nil || errObj["code"] != float64(-32602) {
			t.Errorf("unknown tool = %d %s, want a JSON-RPC error -32602", got.status, got.body)
		}
		if n := meter.calls.Load() - before; n != 0 {
			t.Errorf("meter called %d times for an unknown tool, want 0", n)
		}
	})
}

func TestMeterError(t *testing.T) {
	meter := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) {
		return metering.Decision{}, errors.New("dial tcp 10.0.0.7:6379: connection refused")
	}}
	logs := &logBuffer{}
	srv := serve(t, Options{Tools: handTools(), Meter: meter, Logger: newLogger(logs)})
	got := post(t, srv.URL+"/mcp", toolsCallBody(4, "get_pet", `{"petId":"p1"}`), map[string]string{"Authorization": "Bearer k-123"})
	if got.status != 503 {
		t.Fatalf("status = %d %s, want 503", got.status, got.body)
	}
	if g := got.header.Get("Retry-After"); g != "5" {
		t.Errorf("Retry-After = %q, want 5", g)
	}
	want := `{"jsonrpc":"2.0","id":4,"error":{"code":-31503,"message":"usage metering is temporarily unavailable; retry in 5 seconds"}}`
	if got.body != want {
		t.Errorf("body = %s, want %s", got.body, want)
	}
	if strings.Contains(logs.String(), "k-123") {
		t.Errorf("logs contain the key:\n%s", logs.String())
	}
}

func TestMiddlewarePanicKeepsServing(t *testing.T) {
	meter := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) { panic("meter bug") }}
	srv := serve(t, Options{Tools: handTools(), Meter: meter})
	got := post(t, srv.URL+"/mcp", toolsCallBody(5, "get_pet", `{"petId":"p1"}`), map[string]string{"X-API-Key": "k-123"})
	want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"internal error"}}`
	if got.status != 500 || got.body != want {
		t.Errorf("panicking meter: %d %s, want 500 %s", got.status, got.body, want)
	}
	if got := post(t, srv.URL+"/mcp", pingBody, nil); got.status != 200 {
		t.Errorf("after the panic: ping = %d %s, want 200", got.status, got.body)
	}
}

func TestNewErrors(t *testing.T) {
	_, err := New(Options{
		MCPPath:        "mcp",
		AllowedOrigins: []string{"not an origin"},
		Tools: []*openapi.Tool{
			{Name: "a", InputSchema: []byte(`{"type":"object","properties":{}}`)},
			{Name: "a", InputSchema: []byte(`{"type":"object","properties":{}}`)},
			{Name: "b", InputSchema: []byte(`{"type":"array"}`)},
			{Name: "c"},
			nil,
			{Name: "d", InputSchema: []byte(`{"type":"object",}`)},
			{Name: "e", InputSchema: []byte(`{"type":"object"}`), OutputSchema: []byte(`{"type":`)},
		},
	})
	if err == nil {
		t.Fatal("New succeeded, want an error")
	}
	want := []string{
		`MCPPath "mcp" must start with /`,
		`AllowedOrigins: "not an origin" is not scheme://host[:port]`,
		`Tools[1]: duplicate tool name "a"`,
		`Tools[2] "b": input schema must have type "object" (got array)`,
		`Tools[3] "c": missing input schema`,
		`Tools[4] is nil`,
		`Tools[5] "d": input schema: invalid character '}' looking for beginning of object key string`,
		`Tools[6] "e": output schema is not valid JSON`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("New error lines (-want +got):\n%s", diff)
	}
}

func TestAcceptMode(t *testing.T) {
	tests := []struct {
		accept        []string
		wantJSON, sse bool
	}{
		{nil, true, true},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"text/event-stream"}, false, true},
		{[]string{"*/*"}, true, true},
		{[]string{"text/html"}, false, false},
		{[]string{"application/json;q=0, text/event-stream"}, false, true},
		{[]string{"application/json; q=0.5"}, true, false},
		{[]string{"text/html", "application/json"}, true, false},
	}
	for _, tt := range tests {
		j, s := acceptMode(tt.accept)
		if j != tt.wantJSON || s != tt.sse {
			t.Errorf("acceptMode(%q) = %v, %v, want %v, %v", tt.accept, j, s, tt.wantJSON, tt.sse)
		}
	}
}

func TestToolsCallNotificationIsGated(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL)})
	got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_pet","arguments":{"petId":"p1"}}}`, nil)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: tools/call needs an id (a notification cannot call a tool)"}}`
	if got.status != 400 || got.body != want {
		t.Errorf("tools/call without id and key = %d %s, want 400 %s", got.status, got.body, want)
	}
	if n := len(up.take()); n != 0 {
		t.Errorf("%d upstream requests, want 0", n)
	}
}

func TestAnonymousCallsAreMeteredTogether(t *testing.T) {
	keys := make(chan string, 1)
	meter := &fakeMeter{mu: keys, admit: func(metering.Call) (metering.Decision, error) {
		return metering.Decision{Allowed: true, Limit: 10, Remaining: 9, Reset: time.Second}, nil
	}}
	srv := serve(t, Options{Tools: handTools(), Meter: meter, AllowAnonymous: true})
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"p1"}`), nil)
	if got.status != 200 || got.header.Get("RateLimit-Limit") != "10" {
		t.Errorf("anonymous tools/call = %d, RateLimit-Limit %q; want 200, 10", got.status, got.header.Get("RateLimit-Limit"))
	}
	if k := <-keys; k != AnonymousKeyID {
		t.Errorf("Admit keyID = %q, want %q", k, AnonymousKeyID)
	}
}

// TestOriginDefaultLoopback covers the rule with no AllowedOrigins: an Origin
// passes only when it and the request's Host are both loopback.
func TestOriginDefaultLoopback(t *testing.T) {
	srv := serve(t, Options{Tools: handTools()})
	tests := []struct {
		name       string
		origin     string
		host       string // "" keeps the listener's loopback address
		wantStatus int
	}{
		{name: "no Origin", wantStatus: 200},
		{name: "loopback origin, loopback host", origin: "http://localhost:6274", wantStatus: 200},
		{name: "127.0.0.1 origin", origin: "http://127.0.0.1:3000", wantStatus: 200},
		{name: "IPv6 loopback origin", origin: "http://[::1]:3000", wantStatus: 200},
		{name: "public origin", origin: "https://evil.example", wantStatus: 403},
		{name: "loopback origin, public host (DNS rebinding)", origin: "http://localhost:6274", host: "mcp.example.com", wantStatus: 403},
		{name: "not an origin", origin: "null", wantStatus: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(pingBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			got := do(t, req)
			if got.status != tt.wantStatus {
				t.Errorf("Origin %q Host %q: status = %d (%s), want %d", tt.origin, tt.host, got.status, got.body, tt.wantStatus)
			}
		})
	}
}

// TestSetHeadersCanonical: setHeaders stores exactly what http.Header.Set
// would, for the keys restmcp uses with it.
func TestSetHeadersCanonical(t *testing.T) {
	kv := []string{"Ratelimit-Limit", "1", "Ratelimit-Remaining", "2", "Ratelimit-Reset", "3", "X-Ratelimit-Limit", "4",
		"X-Ratelimit-Remaining", "5", "X-Ratelimit-Reset", "6", "Ratelimit-Policy", "7", "Cache-Control", "8", "Content-Type", "9", "Connection", "10"}
	got, want := http.Header{}, http.Header{}
	setHeaders(got, kv...)
	for i := 0; i < len(kv); i += 2 {
		want.Set(kv[i], kv[i+1])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("setHeaders (-Header.Set +got):\n%s", diff)
	}
	got.Add("Ratelimit-Limit", "again") // must not write into another header's value
	if got.Get("Ratelimit-Remaining") != "2" {
		t.Errorf("Add wrote into a shared value: %v", got)
	}
}
