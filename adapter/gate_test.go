package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// TestTransportRefusalsBeforeAdmission: a tools/call the MCP transport would
// refuse is refused by the gate before the Meter sees it, so only calls that
// will run are counted.
func TestTransportRefusalsBeforeAdmission(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	modernHeaders := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_quote"}
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		want    string
	}{
		{"Content-Type text/plain", call, map[string]string{"Content-Type": "text/plain"}, 415,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Content-Type must be application/json"}}`},
		{"no Content-Type", call, map[string]string{"Content-Type": ""}, 415,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Content-Type must be application/json"}}`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"get_quote"}}`, nil, 400,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\", got \"1.0\""}}`},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call","params":{"name":"get_quote"}}`, nil, 400,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or an integer, got {\"x\":1}"}}`},
		{"bogus MCP-Protocol-Version", call, map[string]string{"MCP-Protocol-Version": "banana"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"unsupported MCP-Protocol-Version \"banana\"; supported: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"}}`},
		{"Last-Event-ID", call, map[string]string{"Last-Event-ID": "1"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Last-Event-ID is not allowed on a POST"}}`},
		{"2026-07-28 without Mcp-Method", modern, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "get_quote"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Method header \"\" does not match the body's method \"tools/call\""}}`},
		{"2026-07-28 Mcp-Method mismatch", modern, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping", "Mcp-Name": "get_quote"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Method header \"ping\" does not match the body's method \"tools/call\""}}`},
		{"2026-07-28 Mcp-Name mismatch", modern, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "admin_stats"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Name header \"admin_stats\" does not match the body's params.name \"get_quote\""}}`},
		{"2026-07-28 without _meta", call, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_quote"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"missing or invalid _meta field \"io.modelcontextprotocol/protocolVersion\""}}`},
		{"2026-07-28 without client capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"missing or invalid _meta field \"io.modelcontextprotocol/clientCapabilities\""}}`},
		{"2026-07-28 client info not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}}}`, modernHeaders, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid _meta field \"io.modelcontextprotocol/clientInfo\""}}`},
		{"_meta without header", modern, nil, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Protocol-Version header is required for requests carrying \"io.modelcontextprotocol/protocolVersion\""}}`},
		{"_meta and header differ", modern, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Protocol-Version header \"2025-11-25\" does not match _meta \"2026-07-28\""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"X-API-Key": "k-free"}
			for k, v := range tt.headers {
				h[k] = v
			}
			got := post(t, srv.URL+"/mcp", tt.body, h)
			if got.status != tt.status || got.body != tt.want {
				t.Errorf("= %d %s\nwant %d %s", got.status, got.body, tt.status, tt.want)
			}
		})
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("Meter.AdmitCall ran %d times, want 0", n)
	}
	if p := up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing", p)
	}

	// A well-formed 2026-07-28 call, with a base64 Mcp-Name, is admitted once
	// and runs.
	got := post(t, srv.URL+"/mcp", modern, map[string]string{"X-API-Key": "k-free", "MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Z2V0X3F1b3Rl?="})
	if got.status != 200 || meter.calls.Load() != 1 {
		t.Errorf("2026-07-28 call with base64 Mcp-Name = %d %s, %d admissions; want 200, 1", got.status, got.body, meter.calls.Load())
	}
	if diff := cmp.Diff([]string{"/quotes/AAPL"}, up.take()); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
}

// TestAdmittedButNotRunIsRefunded: when the MCP handler refuses a call after
// the gate admitted it (here a handler that answers 400 without
// dispatching), the admission is refunded and recorded as not_run with cost
// 0, whatever the counting policy.
func TestAdmittedButNotRunIsRefunded(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	s, err := New(Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter, DisableFastPath: true})
	if err != nil {
		t.Fatal(err)
	}
	s.jsonHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "refused by the transport", http.StatusBadRequest)
	})
	srv := serveHandler(t, s)
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": "k-free"})
	if got.status != 400 {
		t.Fatalf("= %d %s, want 400", got.status, got.body)
	}
	ev := meter.settledEvents(t, s, 1)
	want := metering.Event{KeyID: metering.KeyID("k-free"), Plan: "free", Tool: "get_quote", Outcome: metering.OutcomeNotRun}
	ev[0].Latency, ev[0].Time = 0, want.Time
	if diff := cmp.Diff(want, ev[0]); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	if a, r := meter.calls.Load(), meter.refunds.Load(); a != 1 || r != 1 {
		t.Errorf("admissions %d, refunds %d; want 1, 1", a, r)
	}
}

// TestUnsafeKeysRefused: a key with characters no API key has (they could
// split the upstream header, cookie or query it is put in) gets 401 with a
// text that says so, and nothing is metered or sent.
func TestUnsafeKeysRefused(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Meter: meter})
	body := toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`)
	msg := func(what string) string {
		return `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"invalid API key: it contains ` + what + `, which no API key has; send the key exactly as issued, in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	}
	tests := []struct {
		name, query string
		headers     map[string]string
		want        string
	}{
		{"semicolon in header", "", map[string]string{"X-API-Key": "abc; admin=1"}, msg(`the character ';'`)},
		{"space in query", "?api_key=abc%20def", nil, msg(`the character ' '`)},
		{"semicolon alone", "", map[string]string{"X-API-Key": "abc;admin=1"}, msg(`the character ';'`)},
		{"CR LF in query", "?api_key=abc%0D%0AX-Admin:%201", nil, msg(`a control character (byte 0x0d)`)},
		{"comma in bearer", "", map[string]string{"Authorization": "Bearer abc,def"}, msg(`the character ','`)},
		{"non-ASCII", "?api_key=cl%C3%A9", nil, msg(`a non-ASCII character`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := post(t, srv.URL+"/mcp"+tt.query, body, tt.headers)
			if got.status != 401 || got.body != tt.want {
				t.Errorf("= %d %s\nwant 401 %s", got.status, got.body, tt.want)
			}
		})
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("Meter.AdmitCall ran %d times, want 0", n)
	}
	if p := up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing", p)
	}
}

// TestClientHangUpCancelsUpstream: when the client closes its request while
// the upstream call is in flight, the upstream request is cancelled, not
// held for the whole upstream timeout: on the fast path, whose handler
// context is the request's, and through the go-sdk's handler, whose
// context is not.
func TestClientHangUpCancelsUpstream(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast path", true: "go-sdk"}[sdk], func(t *testing.T) { testClientHangUp(t, sdk) })
	}
}

func testClientHangUp(t *testing.T, sdk bool) {
	received, cancelled := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(received)
		<-r.Context().Done()
		close(cancelled)
	}))
	t.Cleanup(up.Close)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), UpstreamTimeout: time.Minute, DisableFastPath: sdk})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", strings.NewReader(toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", "k-1")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-received
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client request: %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was still open 10 s after the client hung up")
	}
}

// TestCredentialRedactedByValue: a key placed in a query parameter of any
// name never comes back in a tool result: not in an upstream error body that
// echoes the request, not in a refused redirect's Location, not in a
// transport failure's URL.
func TestCredentialRedactedByValue(t *testing.T) {
	const key = "sk_live_9f8e7d6c5b4a"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/echo":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"bad appid `+r.URL.Query().Get("appid")+`","request":"`+r.URL.RequestURI()+`"}`)
		case "/v1/move":
			w.Header().Set("Location", "https://elsewhere.example/v1/echo?"+r.URL.RawQuery)
			w.WriteHeader(http.StatusFound)
		}
	}))
	t.Cleanup(up.Close)
	spec := func(server string) []*openapi.Tool {
		d, err := openapi.LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: redact, version: "1"}
servers: [{url: "`+server+`/v1"}]
components:
  securitySchemes:
    appid: {type: apiKey, in: query, name: appid}
security: [{appid: []}]
paths:
  /echo:
    get: {operationId: echo, responses: {"200": {description: OK}}}
  /move:
    get: {operationId: move, responses: {"200": {description: OK}}}
`), "", openapi.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Tools
	}
	srv := serve(t, Options{Tools: spec(up.URL)})
	down := serve(t, Options{Tools: spec("http://127.0.0.1:1")})
	tests := []struct {
		name, url, tool, want string
	}{
		{"error body", srv.URL, "echo", `HTTP 401 Unauthorized\n{\"error\":\"bad appid REDACTED\",\"request\":\"/v1/echo?appid=REDACTED\"}`},
		{"redirect Location", srv.URL, "move", `HTTP 302 Found\nLocation: https://elsewhere.example/v1/echo?appid=REDACTED (redirect not followed: restmcp follows redirects only within the same host)`},
		{"transport failure", down.URL, "echo", `upstream request failed: connection refused (the upstream API is not reachable): Get \"http://127.0.0.1:1/v1/echo?appid=REDACTED\": dial tcp 127.0.0.1:1: connect: connection refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := post(t, tt.url+"/mcp", toolsCallBody(1, tt.tool, `{}`), map[string]string{"X-API-Key": key})
			want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + tt.want + `"}],"isError":true}}`
			if got.body != want {
				t.Errorf("= %s\nwant %s", got.body, want)
			}
		})
	}
}

// TestLogFieldsTruncated: access-log fields taken from the request (the
// JSON-RPC method, the tool name, the query) are cut to 256 bytes.
func TestLogFieldsTruncated(t *testing.T) {
	logs := &logBuffer{}
	srv := serve(t, Options{Tools: handTools(), Logger: newLogger(logs), AllowAnonymous: true})
	long := strings.Repeat("a", 5000)
	post(t, srv.URL+"/mcp?x="+long, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+long+`"}}`, nil)
	post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"`+long+`"}`, nil)
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err == nil && rec["msg"] == "http request" {
			got = append(got, rec)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d access-log lines, want 2:\n%s", len(got), logs.String())
	}
	cut := strings.Repeat("a", 256) + "…"
	if got[0]["tool"] != cut || got[1]["rpc_method"] != cut {
		t.Errorf("tool %q, rpc_method %q; want both cut to 256 bytes and marked", got[0]["tool"], got[1]["rpc_method"])
	}
	if q, _ := got[0]["query"].(string); len(q) > 256+len("…") {
		t.Errorf("query logged with %d bytes, want at most 256 and the mark", len(q))
	}
}

// TestUndeclaredMethods: a request for a method restmcp does not serve, or
// of a capability it does not declare, is a JSON-RPC -32601 (HTTP 200; 404
// on the 2026-07-28 wire), never a text/plain 400 or an empty list.
func TestUndeclaredMethods(t *testing.T) {
	srv := serve(t, Options{Tools: handTools()})
	for _, method := range []string{"no/such", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list", "logging/setLevel", "completion/complete"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}`
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: \"` + method + `\""}}`
		for rev, status := range map[string]int{"": 200, "2025-11-25": 200, "2026-07-28": 404} {
			got := post(t, srv.URL+"/mcp", body, map[string]string{"MCP-Protocol-Version": rev})
			if got.status != status || got.body != want || got.header.Get("Content-Type") != "application/json" {
				t.Errorf("%s (revision %q) = %d %s %s, want %d %s", method, rev, got.status, got.header.Get("Content-Type"), got.body, status, want)
			}
		}
	}
	// Notifications still reach the SDK, which accepts them.
	if got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); got.status != 202 {
		t.Errorf("notification = %d %s, want 202", got.status, got.body)
	}
	// Event streams tell proxies not to buffer them.
	got := post(t, srv.URL+"/mcp", pingBody, map[string]string{"Accept": "text/event-stream"})
	if got.status != 200 || got.header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("SSE ping = %d, X-Accel-Buffering %q; want 200, no", got.status, got.header.Get("X-Accel-Buffering"))
	}
}

// TestAuthorizationAPIKeyKeepsScheme: an apiKey scheme in the Authorization
// header (Kubernetes declares its bearer token so) receives the value as the
// caller presented it: "Bearer T" from Authorization: Bearer T, "T" from
// x-api-key: T.
func TestAuthorizationAPIKeyKeepsScheme(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	d, err := openapi.LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: k, version: "1"}
servers: [{url: "`+up.URL+`"}]
components:
  securitySchemes:
    BearerToken: {type: apiKey, in: header, name: authorization}
security: [{BearerToken: []}]
paths:
  /pods:
    get: {operationId: listPods, responses: {"200": {description: OK}}}
`), "", openapi.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, Options{Tools: d.Tools})
	for _, tt := range []struct {
		header, value, want string
	}{
		{"Authorization", "Bearer tok-1", "Bearer tok-1"},
		{"X-API-Key", "tok-1", "tok-1"},
	} {
		post(t, srv.URL+"/mcp", toolsCallBody(1, "list_pods", `{}`), map[string]string{tt.header: tt.value})
		reqs := up.take()
		if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != tt.want {
			t.Errorf("%s: %s: upstream Authorization %q, want %q", tt.header, tt.value, reqs[0].Header.Get("Authorization"), tt.want)
		}
	}
}

// TestErrorCodes: restmcp's own refusals use codes outside JSON-RPC's
// reserved range by default (-31401, -31429, -31503), and Options.ErrorCodes
// restores the codes a deployment's clients expect.
func TestErrorCodes(t *testing.T) {
	up := newPlanUpstream(t)
	tools := loadTools(t, "testdata/plans_api.yaml", up.URL)
	refuse := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) {
		return metering.Decision{Limit: 1, RetryAfter: time.Second, RefusedBy: "per_minute", Policy: "per_minute", Window: time.Minute}, nil
	}}
	down := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) { return metering.Decision{}, errors.New("store down") }}
	body := toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`)
	code := func(t *testing.T, r rpcResponse) float64 {
		t.Helper()
		e, _ := decodeRPC(t, r.body)["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	for _, tt := range []struct {
		name  string
		codes ErrorCodes
		want  [3]float64 // 401, 429, 503
	}{
		{"defaults", ErrorCodes{}, [3]float64{-31401, -31429, -31503}},
		{"legacy", ErrorCodes{Unauthorized: -32001, RateLimited: -32029, Unavailable: -32030}, [3]float64{-32001, -32029, -32030}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noKey := serve(t, Options{Tools: tools, ErrorCodes: tt.codes})
			limited := serve(t, Options{Tools: tools, Meter: refuse, ErrorCodes: tt.codes})
			unavailable := serve(t, Options{Tools: tools, Meter: down, ErrorCodes: tt.codes})
			got := [3]float64{
				code(t, post(t, noKey.URL+"/mcp", body, nil)),
				code(t, post(t, limited.URL+"/mcp", body, map[string]string{"X-API-Key": "k-1"})),
				code(t, post(t, unavailable.URL+"/mcp", body, map[string]string{"X-API-Key": "k-1"})),
			}
			if got != tt.want {
				t.Errorf("codes for 401, 429, 503 = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHaltCallsRefunds: a call whose upstream API has not answered when a
// shutdown runs out of time is stopped by HaltCalls: its client gets an
// error result saying to retry, and its admission is refunded and
// recorded as not_run, under counting admitted too. Close waits for it.
func TestHaltCallsRefunds(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(release)
	meter := &fakeMeter{admit: allowedDecision}
	s, err := New(Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)
	got := make(chan rpcResponse, 1)
	go func() {
		got <- post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": "k-free"})
	}()
	<-arrived
	s.HaltCalls()
	r := <-got
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"restmcp is shutting down: the call to get_quote was stopped before the upstream API answered and is not billed; retry it"}],"isError":true}}`
	if r.status != 200 || r.body != want {
		t.Errorf("= %d %s\nwant 200 %s", r.status, r.body, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if a, rf := meter.calls.Load(), meter.refunds.Load(); a != 1 || rf != 1 {
		t.Errorf("admissions %d, refunds %d; want 1, 1", a, rf)
	}
	ev := meter.settledEvents(t, s, 1)
	if ev[0].Outcome != metering.OutcomeNotRun || ev[0].Cost != 0 {
		t.Errorf("event %+v, want not_run at no cost", ev[0])
	}
}

// deadlineMeter is a fakeMeter that records, for each AdmitCall, how long
// its context had left (-1: no deadline).
type deadlineMeter struct {
	*fakeMeter
	left chan time.Duration
}

func (m deadlineMeter) AdmitCall(ctx context.Context, c metering.Call) (metering.Decision, error) {
	m.left <- timeLeft(ctx)
	return m.fakeMeter.AdmitCall(ctx, c)
}

// memoryDeadlineMeter is a deadlineMeter that says it never waits.
type memoryDeadlineMeter struct{ deadlineMeter }

func (memoryDeadlineMeter) InMemory() bool { return true }

// deadlineKeys is planKeys recording what each ResolveKey's context had
// left, and saying it is in memory when inMemory.
type deadlineKeys struct {
	fakeKeys
	left     chan time.Duration
	inMemory bool
}

func (k deadlineKeys) ResolveKey(ctx context.Context, key string) (*metering.Plan, error) {
	k.left <- timeLeft(ctx)
	return k.fakeKeys.ResolveKey(ctx, key)
}

func (k deadlineKeys) InMemory() bool { return k.inMemory }

// received is what ch holds: what a call made before the answer recorded.
func received(t *testing.T, what string, ch chan time.Duration) time.Duration {
	t.Helper()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatalf("%s was not called before the answer", what)
		return 0
	}
}

func timeLeft(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return -1
}

// TestMeterDeadlines: a Meter or KeyResolver that may wait on a store is
// called under MeterTimeout; one whose InMemory reports true is called
// without a deadline of its own (the call's context has none here).
func TestMeterDeadlines(t *testing.T) {
	up := newPlanUpstream(t)
	const timeout = 7 * time.Second
	for _, tc := range []struct {
		name                        string
		meterInMemory, keysInMemory bool
	}{
		{"both may wait", false, false},
		{"meter in memory", true, false},
		{"keys in memory", false, true},
		{"both in memory", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dm := deadlineMeter{fakeMeter: &fakeMeter{admit: allowedDecision}, left: make(chan time.Duration, 1)}
			var meter Meter = dm
			if tc.meterInMemory {
				meter = memoryDeadlineMeter{dm}
			}
			keys := deadlineKeys{fakeKeys: planKeys(), left: make(chan time.Duration, 1), inMemory: tc.keysInMemory}
			srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: keys, Meter: meter, MeterTimeout: timeout})
			got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": "k-free"})
			if got.status != 200 || strings.Contains(got.body, `"isError":true`) {
				t.Fatalf("= %d %s, want 200 and a result", got.status, got.body)
			}
			for _, c := range []struct {
				what     string
				left     time.Duration
				inMemory bool
			}{{"AdmitCall", received(t, "AdmitCall", dm.left), tc.meterInMemory}, {"ResolveKey", received(t, "ResolveKey", keys.left), tc.keysInMemory}} {
				switch {
				case c.inMemory && c.left != -1:
					t.Errorf("%s: the context had a deadline %v ahead, want none", c.what, c.left)
				case !c.inMemory && (c.left <= 0 || c.left > timeout):
					t.Errorf("%s: the context had %v left, want a deadline within %v", c.what, c.left, timeout)
				}
			}
		})
	}
}
