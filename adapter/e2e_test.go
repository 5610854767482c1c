package adapter

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// recorded is one request as the fake upstream saw it.
type recorded struct {
	Method     string
	RequestURI string
	Host       string
	Header     http.Header
	Body       string
}

// upstream is a fake REST API that records every request.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newUpstream(t testing.TB, respond http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, recorded{Method: r.Method, RequestURI: r.RequestURI, Host: r.Host, Header: r.Header.Clone(), Body: string(body)})
		u.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// take returns and forgets the recorded requests.
func (u *upstream) take() []recorded {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.reqs
	u.reqs = nil
	return r
}

func loadTools(t testing.TB, file, upstreamURL string) []*openapi.Tool {
	t.Helper()
	doc, err := openapi.Load(context.Background(), file, openapi.LoadOptions{Upstream: upstreamURL})
	if err != nil {
		t.Fatalf("openapi.Load(%s): %v", file, err)
	}
	return doc.Tools
}

// addHeaders is a client RoundTripper that adds fixed headers to every MCP
// request, the way an IDE agent configured with headers does.
type addHeaders struct {
	base http.RoundTripper
	h    map[string]string
}

func (a addHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range a.h {
		r.Header.Set(k, v)
	}
	return a.base.RoundTrip(r)
}

// connect opens a go-sdk client session to endpoint with extra headers.
func connect(t testing.TB, endpoint string, headers map[string]string, protocolVersion string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "restmcp-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: addHeaders{base: http.DefaultTransport, h: headers}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("Connect(%s): %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// asJSON round-trips v through JSON into generic values for cmp.
func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// resultJSON is a tool result as generic JSON, without the protocol
// envelope fields the 2026-07-28 wire adds (_meta serverInfo, resultType).
func resultJSON(t testing.TB, res *mcp.CallToolResult) any {
	t.Helper()
	m, _ := asJSON(t, res).(map[string]any)
	delete(m, "_meta")
	delete(m, "resultType")
	return m
}

func parseJSON(t testing.TB, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return out
}

func callTool(t testing.TB, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", name, args, err)
	}
	return res
}

// petstoreAPI answers the petstore spec's routes.
func petstoreAPI(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/pets":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"id":"p1","name":"Rex"}]`)
	case r.Method == "POST" && r.URL.Path == "/v1/pets":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"p2","name":"Rex","tag":"dog"}`)
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/photo"):
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/pets/"):
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"id":"p1","name":"Rex","age":3.50}`)
	case r.Method == "DELETE":
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/v1/status":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

func TestToolsList(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/petstore.yaml", up.URL)})
	for _, pv := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("protocol "+pv, func(t *testing.T) {
			cs := connect(t, srv.URL+"/mcp", nil, pv)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The go-sdk lists tools sorted by name, not in the document's order.
			if res.NextCursor != "" {
				t.Errorf("NextCursor = %q, want all tools in one page", res.NextCursor)
			}
			// R8: the output schema describes (no required; every
			// property may be null).
			pet := `{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"name":{"anyOf":[{"type":"string"},{"type":"null"}]},"tag":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`
			petID := `{"type":"object","properties":{"petId":{"type":"string"}},"required":["petId"]}`
			want := parseJSON(t, `[
{"name":"create_pet","title":"Create a pet","description":"Create a pet",
 "inputSchema":{"type":"object","properties":{"name":{"type":"string"},"tag":{"type":"string"}},"required":["name"]},
 "outputSchema":`+pet+`,
 "annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false}},
{"name":"delete_pet","title":"Delete a pet","description":"Delete a pet","inputSchema":`+petID+`,
 "annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true}},
{"name":"get_pet","title":"Get a pet","description":"Get a pet","inputSchema":`+petID+`,"outputSchema":`+pet+`,
 "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false}},
{"name":"get_pet_photo","title":"A pet's photo","description":"A pet's photo","inputSchema":`+petID+`,
 "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false}},
{"name":"get_status","title":"Service status","description":"Service status","inputSchema":{"type":"object","properties":{}},
 "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false}},
{"name":"list_pets","title":"List pets","description":"List pets",
 "inputSchema":{"type":"object","properties":{"limit":{"type":"integer","maximum":100},"tags":{"type":"array","items":{"type":"string"}}}},
 "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false}}
]`)
			if diff := cmp.Diff(want, asJSON(t, res.Tools)); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
		})
	}
}

// baseUpstreamHeaders are the headers every upstream request carries: Go's
// transport adds Accept-Encoding, restmcp its User-Agent. Nothing else.
// upstreamHeaders is what restmcp sends upstream on every call, plus
// extra: Accept is "*/*" (Q9, an operation without declared 2xx media
// types) unless extra sets it.
func upstreamHeaders(extra map[string]string) http.Header {
	h := http.Header{"Accept": {"*/*"}, "Accept-Encoding": {"gzip, deflate, br, zstd"}, "User-Agent": {"restmcp/dev"}}
	for k, v := range extra {
		h[k] = []string{v}
	}
	return h
}

func TestKeyPlacementEndToEnd(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	logs := &logBuffer{}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/petstore.yaml", up.URL), Logger: newLogger(logs)})
	upHost := strings.TrimPrefix(up.URL, "http://")

	// What the MCP client sends besides the key (C25 setup): none of it may
	// reach the upstream.
	noise := map[string]string{"Mcp-Session-Id": "s-1", "Cookie": "mcp_ui=1", "X-Forwarded-For": "203.0.113.9"}
	presentations := []struct {
		name     string
		endpoint string
		headers  map[string]string
	}{
		{"x-api-key header", srv.URL + "/mcp", map[string]string{"x-api-key": "k-123"}},
		{"Authorization Bearer", srv.URL + "/mcp", map[string]string{"Authorization": "Bearer k-123"}},
		{"api_key query", srv.URL + "/mcp?api_key=k-123", nil},
	}
	calls := []struct {
		name, tool, args string
		want             recorded
		wantResult       string
	}{
		{
			name: "query key after the operation's parameters", tool: "list_pets", args: `{"limit":5,"tags":["a","b c"]}`,
			want:       recorded{Method: "GET", RequestURI: "/v1/pets?limit=5&tags=a&tags=b%20c&api_key=k-123", Header: upstreamHeaders(map[string]string{"Accept": "application/json"})},
			wantResult: `{"content":[{"type":"text","text":"[{\"id\":\"p1\",\"name\":\"Rex\"}]"}]}`,
		},
		{
			name: "header key, escaped path", tool: "get_pet", args: `{"petId":"p 1/x"}`,
			want:       recorded{Method: "GET", RequestURI: "/v1/pets/p%201%2Fx", Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-123", "Accept": "application/json"})},
			wantResult: `{"content":[{"type":"text","text":"{\"id\":\"p1\",\"name\":\"Rex\",\"age\":3.50}"}],"structuredContent":{"id":"p1","name":"Rex","age":3.50}}`,
		},
		{
			name: "bearer key and JSON body", tool: "create_pet", args: `{"name":"Rex","tag":"dog"}`,
			want: recorded{Method: "POST", RequestURI: "/v1/pets", Body: `{"name":"Rex","tag":"dog"}`, Header: upstreamHeaders(map[string]string{
				"Authorization": "Bearer k-123", "Content-Type": "application/json", "Content-Length": "26", "Accept": "application/json"})},
			wantResult: `{"content":[{"type":"text","text":"{\"id\":\"p2\",\"name\":\"Rex\",\"tag\":\"dog\"}"}],"structuredContent":{"id":"p2","name":"Rex","tag":"dog"}}`,
		},
		{
			name: "public operation sends no key", tool: "get_status", args: `{}`,
			want:       recorded{Method: "GET", RequestURI: "/v1/status", Header: upstreamHeaders(nil)},
			wantResult: `{"content":[{"type":"text","text":"ok"}]}`,
		},
		{
			name: "204 No Content", tool: "delete_pet", args: `{"petId":"p1"}`,
			want:       recorded{Method: "DELETE", RequestURI: "/v1/pets/p1", Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-123"})},
			wantResult: `{"content":[{"type":"text","text":"HTTP 204 No Content"}]}`,
		},
		{
			name: "image", tool: "get_pet_photo", args: `{"petId":"p1"}`,
			want:       recorded{Method: "GET", RequestURI: "/v1/pets/p1/photo", Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-123", "Accept": "image/png"})},
			wantResult: `{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]}`,
		},
	}
	for _, pv := range []string{"", "2025-11-25"} {
		for _, p := range presentations {
			t.Run(p.name+" protocol "+pv, func(t *testing.T) {
				h := map[string]string{}
				for k, v := range noise {
					h[k] = v
				}
				for k, v := range p.headers {
					h[k] = v
				}
				cs := connect(t, p.endpoint, h, pv)
				up.take()
				for _, c := range calls {
					res := callTool(t, cs, c.tool, c.args)
					if diff := cmp.Diff(parseJSON(t, c.wantResult), resultJSON(t, res)); diff != "" {
						t.Errorf("%s: %s result (-want +got):\n%s", c.name, c.tool, diff)
					}
					got := up.take()
					c.want.Host = upHost
					if diff := cmp.Diff([]recorded{c.want}, got); diff != "" {
						t.Errorf("%s: upstream requests for %s %s (-want +got):\n%s", c.name, c.tool, c.args, diff)
					}
				}
			})
		}
	}
	if strings.Contains(logs.String(), "k-123") {
		t.Errorf("the key appears in the logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), metering.KeyID("k-123")) {
		t.Errorf("the logs do not identify the caller by key_id %s", metering.KeyID("k-123"))
	}
}

// closedURL returns an http URL on which nothing listens.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func TestUpstreamErrors(t *testing.T) { // C23
	type want struct {
		exact      string // whole result as JSON, or
		prefix     string // text prefix
		contains   []string
		noUpstream bool
		within     time.Duration
	}
	tests := []struct {
		name     string
		respond  http.HandlerFunc
		upstream string // override: closed port
		args     string
		want     want
	}{
		{name: "404", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"not found"}`)
		}, want: want{exact: `{"content":[{"type":"text","text":"HTTP 404 Not Found\n{\"error\":\"not found\"}"}],"isError":true}`}},
		{name: "401", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":"invalid_token"}`)
		}, want: want{exact: `{"content":[{"type":"text","text":"HTTP 401 Unauthorized\n{\"error\":\"invalid_token\"}"}],"isError":true}`}},
		{name: "500 html", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			_, _ = io.WriteString(w, `<h1>oops</h1>`)
		}, want: want{exact: `{"content":[{"type":"text","text":"HTTP 500 Internal Server Error\n<h1>oops</h1>"}],"isError":true}`}},
		{name: "503 empty", respond: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
		}, want: want{exact: `{"content":[{"type":"text","text":"HTTP 503 Service Unavailable"}],"isError":true}`}},
		{name: "429 Retry-After returns promptly", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":"slow down"}`)
		}, want: want{
			exact:  `{"content":[{"type":"text","text":"HTTP 429 Too Many Requests\nRetry-After: 30\nrate limited by the API: retry after 30 s\n{\"error\":\"slow down\"}"}],"isError":true}`,
			within: 2 * time.Second,
		}},
		{name: "connection refused", upstream: "closed", want: want{prefix: "upstream request failed: connection refused"}},
		{name: "timeout", respond: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, want: want{prefix: "upstream request failed: timed out after 200ms", within: 1500 * time.Millisecond}},
		{name: "invalid arguments", args: `{}`, want: want{prefix: "invalid arguments:", contains: []string{"petId"}, noUpstream: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			respond := tt.respond
			if respond == nil {
				respond = petstoreAPI
			}
			up := newUpstream(t, respond)
			base := up.URL
			if tt.upstream == "closed" {
				base = closedURL(t)
			}
			srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", base), UpstreamTimeout: 200 * time.Millisecond})
			cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
			args := tt.args
			if args == "" {
				args = `{"petId":"p1"}`
			}
			start := time.Now()
			res := callTool(t, cs, "get_pet", args)
			elapsed := time.Since(start)
			if tt.want.exact != "" {
				if diff := cmp.Diff(parseJSON(t, tt.want.exact), resultJSON(t, res)); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			}
			text := ""
			if len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			t.Logf("%s: %q in %v", tt.name, text, elapsed.Round(time.Millisecond))
			if !res.IsError {
				t.Errorf("isError = false, want true (text %q)", text)
			}
			if !strings.HasPrefix(text, tt.want.prefix) {
				t.Errorf("text = %q, want prefix %q", text, tt.want.prefix)
			}
			for _, s := range tt.want.contains {
				if !strings.Contains(text, s) {
					t.Errorf("text = %q, want it to contain %q", text, s)
				}
			}
			if n := len(up.take()); tt.want.noUpstream && n != 0 {
				t.Errorf("%d upstream requests, want none", n)
			}
			if tt.want.within > 0 && elapsed > tt.want.within {
				t.Errorf("call took %v, want under %v", elapsed, tt.want.within)
			}
		})
	}

	t.Run("unknown tool", func(t *testing.T) {
		up := newUpstream(t, petstoreAPI)
		srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL)})
		cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("CallTool(no_such_tool) error = %v, want JSON-RPC -32602", err)
		}
	})
}

func TestCrossHostRedirectNotFollowed(t *testing.T) {
	other := newUpstream(t, petstoreAPI)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/pets/same" {
			http.Redirect(w, r, "/v1/pets/p1", http.StatusFound)
			return
		}
		if r.URL.Path == "/v1/pets/away" {
			http.Redirect(w, r, other.URL+"/v1/pets/p1", http.StatusFound)
			return
		}
		petstoreAPI(w, r)
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL)})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")

	if res := callTool(t, cs, "get_pet", `{"petId":"same"}`); res.IsError {
		t.Errorf("same-host redirect: %v, want it followed", asJSON(t, res))
	}
	res := callTool(t, cs, "get_pet", `{"petId":"away"}`)
	text := res.Content[0].(*mcp.TextContent).Text
	want := "HTTP 302 Found\nLocation: " + other.URL + "/v1/pets/p1 (redirect not followed: restmcp follows redirects only within the same host)\n"
	if !res.IsError || !strings.HasPrefix(text, want) {
		t.Errorf("cross-host redirect = %v %q, want isError and prefix %q", res.IsError, text, want)
	}
	if got := other.take(); len(got) != 0 {
		t.Errorf("the other host received %d requests (with the key), want none", len(got))
	}
}

// TestBehindLocalProxy: a reverse proxy on the same machine reaches the
// loopback listener with the public Host. The go-sdk's localhost protection
// would answer 403; restmcp turns it off and relies on the Origin rule.
func TestBehindLocalProxy(t *testing.T) {
	srv := serve(t, Options{Tools: handTools()})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(pingBody))
	req.Host = "mcp.example.com"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if got := do(t, req); got.status != 200 {
		t.Errorf("Host mcp.example.com via loopback = %d %s, want 200", got.status, got.body)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(pingBody))
	req.Host = "rebound.attacker.example"
	req.Header.Set("Origin", "http://rebound.attacker.example")
	req.Header.Set("Content-Type", "application/json")
	if got := do(t, req); got.status != 403 {
		t.Errorf("DNS-rebinding page (Origin present, not allowed) = %d, want 403", got.status)
	}
}
