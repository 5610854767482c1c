package adapter

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/metering"
)

// TestDiscoveryDocuments: the server card, llms.txt and the served
// document, each whole; the configured server name and version in
// initialize; Server-Timing on tools/call; no llms.txt or document route
// unless asked for.
func TestDiscoveryDocuments(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv := serve(t, Options{
		Tools: loadTools(t, "testdata/compact.yaml", up.URL), Name: "Bancadia MCP", Version: "2.1",
		Instructions: "Market data for\\nstocks and ETFs.\n\nMore words.", PublicURL: "https://mcp.example.com/mcp",
		LLMsTxt: true, Document: []byte(`{"openapi":"3.1.0"}`),
	})
	get := func(path string) rpcResponse {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		return do(t, req)
	}
	card := get("/.well-known/mcp")
	wantCard := `{"name":"Bancadia MCP","version":"2.1","description":"Market data for\\nstocks and ETFs.","endpoints":[{"url":"https://mcp.example.com/mcp","transport":"streamable-http","auth":"api-key"}],"authentication":["x-api-key header","api_key query parameter","Authorization: Bearer <API key>"],"tools":[{"name":"create_watchlist","description":"Create a watchlist of stocks"},{"name":"etfs_top_holdings","description":"List the top holdings of an ETF"},{"name":"get_quote","description":"Get the latest quote of a stock"}],"protocol":{"versions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"sessions":false}}` + "\n"
	if card.status != 200 || card.body != wantCard || card.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("server card: %d %v\n%s\nwant\n%s", card.status, card.header, card.body, wantCard)
	}
	llms := get("/llms.txt")
	wantLLMs := "# Bancadia MCP\n\n> Market data for\\nstocks and ETFs.\n\nMCP endpoint (Streamable HTTP): https://mcp.example.com/mcp\n\n## Authentication\n\n" +
		"Send your API key in the `x-api-key` header, as `?api_key=<key>` on the MCP URL, or as `Authorization: Bearer <key>`. `initialize` and `tools/list` need no key; each `tools/call` is metered against your key's plan.\n" +
		"\n## Tools (3)\n\n- `create_watchlist`: Create a watchlist of stocks\n- `etfs_top_holdings`: List the top holdings of an ETF\n- `get_quote`: Get the latest quote of a stock\n"
	if llms.status != 200 || llms.body != wantLLMs || llms.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Errorf("llms.txt: %d %v\n%q\nwant\n%q", llms.status, llms.header, llms.body, wantLLMs)
	}
	if doc := get("/openapi.json"); doc.status != 200 || doc.body != `{"openapi":"3.1.0"}` || doc.header.Get("Content-Type") != "application/json" {
		t.Errorf("openapi.json: %d %v %s", doc.status, doc.header, doc.body)
	}
	init := post(t, srv.URL+"/mcp", initializeBody, nil)
	if !strings.Contains(init.body, `"serverInfo":{"name":"Bancadia MCP","version":"2.1"}`) {
		t.Errorf("initialize: %s", init.body)
	}
	call := post(t, srv.URL+"/mcp", toolsCallBody(3, "get_quote", `{"symbol":"A"}`), map[string]string{"X-API-Key": "k"})
	if st := call.header.Get("Server-Timing"); call.status != 200 || !serverTimingRE.MatchString(st) {
		t.Errorf("tools/call: %d Server-Timing %q", call.status, st)
	}
	if list := post(t, srv.URL+"/mcp", toolsListBody, nil); list.header.Get("Server-Timing") != "" {
		t.Errorf("Server-Timing on tools/list: %q", list.header.Get("Server-Timing"))
	}

	bare := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL)})
	for _, p := range []string{"/llms.txt", "/openapi.json"} {
		req, _ := http.NewRequest(http.MethodGet, bare.URL+p, nil)
		if got := do(t, req); got.status != 404 {
			t.Errorf("%s without the option: %d", p, got.status)
		}
	}
}

// TestDeploymentMessages: the deployment's own 401 and 429 texts replace
// restmcp's (codes, headers and status unchanged), and an unknown tool is
// 404 with -32601 when asked for.
func TestDeploymentMessages(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	meter := newLimitMeter(map[string]int{"": 0})
	srv := serve(t, Options{
		Tools: loadTools(t, "testdata/compact.yaml", up.URL), Keys: fakeKeys{"k-1": testPlan("free")}, Meter: meter,
		Messages:            Messages{Unauthorized: "Unauthorized. Register at https://bank.example/api to obtain an API token.", RateLimited: "Too many requests; slow down."},
		UnknownToolNotFound: true,
	})
	url := srv.URL + "/mcp"
	for _, tc := range []struct {
		key    string
		status int
		body   string
	}{
		{"", 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"Unauthorized. Register at https://bank.example/api to obtain an API token."}}`},
		{"k-unknown", 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"Unauthorized. Register at https://bank.example/api to obtain an API token."}}`},
		{"revoked", 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"Unauthorized. Register at https://bank.example/api to obtain an API token."}}`},
	} {
		h := map[string]string{}
		if tc.key != "" {
			h["X-API-Key"] = tc.key
		}
		got := post(t, url, toolsCallBody(1, "get_quote", `{"symbol":"A"}`), h)
		if got.status != tc.status || got.body != tc.body || got.header.Get("WWW-Authenticate") == "" {
			t.Errorf("key %q: %d %s", tc.key, got.status, got.body)
		}
	}
	got := post(t, url, toolsCallBody(2, "retired_tool", `{}`), map[string]string{"X-API-Key": "k-1"})
	if got.status != 404 || got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Unknown tool: retired_tool"}}` {
		t.Errorf("unknown tool: %d %s", got.status, got.body)
	}
	limited := serve(t, Options{
		Tools: loadTools(t, "testdata/compact.yaml", up.URL), Meter: newLimitMeter(map[string]int{metering.KeyID("k-1"): 0}),
		Messages: Messages{RateLimited: "Too many requests; slow down."},
	})
	got = post(t, limited.URL+"/mcp", toolsCallBody(3, "get_quote", `{"symbol":"A"}`), map[string]string{"X-API-Key": "k-1"})
	if got.status != 429 || got.body != `{"jsonrpc":"2.0","id":3,"error":{"code":-31429,"message":"Too many requests; slow down."}}` || got.header.Get("Retry-After") != "30" {
		t.Errorf("429: %d %v %s", got.status, got.header, got.body)
	}
}

// TestForwardHeaders: only the listed caller headers reach the upstream,
// with every value; a header the operation sets keeps the operation's
// value; credential and hop-by-hop headers cannot be listed.
func TestForwardHeaders(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/c25.yaml", up.URL), ForwardHeaders: []string{"x-bancony-integration", "X-Bancony-Culture", "X-Api-Key-Hint"}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(toolsCallBody(1, "get_forecast", `{"days":2}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", "k-123")
	req.Header.Set("X-Bancony-Integration", "assistant-7")
	req.Header.Add("X-Bancony-Culture", "da-DK")
	req.Header.Add("X-Bancony-Culture", "en-GB")
	req.Header.Set("X-Other", "never")
	req.Header.Set("Cookie", "session=secret")
	if got := do(t, req); got.status != 200 {
		t.Fatalf("call: %d %s", got.status, got.body)
	}
	h := upstreamHeaders(map[string]string{"X-Api-Key": "k-123", "X-Bancony-Integration": "assistant-7"})
	h["X-Bancony-Culture"] = []string{"da-DK", "en-GB"}
	want := []recorded{{Method: "GET", RequestURI: "/v1/forecast?days=2", Host: strings.TrimPrefix(up.URL, "http://"), Header: h}}
	if diff := cmp.Diff(want, up.take()); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
	// A value with a control character (net/http refuses one on the wire;
	// the handler does not rely on that): 400 naming the header, nothing
	// sent upstream.
	bad := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(toolsCallBody(2, "get_forecast", `{"days":2}`)))
	bad.Header = req.Header.Clone()
	bad.Header.Set("X-Bancony-Culture", "da-DK\r\nX-Admin: 1")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, bad)
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"header X-Bancony-Culture: a control character (byte 0x0d) in its value; it cannot be forwarded upstream"}}`; rec.Code != 400 || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("a CR in a forwarded header: %d %s", rec.Code, rec.Body)
	}
	if got := up.take(); len(got) != 0 {
		t.Errorf("upstream got %v", got)
	}
	_, err := New(Options{Tools: loadTools(t, "testdata/c25.yaml", up.URL), ForwardHeaders: []string{"Authorization", "connection", "X-Forwarded-For", "bad name"}})
	want2 := `ForwardHeaders: "Authorization" is a credential
ForwardHeaders: "connection" is hop-by-hop
ForwardHeaders: "X-Forwarded-For" is a proxy header
ForwardHeaders: "bad name" is not a header name`
	if err == nil || err.Error() != want2 {
		t.Errorf("New: %v\nwant %s", err, want2)
	}
}

// TestTextReceipt: with TextReceipt, a JSON object result's text is a
// receipt and the object travels once, in structuredContent; an error
// result keeps its text.
func TestTextReceipt(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "BAD") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"code":"not_found","retryable":false}`))
			return
		}
		_, _ = w.Write([]byte(`{"symbol":"A","price":12.5,"currency":"USD"}`))
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), TextReceipt: true})
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"A"}`), map[string]string{"X-API-Key": "k", "Accept": "application/json"})
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"HTTP 200 OK: the result is in structuredContent, a JSON object of 44 bytes with the members currency, price, symbol."}],"structuredContent":{"symbol":"A","price":12.5,"currency":"USD"}}}`
	if got.status != 200 || strings.TrimSpace(got.body) != want {
		t.Errorf("receipt:\n got %s\nwant %s", got.body, want)
	}
	got = post(t, srv.URL+"/mcp", toolsCallBody(2, "get_quote", `{"symbol":"BAD"}`), map[string]string{"X-API-Key": "k", "Accept": "application/json"})
	if !strings.Contains(got.body, `"isError":true`) || !strings.Contains(got.body, `HTTP 404 Not Found\n{\"code\":\"not_found\",\"retryable\":false}`) {
		t.Errorf("error result: %s", got.body)
	}
}

// TestConcurrencyCaps: past MaxConcurrentCalls (or the per-host cap) a
// call is answered 429 with Retry-After: 1 at once, unmetered and not
// sent; once the calls in progress end, calls go through again.
func TestConcurrencyCaps(t *testing.T) {
	for name, opts := range map[string]Options{"all": {MaxConcurrentCalls: 1}, "per host": {MaxConcurrentCallsPerHost: 1}} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			started := make(chan struct{}, 1)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/slow") {
					started <- struct{}{}
					<-release
				}
				_, _ = w.Write([]byte("{}"))
			})
			meter := &recordingMeter{}
			opts.Tools, opts.Meter = loadTools(t, "testdata/c23.yaml", up.URL), meter
			srv := serve(t, opts)
			hdr := map[string]string{"X-API-Key": "k"}
			done := make(chan rpcResponse, 1)
			go func() { done <- post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"slow"}`), hdr) }()
			<-started
			got := post(t, srv.URL+"/mcp", toolsCallBody(2, "get_pet", `{"petId":"p1"}`), hdr)
			if got.status != 429 || got.header.Get("Retry-After") != "1" ||
				got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-31429,"message":"too many calls in progress on this server; retry in 1 second"}}` {
				t.Errorf("second call: %d %v %s", got.status, got.header, got.body)
			}
			close(release)
			if r := <-done; r.status != 200 {
				t.Errorf("first call: %d %s", r.status, r.body)
			}
			if got := post(t, srv.URL+"/mcp", toolsCallBody(3, "get_pet", `{"petId":"p1"}`), hdr); got.status != 200 {
				t.Errorf("after: %d %s", got.status, got.body)
			}
			if n := len(meter.take()); n != 2 {
				t.Errorf("%d admissions, want 2 (the refused call is not metered)", n)
			}
			if n := len(up.take()); n != 2 {
				t.Errorf("%d upstream requests, want 2", n)
			}
		})
	}
}

// TestMCPAtTheRoot: with MCPPath "/", the root is the MCP endpoint and the
// other routes stay reachable.
func TestMCPAtTheRoot(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), MCPPath: "/"})
	if got := post(t, srv.URL+"/", toolsListBody, nil); got.status != 200 || !strings.Contains(got.body, `"name":"get_quote"`) {
		t.Errorf("tools/list at /: %d %s", got.status, got.body)
	}
	for path, want := range map[string]int{"/health": 200, "/ready": 200, "/.well-known/mcp": 200, "/elsewhere": 404} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if got := do(t, req); got.status != want {
			t.Errorf("GET %s: %d, want %d", path, got.status, want)
		}
	}
}

// TestProtocolVersions: the offered revisions can be narrowed; initialize
// falls back to the newest listed, and a request naming another revision
// is refused.
func TestProtocolVersions(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	tools := loadTools(t, "testdata/compact.yaml", up.URL)
	srv := serve(t, Options{Tools: tools, ProtocolVersions: []string{"2024-11-05", "2025-03-26", "2025-06-18"}})
	initWith := func(v string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		got := post(t, srv.URL+"/mcp", body, nil)
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(got.body), &r)
		return r.Result.ProtocolVersion
	}
	for asked, want := range map[string]string{"2025-03-26": "2025-03-26", "2025-11-25": "2025-06-18", "2024-11-05": "2024-11-05", "1999-01-01": "2025-06-18"} {
		if got := initWith(asked); got != want {
			t.Errorf("initialize asking %s: negotiated %q, want %s", asked, got, want)
		}
	}
	// J2: the same JSON-RPC refusal on every method.
	for _, body := range []string{toolsCallBody(2, "get_quote", `{"symbol":"A"}`), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`} {
		got := post(t, srv.URL+"/mcp", body, map[string]string{"X-API-Key": "k", "MCP-Protocol-Version": "2025-11-25"})
		if got.status != 400 || got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"unsupported MCP-Protocol-Version \"2025-11-25\"; supported: 2025-06-18, 2025-03-26, 2024-11-05"}}` {
			t.Errorf("%s on 2025-11-25: %d %s", body, got.status, got.body)
		}
	}
	// On the 2026-07-28 wire (a _meta protocol version) the refusal is
	// SEP-2575's UnsupportedProtocolVersionError, with its data.
	got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0"}}}`,
		map[string]string{"MCP-Protocol-Version": "v999.0.0"})
	if want := `{"jsonrpc":"2.0","id":6,"error":{"code":-32022,"message":"unsupported protocol version \"v999.0.0\"; supported: 2025-06-18, 2025-03-26, 2024-11-05","data":{"supported":["2025-06-18","2025-03-26","2024-11-05"],"requested":"v999.0.0"}}}`; got.status != 400 || got.body != want {
		t.Errorf("server/discover on v999.0.0: %d %s\nwant 400 %s", got.status, got.body, want)
	}
	// J3: with only the 2026-07-28 wire listed, initialize (which that wire
	// does not have) is an error, never a revision outside the list.
	only := serve(t, Options{Tools: tools, ProtocolVersions: []string{"2026-07-28"}})
	got = post(t, only.URL+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"initialize is not part of the MCP revisions this server speaks (2026-07-28): send requests with MCP-Protocol-Version and _meta as the 2026-07-28 revision defines, without initialize"}}`; got.status != 400 || got.body != want {
		t.Errorf("initialize with only 2026-07-28 served: %d %s\nwant 400 %s", got.status, got.body, want)
	}
	mixed := serve(t, Options{Tools: tools, ProtocolVersions: []string{"2025-06-18", "2026-07-28"}})
	got = post(t, mixed.URL+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if !strings.Contains(got.body, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize asking 2025-11-25 of a server listing 2025-06-18 and 2026-07-28: %s, want 2025-06-18", got.body)
	}
	if _, err := New(Options{Tools: tools, ProtocolVersions: []string{"2023-01-01"}}); err == nil || !strings.HasPrefix(err.Error(), `ProtocolVersions: "2023-01-01" is not a revision restmcp speaks (`) {
		t.Errorf("New with an unknown revision: %v", err)
	}
}

// TestUpstreamErrorChoices: ErrorStructuredContent keeps the upstream's
// error object (redacted like the text) as structuredContent of the error
// result; UpstreamErrorsEmpty answers [] instead, except for 401, 403 and
// 429.
func TestUpstreamErrorChoices(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/DENIED"):
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"code":"forbidden"}`))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"upstream_down","retryable":true,"request_id":"req-9","echo":"k-secret"}`))
		}
	})
	tools := loadTools(t, "testdata/compact.yaml", up.URL)
	hdr := map[string]string{"X-API-Key": "k-secret", "Accept": "application/json"}
	structured := serve(t, Options{Tools: tools, ErrorStructuredContent: true})
	got := post(t, structured.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"A"}`), hdr)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"HTTP 503 Service Unavailable\n{\"code\":\"upstream_down\",\"retryable\":true,\"request_id\":\"req-9\",\"echo\":\"REDACTED\"}"}],"structuredContent":{"code":"upstream_down","echo":"REDACTED","request_id":"req-9","retryable":true},"isError":true}}`
	if strings.TrimSpace(got.body) != want {
		t.Errorf("error object:\n got %s\nwant %s", got.body, want)
	}
	empty := serve(t, Options{Tools: tools, UpstreamErrorsEmpty: true})
	got = post(t, empty.URL+"/mcp", toolsCallBody(2, "get_quote", `{"symbol":"A"}`), hdr)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[]"}]}}`; strings.TrimSpace(got.body) != want {
		t.Errorf("empty array:\n got %s\nwant %s", got.body, want)
	}
	got = post(t, empty.URL+"/mcp", toolsCallBody(3, "get_quote", `{"symbol":"DENIED"}`), hdr)
	if !strings.Contains(got.body, `"isError":true`) || !strings.Contains(got.body, "HTTP 403 Forbidden") {
		t.Errorf("403 with UpstreamErrorsEmpty: %s", got.body)
	}
}

// TestErrorObjectOnlyWhenItFits: with ErrorStructuredContent, an upstream
// error object becomes structuredContent only when it fits the tool's
// outputSchema (SDK clients validate error results too, and reject the
// whole result otherwise); one that does not fit stays in the text, with
// a note.
func TestErrorObjectOnlyWhenItFits(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		if r.URL.Query().Get("tag") == "fits" {
			_, _ = w.Write([]byte(`{"code":"not_found","key":"none"}`))
			return
		}
		_, _ = w.Write([]byte(`{"code":"not_found","key":["a list where the schema says string"]}`))
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/integrity.yaml", up.URL), ErrorStructuredContent: true})
	hdr := map[string]string{"X-API-Key": "k-1", "Accept": "application/json"}
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "echo", `{"tag":"fits","fault":"none"}`), hdr)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"HTTP 404 Not Found\n{\"code\":\"not_found\",\"key\":\"none\"}"}],"structuredContent":{"code":"not_found","key":"none"},"isError":true}}`
	if strings.TrimSpace(got.body) != want {
		t.Errorf("an error object that fits:\n got %s\nwant %s", got.body, want)
	}
	got = post(t, srv.URL+"/mcp", toolsCallBody(2, "echo", `{"tag":"other","fault":"none"}`), hdr)
	want = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"HTTP 404 Not Found\n{\"code\":\"not_found\",\"key\":[\"a list where the schema says string\"]}"},` +
		`{"type":"text","text":"the upstream's error body is a JSON object that does not fit this tool's outputSchema, so it is not given as structuredContent; it is the text above."}],"isError":true}}`
	if strings.TrimSpace(got.body) != want {
		t.Errorf("an error object that does not fit:\n got %s\nwant %s", got.body, want)
	}
}

// TestServerCard: the SEP-2127 Server Card at <endpoint>/server-card and
// /.well-known/mcp/server-card.json, whole, with its media type, CORS,
// caching and ETag (304 on If-None-Match), and the MCP Catalog naming it.
func TestServerCard(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	srv := serve(t, Options{
		Tools: loadTools(t, "testdata/compact.yaml", up.URL), Name: "Bancadia MCP", Version: "2.1",
		Instructions: "Market data for stocks and ETFs.\n\nMore words.", PublicURL: "https://mcp.example.com/mcp",
		LegacySSEPath: "/sse",
	})
	get := func(path string, hdr ...string) rpcResponse {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return do(t, req)
	}
	want := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json","name":"com.example.mcp/bancadia-mcp","version":"2.1","description":"Market data for stocks and ETFs.","title":"Bancadia MCP",` +
		`"remotes":[{"type":"streamable-http","url":"https://mcp.example.com/mcp","headers":[{"name":"X-Api-Key","description":"Your API key; also accepted as Authorization: Bearer <key>, or as ?api_key=<key> on the URL","isRequired":true,"isSecret":true}],"supportedProtocolVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]},` +
		`{"type":"sse","url":"https://mcp.example.com/sse","headers":[{"name":"X-Api-Key","description":"Your API key; also accepted as Authorization: Bearer <key>, or as ?api_key=<key> on the URL","isRequired":true,"isSecret":true}],"supportedProtocolVersions":["2024-11-05"]}],` +
		`"_meta":{"io.restmcp/tools":3}}`
	var etag string
	for _, p := range []string{"/mcp/server-card", "/.well-known/mcp/server-card.json"} {
		got := get(p)
		h := map[string]string{}
		for _, k := range []string{"Content-Type", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Cache-Control"} {
			h[k] = got.header.Get(k)
		}
		wantH := map[string]string{"Content-Type": "application/mcp-server-card+json", "Access-Control-Allow-Origin": "*",
			"Access-Control-Allow-Methods": "GET", "Cache-Control": "public, max-age=3600"}
		if got.status != 200 || got.body != want || !reflect.DeepEqual(h, wantH) {
			t.Errorf("GET %s: %d %v\n%s\nwant\n%s", p, got.status, h, got.body, want)
		}
		if etag = got.header.Get("ETag"); len(etag) != 34 {
			t.Errorf("GET %s: ETag %q", p, etag)
		}
	}
	if got := get("/mcp/server-card", "If-None-Match", etag); got.status != 304 || got.body != "" {
		t.Errorf("If-None-Match: %d %s", got.status, got.body)
	}
	cat := get("/.well-known/mcp/catalog.json")
	wantCat := `{"entries":[{"displayName":"Bancadia MCP","identifier":"urn:air:mcp.example.com:bancadia-mcp","type":"application/mcp-server-card+json","url":"https://mcp.example.com/mcp/server-card"}],"specVersion":"draft"}`
	if cat.status != 200 || cat.body != wantCat {
		t.Errorf("catalog: %d %s\nwant %s", cat.status, cat.body, wantCat)
	}

	// Without a public URL, on a loopback address: namespace "local"; keys
	// optional: the header is not required.
	bare := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), Version: "1.0.0", AllowAnonymous: true})
	req, _ := http.NewRequest(http.MethodGet, bare.URL+"/mcp/server-card", nil)
	got := do(t, req)
	wantBare := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json","name":"local/restmcp","version":"1.0.0","description":"restmcp: the operations of a REST API as MCP tools","title":"restmcp",` +
		`"remotes":[{"type":"streamable-http","url":"` + bare.URL + `/mcp","headers":[{"name":"X-Api-Key","description":"Your API key; also accepted as Authorization: Bearer <key>, or as ?api_key=<key> on the URL","isRequired":false,"isSecret":true}],"supportedProtocolVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}],` +
		`"_meta":{"io.restmcp/tools":3}}`
	if got.status != 200 || got.body != wantBare {
		t.Errorf("bare card: %d\n%s\nwant\n%s", got.status, got.body, wantBare)
	}
}

// TestServerCardWithOAuth: with the OAuth front, the card lists the OAuth
// endpoint as a second remote (no header: a token stands for the key),
// names its protected-resource metadata, and is served at that
// endpoint's /server-card too.
func TestServerCardWithOAuth(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	base := serveOAuth(t, &revocableKeys{revoked: map[string]bool{}}, up.URL, "testdata/c23.yaml", nil)
	versions := `"supportedProtocolVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`
	host := strings.TrimPrefix(base, "http://")
	want := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json","name":"local/restmcp","version":"dev","description":"restmcp: the operations of a REST API as MCP tools","title":"restmcp",` +
		`"remotes":[{"type":"streamable-http","url":"` + base + `/mcp","headers":[{"name":"X-Api-Key","description":"Your API key; also accepted as Authorization: Bearer <key>, or as ?api_key=<key> on the URL","isRequired":true,"isSecret":true}],` + versions + `},` +
		`{"type":"streamable-http","url":"` + base + `/oauth/mcp",` + versions + `}],` +
		`"_meta":{"io.restmcp/oauth-protected-resource":"http://` + host + `/.well-known/oauth-protected-resource/oauth/mcp","io.restmcp/tools":1}}`
	for _, p := range []string{"/mcp/server-card", "/oauth/mcp/server-card"} {
		req, _ := http.NewRequest(http.MethodGet, base+p, nil)
		if got := do(t, req); got.status != 200 || got.body != want {
			t.Errorf("GET %s: %d\n%s\nwant\n%s", p, got.status, got.body, want)
		}
	}
}
