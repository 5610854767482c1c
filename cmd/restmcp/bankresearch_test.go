package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/examples"
)

// TestBankResearchExample runs examples/bank-research as its README says
// (its demo API, then restmcp --config examples/bank-research/restmcp.yaml)
// and checks each behaviour the example stands for, through the go-sdk
// client and plain HTTP:
//
//  1. public reads: no credential needed; a presented Authorization,
//     Cookie or oai-* header never changes the caller (one budget per
//     address: the 61st call in a minute is 429) and never goes upstream;
//  2. exactly the ten allowlisted operations, annotated as reads;
//  3. a cap on concurrent upstream calls (3 per upstream host): 429 with
//     Retry-After;
//  4. a foreign Origin refused (403, no CORS headers); bodies over 65,536
//     bytes refused (413); batches refused;
//  5. cursor pagination passed through unchanged;
//  6. upstream errors keep code, retryable and request_id in
//     structuredContent as well as the text; Retry-After surfaced;
//  7. structuredContent carries the result once, the text is a receipt;
//  8. three resources (resources/list, resources/read);
//  9. both the 2025-11-25 and the 2026-07-28 wires.
func TestBankResearchExample(t *testing.T) {
	t.Chdir("../..")
	var mu sync.Mutex
	var seen []http.Header
	hold := make(chan struct{})
	held := make(chan struct{}, 8)
	demo := examples.NewBankResearchUpstream()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if r.URL.Path == "/v1/holding-companies/slow" {
			held <- struct{}{}
			<-hold
		}
		demo.ServeHTTP(w, r)
	}))
	defer up.Close()
	mcpURL, _ := startLogged(t, map[string]string{"RESTMCP_CONFIG": "examples/bank-research/restmcp.yaml", "RESTMCP_UPSTREAM": up.URL})
	ctx := context.Background()
	connectWire := func(version string, header map[string]string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: headerTransport(header)}, MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	cs := connectWire("2025-11-25", nil)

	// 2.
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("%s is not annotated read-only", tl.Name)
		}
	}
	want := []string{"banks_branches", "banks_get", "banks_list", "banks_search", "failures_list", "glossary_get", "holding_companies_get", "metrics_get", "rates_summary", "states_list"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// 5, 7: pagination passed through; the receipt and the data once.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "banks_list", Arguments: map[string]any{"limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("banks_list: %v %v", res, err)
	}
	if got := text(res); !strings.HasPrefix(got, "HTTP 200 OK: the result is in structuredContent, a JSON object of ") || !strings.HasSuffix(got, " bytes with the members items, next_cursor.") {
		t.Errorf("receipt %q", got)
	}
	page, _ := res.StructuredContent.(map[string]any)
	if page["next_cursor"] != "c5" || len(page["items"].([]any)) != 5 {
		t.Errorf("first page: %v", page)
	}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "banks_list", Arguments: map[string]any{"limit": 5, "cursor": "c10"}})
	page, _ = res.StructuredContent.(map[string]any)
	if items, _ := page["items"].([]any); page["next_cursor"] != nil || len(items) != 2 || items[0].(map[string]any)["id"] != "b-1011" {
		t.Errorf("last page: %v", page)
	}

	// 6: errors as data, Retry-After in the text.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "banks_get", Arguments: map[string]any{"id": "b-9999"}})
	wantErr := map[string]any{"code": "maintenance", "message": "this bank's records are being updated", "retryable": true, "request_id": "req-banks/b-9999"}
	if diff := cmp.Diff(wantErr, res.StructuredContent); diff != "" || !res.IsError || !strings.HasPrefix(text(res), "HTTP 503 Service Unavailable\nRetry-After: 30\n") {
		t.Errorf("503: %q (-want +got):\n%s", text(res), diff)
	}

	// 8.
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, []string{"bankscope://v1/glossary", "bankscope://v1/metrics", "bankscope://v1/states"}) {
		t.Errorf("resources %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bankscope://v1/metrics"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != `{"as_of":"2025-06-30","banks":12,"total_assets_usd":33190000000}` {
		t.Errorf("metrics resource: %+v %v", rr, err)
	}

	// 9: the 2026-07-28 wire.
	modern := connectWire("", nil)
	if res, err := modern.CallTool(ctx, &mcp.CallToolParams{Name: "rates_summary", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("rates_summary on 2026-07-28: %v %v", res, err)
	}

	// 4.
	raw := func(body string, h map[string]string) httpResult {
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return doHTTP(t, req)
	}
	if got := raw(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Origin": "https://evil.example"}); got.status != 403 || got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign Origin: %d %v", got.status, got.header)
	}
	if got := raw(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("a", 70000)+`"}}`, nil); got.status != 413 {
		t.Errorf("70 kB body: %d", got.status)
	}
	if got := raw(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, nil); got.status != 400 {
		t.Errorf("batch: %d %s", got.status, got.body)
	}

	// 3: three calls to the one upstream host in progress; a fourth is 429.
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { raw(callBody(100+i, "holding_companies_get", `{"id":"slow"}`), nil) })
	}
	for range 3 {
		<-held
	}
	if got := raw(callBody(200, "metrics_get", `{}`), nil); got.status != 429 || got.header.Get("Retry-After") != "1" {
		t.Errorf("fourth concurrent call: %d %v %s", got.status, got.header, got.body)
	}
	close(hold)
	wg.Wait()

	// 1: presented credentials change nothing and go nowhere.
	mu.Lock()
	seen = nil
	mu.Unlock()
	refused := 0
	for i := range 70 {
		h := map[string]string{"Authorization": fmt.Sprintf("Bearer made-up-%d", i), "Cookie": fmt.Sprintf("s=%d", i), "Oai-Device-Id": fmt.Sprint(i)}
		if got := raw(callBody(300+i, "glossary_get", `{}`), h); got.status == 429 {
			refused++
		}
	}
	// One budget of 60 a minute for this address: 8 calls were metered
	// above (banks_list twice, banks_get, the metrics resource, rates_summary,
	// three holding_companies_get; the call the concurrency cap refused was
	// not), so 52 of these 70 go through and 18 are refused.
	if refused != 18 {
		t.Errorf("%d of 70 calls with 70 different credentials refused, want 18", refused)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		for _, k := range []string{"Authorization", "Cookie", "Oai-Device-Id"} {
			if h.Get(k) != "" {
				t.Fatalf("the upstream received %s", k)
			}
		}
	}
}

// headerTransport adds fixed headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
