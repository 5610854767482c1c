package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFinanceDataExample runs examples/finance-data as its README says
// (restmcp --config examples/finance-data/restmcp.yaml, from the repository
// root) and checks each behaviour the example stands for through the
// go-sdk client and plain HTTP:
//
//  1. dotted operationIds become snake_case tools;
//  2. the key works in x-api-key and as ?api_key=;
//  3. two plans: a route outside basic answers with an error naming the
//     plan and the upgrade, and works on pro;
//  4. each call is counted like the REST call (GET /usage);
//  5. X-Request-Id on every response;
//  6. server timing: the Server-Timing header and the result's _meta;
//  7. GET /llms.txt and GET /openapi.json;
//  8. the configured server name in initialize; unknown keys are refused;
//  9. the official TypeScript SDK client lists and calls with the pro key
//     given as ?api_key=.
func TestFinanceDataExample(t *testing.T) {
	node := requireTSClient(t)
	t.Chdir("../..")
	mcpURL, _ := startLogged(t, map[string]string{"RESTMCP_CONFIG": "examples/finance-data/restmcp.yaml"})
	base := strings.TrimSuffix(mcpURL, "/mcp")
	ctx := context.Background()
	connectKey := func(endpoint, key string) *mcp.ClientSession {
		t.Helper()
		hc := http.DefaultClient
		if key != "" {
			hc = &http.Client{Transport: keyTransport{key: key}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	basic := connectKey(mcpURL, "demo-basic-key")

	// 8, 1.
	if got := basic.InitializeResult().ServerInfo; got.Name != "Finance Data MCP" || got.Version != version {
		t.Errorf("serverInfo %+v", got)
	}
	list, err := basic.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"equities_profile", "equities_quote", "etfs_top_holdings", "fx_rates", "status_get", "watchlists_create"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// 2, 6: the header key; the result's _meta timing.
	res, err := basic.CallTool(ctx, &mcp.CallToolParams{Name: "fx_rates", Arguments: map[string]any{"base": "USD", "symbols": []string{"EUR"}}})
	if err != nil || res.IsError || text(res) != "{\"base\":\"USD\",\"date\":\"2025-06-30\",\"rates\":{\"EUR\":0.9215}}\n" {
		t.Fatalf("fx_rates: %v %v", res, err)
	}
	timing, _ := res.Meta["io.restmcp/timing"].(map[string]any)
	var keys []string
	for k, v := range timing {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"meter_ms", "total_ms", "upstream_ms"}) {
		t.Errorf("_meta timing %v", res.Meta)
	}
	// 2: ?api_key= on the URL.
	query := connectKey(mcpURL+"?api_key=demo-basic-key", "")
	if res, err := query.CallTool(ctx, &mcp.CallToolParams{Name: "equities_quote", Arguments: map[string]any{"symbol": "AAPL"}}); err != nil || res.IsError {
		t.Errorf("equities_quote with ?api_key=: %v %v", res, err)
	}

	// 3: outside basic, inside pro.
	res, err = basic.CallTool(ctx, &mcp.CallToolParams{Name: "etfs_top_holdings", Arguments: map[string]any{"symbol": "SPY"}})
	wantDenied := `tool "etfs_top_holdings" is not included in plan "basic". ETF holdings are in the Pro plan. Upgrade: https://finance-data.example/pricing`
	if err != nil || !res.IsError || text(res) != wantDenied {
		t.Errorf("etfs_top_holdings on basic: %v %v, want the error %q", text(res), err, wantDenied)
	}
	pro := connectKey(mcpURL, "demo-pro-key")
	if res, err := pro.CallTool(ctx, &mcp.CallToolParams{Name: "etfs_top_holdings", Arguments: map[string]any{"symbol": "SPY", "limit": 2}}); err != nil || res.IsError {
		t.Errorf("etfs_top_holdings on pro: %v %v", res, err)
	}

	// 4: the counters, like the REST calls.
	usage := func(key string) map[string]any {
		req, _ := http.NewRequest(http.MethodGet, base+"/usage", nil)
		req.Header.Set("X-API-Key", key)
		got := doHTTP(t, req)
		var m map[string]any
		if got.status != 200 || json.Unmarshal([]byte(got.body), &m) != nil {
			t.Fatalf("usage: %d %s", got.status, got.body)
		}
		return m
	}
	// The calls of each tool this month.
	toolCalls := func(m map[string]any) map[string]float64 {
		out := map[string]float64{}
		periods, _ := m["periods"].([]any)
		for _, p := range periods {
			pm, _ := p.(map[string]any)
			if pm["period"] != "month" {
				continue
			}
			tools, _ := pm["tools"].(map[string]any)
			for name, v := range tools {
				if u, ok := v.(map[string]any); ok {
					out[name], _ = u["calls"].(float64)
				}
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string]float64{"fx_rates": 1, "equities_quote": 1}, toolCalls(usage("demo-basic-key"))); diff != "" {
		t.Errorf("basic usage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"etfs_top_holdings": 1}, toolCalls(usage("demo-pro-key"))); diff != "" {
		t.Errorf("pro usage (-want +got):\n%s", diff)
	}

	// 5, 6, 8 over plain HTTP.
	post := func(key, body string) httpResult {
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		return doHTTP(t, req)
	}
	for name, r := range map[string]httpResult{
		"tools/list":  post("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		"tools/call":  post("demo-basic-key", callBody(2, "status_get", `{}`)),
		"unknown key": post("not-a-key", callBody(3, "fx_rates", `{"base":"USD"}`)),
	} {
		if id := r.header.Get("X-Request-Id"); len(id) != 16 {
			t.Errorf("%s: X-Request-Id %q", name, id)
		}
		if st := r.header.Get("Server-Timing"); (name != "tools/list") != (st != "") {
			t.Errorf("%s: Server-Timing %q", name, st)
		}
		if name == "unknown key" && (r.status != 401 || !strings.Contains(r.body, "unknown API key")) {
			t.Errorf("unknown key: %d %s", r.status, r.body)
		}
	}
	// response_meta (off in the example's file): the vendor's envelope on
	// every tools/call response, success or error. The go-sdk client
	// ignores the member; the TypeScript SDK's refuses it (zod: Unrecognized
	// key "meta"), which is why the example leaves it off.
	metaURL, _ := startLogged(t, map[string]string{"RESTMCP_CONFIG": "examples/finance-data/restmcp.yaml", "RESTMCP_RESPONSE_META": "true"})
	metaTime := regexp.MustCompile(`,"meta":\{"time":\d+,"parameters":`) // whole milliseconds, as the service sends them
	for name, tt := range map[string]struct{ key, body, want string }{
		"tools/call":  {"demo-basic-key", callBody(2, "fx_rates", `{"base":"EUR"}`), `"parameters":{"base":"EUR"}}}`},
		"unknown key": {"not-a-key", callBody(3, "fx_rates", `{"base":"USD"}`), `"parameters":{"base":"USD"}}}`},
		"initialize":  {"", `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"parameters":{}}}`},
		"tools/list":  {"", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, `"parameters":{}}}`},
		"ping":        {"", `{"jsonrpc":"2.0","id":6,"method":"ping"}`, `"parameters":{}}}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, metaURL, strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.key != "" {
			req.Header.Set("X-API-Key", tt.key)
		}
		r := doHTTP(t, req)
		if !metaTime.MatchString(r.body) || !strings.HasSuffix(strings.TrimSpace(r.body), tt.want) {
			t.Errorf("response_meta %s: %s, want a top-level meta ending %s", name, r.body, tt.want)
		}
	}
	if res, err := connectKey(metaURL, "demo-basic-key").CallTool(ctx, &mcp.CallToolParams{Name: "fx_rates", Arguments: map[string]any{"base": "USD"}}); err != nil || res.IsError {
		t.Errorf("go-sdk client with response_meta: %v %v", res, err)
	}

	// The Markdown page of the endpoint.
	req, _ := http.NewRequest(http.MethodGet, base+"/docs/v2_mcp.md", nil)
	page := doHTTP(t, req)
	for _, want := range []string{"# Finance Data MCP\n", "MCP endpoint (Streamable HTTP): " + mcpURL + "\n", "\n### `etfs_top_holdings`\n", "- `symbol` (string, required)", "## Tools (6)\n"} {
		if page.status != 200 || !strings.Contains(page.body, want) {
			t.Errorf("/docs/v2_mcp.md: %d, lacks %q:\n%s", page.status, want, page.body)
		}
	}

	// 7.
	req, _ = http.NewRequest(http.MethodGet, base+"/llms.txt", nil)
	llms := doHTTP(t, req)
	for _, want := range []string{"# Finance Data MCP\n", "MCP endpoint (Streamable HTTP): " + mcpURL + "\n", "- `etfs_top_holdings`: List an ETF's largest holdings\n", "## Tools (6)\n"} {
		if !strings.Contains(llms.body, want) {
			t.Errorf("llms.txt lacks %q:\n%s", want, llms.body)
		}
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/openapi.json", nil)
	doc := doHTTP(t, req)
	var d struct {
		Info struct{ Title string } `json:"info"`
	}
	if doc.status != 200 || json.Unmarshal([]byte(doc.body), &d) != nil || d.Info.Title != "Demo Finance Data API" {
		t.Errorf("openapi.json: %d %.200s", doc.status, doc.body)
	}

	// 9.
	out := runNode(t, "examples/ts-client", node, 30*time.Second, false, "check.mjs", mcpURL, "demo-pro-key", "etfs_top_holdings", `{"symbol":"QQQ","limit":2}`, "query")
	var ts map[string]any
	if err := json.Unmarshal(out, &ts); err != nil {
		t.Fatalf("check.mjs output: %v: %s", err, out)
	}
	const text = `{"symbol":"QQQ","name":"Invesco QQQ Trust, Series 1","asOf":"2025-06-30","totalHoldings":101,"holdings":[` +
		`{"rank":1,"symbol":"NVDA","name":"NVIDIA Corp.","weightPercent":9.21},{"rank":2,"symbol":"MSFT","name":"Microsoft Corp.","weightPercent":8.87}]}` + "\n"
	var structured map[string]any
	_ = json.Unmarshal([]byte(text), &structured)
	// The timing _meta: three durations in milliseconds, whatever they were.
	tsResult, _ := ts["result"].(map[string]any)
	tsMeta, _ := tsResult["_meta"].(map[string]any)
	tsTiming, _ := tsMeta["io.restmcp/timing"].(map[string]any)
	for _, k := range []string{"meter_ms", "upstream_ms", "total_ms"} {
		if v, ok := tsTiming[k].(float64); !ok || v < 0 || len(tsTiming) != 3 {
			t.Errorf("timing _meta %v", tsTiming)
		}
	}
	wantTS := map[string]any{
		"serverName": "Finance Data MCP",
		"tools":      []any{"equities_profile", "equities_quote", "etfs_top_holdings", "fx_rates", "status_get", "watchlists_create"},
		"result": map[string]any{
			"_meta":             map[string]any{"io.restmcp/timing": tsTiming},
			"content":           []any{map[string]any{"type": "text", "text": text}},
			"structuredContent": structured,
		},
	}
	if diff := cmp.Diff(wantTS, ts); diff != "" {
		t.Errorf("TypeScript SDK client (-want +got):\n%s", diff)
	}
}
