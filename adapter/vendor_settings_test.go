package adapter

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/adapter/session"
	"github.com/restmcp/restmcp/metering"
)

// TestVendorBehaviours covers the settings for vendors' documented
// behaviours, each off by default: unknown methods answered 404, a
// text/plain 403 for a foreign Origin, the session stream only for an
// Accept naming text/event-stream, a top-level "meta" on tools/call
// responses and a Markdown page of the endpoint.
func TestVendorBehaviours(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"p1"}`))
	})
	tools := loadTools(t, "testdata/c23.yaml", up.URL)
	off := serve(t, Options{Tools: tools})
	on := serve(t, Options{Tools: tools, UnknownMethodNotFound: true, OriginRefusalText: true, ResponseMeta: true, MarkdownPage: "/docs/v2_mcp.md"})

	t.Run("unknown method", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`
		const want = `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: \"prompts/list\""}}`
		for _, tt := range []struct {
			url    string
			status int
		}{{off.URL, 200}, {on.URL, 404}} {
			if got := post(t, tt.url+"/mcp", body, nil); got.status != tt.status || got.body != want {
				t.Errorf("%s: %d %s, want %d %s", tt.url, got.status, got.body, tt.status, want)
			}
		}
	})

	t.Run("foreign origin", func(t *testing.T) {
		got := post(t, on.URL+"/mcp", pingBody, map[string]string{"Origin": "https://evil.example"})
		if got.status != 403 || got.body != "Forbidden: origin not allowed\n" || got.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("on: %d %q %q", got.status, got.header.Get("Content-Type"), got.body)
		}
		got = post(t, off.URL+"/mcp", pingBody, map[string]string{"Origin": "https://evil.example"})
		if got.status != 403 || got.body != `{"error":"origin not allowed: https://evil.example"}` {
			t.Errorf("off: %d %q", got.status, got.body)
		}
	})

	t.Run("response meta", func(t *testing.T) {
		meta := regexp.MustCompile(`"meta":\{"time":[0-9]+,`) // whole milliseconds
		for _, tt := range []struct {
			name, args, accept string
			key                string
			want               string
		}{
			{"result", `{"petId":"p1"}`, "application/json", "k-1",
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"id\":\"p1\"}"}],"structuredContent":{"id":"p1"}},"meta":{"time":T,"parameters":{"petId":"p1"}}}`},
			{"result on an event stream", `{"petId":"p1"}`, "text/event-stream", "k-1",
				"event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"id\":\"p1\"}"}],"structuredContent":{"id":"p1"}},"meta":{"time":T,"parameters":{"petId":"p1"}}}` + "\n\n"},
			{"invalid arguments", `{"petId":7}`, "application/json", "k-1",
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"invalid arguments: petId: has type integer, want string"}],"isError":true},"meta":{"time":T,"parameters":{"petId":7}}}`},
			{"refused without a key", `{"petId":"p1"}`, "application/json", "",
				`{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"},"meta":{"time":T,"parameters":{"petId":"p1"}}}`},
		} {
			got := post(t, on.URL+"/mcp", toolsCallBody(1, "get_pet", tt.args), map[string]string{"Accept": tt.accept, "X-API-Key": tt.key})
			if !meta.MatchString(got.body) {
				t.Errorf("%s: %s lacks the meta member", tt.name, got.body)
				continue
			}
			if norm := meta.ReplaceAllString(got.body, `"meta":{"time":T,`); norm != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.name, norm, tt.want)
			}
		}
		// Off: no meta; on, every other request's answer has one too, with
		// no parameters.
		if got := post(t, off.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"p1"}`), map[string]string{"X-API-Key": "k-1"}); strings.Contains(got.body, `"meta"`) {
			t.Errorf("off: %s", got.body)
		}
		if got := post(t, off.URL+"/mcp", pingBody, nil); got.body != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Errorf("ping without response_meta: %s", got.body)
		}
		got := post(t, on.URL+"/mcp", pingBody, nil)
		if norm := meta.ReplaceAllString(got.body, `"meta":{"time":T,`); norm != `{"jsonrpc":"2.0","id":3,"result":{},"meta":{"time":T,"parameters":{}}}` {
			t.Errorf("ping with response_meta: %s", got.body)
		}
	})

	t.Run("markdown page", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, on.URL+"/docs/v2_mcp.md", nil)
		got := do(t, req)
		want := "# restmcp\n\nMCP endpoint (Streamable HTTP): " + on.URL + "/mcp\n\n## Authentication\n\n" +
			"Send your API key in the `x-api-key` header, as `?api_key=<key>` on the MCP URL, or as `Authorization: Bearer <key>`. `initialize` and `tools/list` need no key; each `tools/call` is metered against your key's plan.\n" +
			"\n## Calling a tool\n\nPOST a JSON-RPC 2.0 `tools/call` to the endpoint with `Content-Type: application/json` and `Accept: application/json, text/event-stream`:\n\n" +
			"```json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"<tool>\",\"arguments\":{}}}\n```\n" +
			"\n## Tools (1)\n\n### `get_pet`\n\nGET /pets/{petId}\n\nArguments:\n\n- `petId` (string, required)\n"
		if got.status != 200 || got.body != want || got.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
			t.Errorf("GET /docs/v2_mcp.md: %d %q\n%s\nwant\n%s", got.status, got.header.Get("Content-Type"), got.body, want)
		}
		req, _ = http.NewRequest(http.MethodGet, off.URL+"/docs/v2_mcp.md", nil)
		if got := do(t, req); got.status != 404 {
			t.Errorf("off: %d", got.status)
		}
	})

	t.Run("stream accept", func(t *testing.T) {
		clk := &testClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
		for _, strict := range []bool{false, true} {
			srv := serve(t, Options{Tools: tools, Sessions: session.NewMemoryStore(clk.now), StreamAcceptStrict: strict, SessionStreamLifetime: 50 * time.Millisecond})
			id := post(t, srv.URL+"/mcp", initializeBody, nil).header.Get("Mcp-Session-Id")
			for accept, loose := range map[string]int{"": 200, "*/*": 200, "text/event-stream": 200, "application/json": 405, "text/event-stream;q=0": 405} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
				req.Header.Set("Mcp-Session-Id", id)
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				want := loose
				if strict && accept != "text/event-stream" {
					want = 405
				}
				got := do(t, req)
				if got.status != want || (want == 405 && (got.body != "" || got.header.Get("Allow") != "GET, POST, DELETE")) {
					t.Errorf("strict %v, Accept %q: %d Allow %q %q, want %d", strict, accept, got.status, got.header.Get("Allow"), got.body, want)
				}
			}
		}
	})
}

// TestUnknownToolCarriesRateLimitHeaders: with UnknownToolNotFound, the 404
// for a name that is not a tool carries the caller's rate-limit headers, as
// every tools/call answer of the service it models does, read from its
// usage without counting anything: after two calls of 5 a minute, 3 left
// for 24 s, before and after the 404.
func TestUnknownToolCarriesRateLimitHeaders(t *testing.T) {
	plans, err := metering.ParsePlans([]byte("default_plan: basic\nkey_mode: open\nplans:\n  basic:\n    rate_limits: {per_minute: 5}\n    quotas: {day: 100}\n"), "plans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	meter := metering.NewMemory(metering.Options{Now: func() time.Time { return now }})
	up := newPlanUpstream(t)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: fakeKeys{"k-1": plans.Plan("basic")},
		Meter: meter, UnknownToolNotFound: true})
	key := map[string]string{"X-API-Key": "k-1"}
	threeLeft := map[string]string{"RateLimit-Limit": "5", "RateLimit-Remaining": "3", "RateLimit-Reset": "24",
		"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "24"}
	for i, c := range []struct {
		tool        string
		status      int
		body        string
		wantHeaders map[string]string
	}{
		{tool: "get_quote", status: 200},
		{tool: "get_quote", status: 200, wantHeaders: threeLeft},
		{tool: "retired_tool", status: 404, body: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Unknown tool: retired_tool"}}`, wantHeaders: threeLeft},
		{tool: "retired_tool", status: 404, body: `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Unknown tool: retired_tool"}}`, wantHeaders: threeLeft},
	} {
		got := post(t, srv.URL+"/mcp", toolsCallBody(i+1, c.tool, `{"symbol":"A"}`), key)
		if got.status != c.status || (c.body != "" && got.body != c.body) {
			t.Errorf("call %d (%s): %d %s", i+1, c.tool, got.status, got.body)
		}
		if c.wantHeaders == nil {
			continue
		}
		if diff := cmp.Diff(c.wantHeaders, rateHeaders(got.header)); diff != "" {
			t.Errorf("call %d (%s): rate-limit headers (-want +got):\n%s", i+1, c.tool, diff)
		}
		if g, w := got.header.Get("RateLimit-Policy"), `5;w=60;policy="per_minute"`; g != w {
			t.Errorf("call %d (%s): RateLimit-Policy = %q, want %q", i+1, c.tool, g, w)
		}
	}
	r, err := meter.Report(context.Background(), metering.KeyID("k-1"), plans.Plan("basic"))
	if err != nil {
		t.Fatal(err)
	}
	if used := r.Periods[0].Used; used != 2 {
		t.Errorf("units used today = %d, want 2: the 404s counted", used)
	}
}
