package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/examples"
)

// TestRetailBankingExample runs examples/retail-banking as its README says
// and checks each behaviour it stands for, through the official TypeScript
// SDK's SSEClientTransport on the legacy HTTP+SSE path and the go-sdk
// client on both transports:
//
//  1. tool names kept in the document's kebab-case, one renamed by
//     tool_names;
//  2. the customer's JWT (Authorization: Bearer) sent upstream as the
//     operation's bearer credential, byte for byte;
//  3. exactly the two allowlisted caller headers forwarded, on either
//     transport; any other caller header never reaches the upstream;
//  4. the legacy HTTP+SSE transport: the stream's GET carries the
//     credential, calls POSTed to the announced endpoint are answered on
//     the stream;
//  5. limits as on the main path: at most 40 calls in any 60 s per JWT
//     (a sliding window), counted across both transports; the 41st is
//     refused on either;
//  6. enum and default parameters, limit bounds enforced before any
//     upstream call.
func TestRetailBankingExample(t *testing.T) {
	node := requireTSClient(t)
	t.Chdir("../..")
	var mu sync.Mutex
	var seen []string
	demo := examples.NewRetailBankingUpstream()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request line and every header a caller could influence.
		line := r.Method + " " + r.URL.RequestURI()
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range r.Header {
				if k != "Accept-Encoding" && k != "User-Agent" && k != "Accept" && !yield(k) {
					return
				}
			}
		}) {
			line += " | " + k + ": " + strings.Join(r.Header[k], ",")
		}
		mu.Lock()
		seen = append(seen, line)
		mu.Unlock()
		demo.ServeHTTP(w, r)
	}))
	defer up.Close()
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	mcpURL, _ := startLogged(t, map[string]string{"RESTMCP_CONFIG": "examples/retail-banking/restmcp.yaml", "RESTMCP_UPSTREAM": up.URL})
	sseURL := strings.TrimSuffix(mcpURL, "/mcp") + "/sse"
	jwt := examples.RetailBankingToken("cust-17")

	// 1–4 and 6 through the TypeScript SDK's SSEClientTransport.
	headers, _ := json.Marshal(map[string]string{
		"Authorization": "Bearer " + jwt, "X-Bancony-Integration": "assistant-web/5.2",
		"X-Bancony-Culture": "de-DE", "X-Bancony-Debug": "1", "X-Forwarded-For": "203.0.113.9",
	})
	calls, _ := json.Marshal([]map[string]any{
		{"name": "get-accounts", "arguments": map[string]any{"type": "current"}},
		{"name": "get-account-transactions", "arguments": map[string]any{"accountId": "acc-1", "direction": "in"}},
		{"name": "get-account-transactions", "arguments": map[string]any{"accountId": "acc-1", "direction": "sideways"}},
		{"name": "get-account-transactions", "arguments": map[string]any{"accountId": "acc-1", "limit": 51}},
		{"name": "recipients-by-name", "arguments": map[string]any{"name": "SCHMIDT", "limit": 1}},
		{"name": "exchange-rates", "arguments": map[string]any{}},
	})
	out := runNode(t, "examples/ts-client", node, 30*time.Second, false, "sse-check.mjs", sseURL, string(headers), string(calls))
	var got, want map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v: %s", err, out)
	}
	if err := json.Unmarshal([]byte(retailBankingSSEWant), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SSEClientTransport output (-want +got):\n%s", diff)
	}
	// 2, 3: the JWT byte for byte, the two listed headers, nothing else; the
	// refused calls (6) never went upstream; defaults are the upstream's.
	auth := " | Authorization: Bearer " + jwt
	fwd := " | X-Bancony-Culture: de-DE | X-Bancony-Integration: assistant-web/5.2"
	if diff := cmp.Diff([]string{
		"GET /api/v3/accounts?type=current" + auth + fwd,
		"GET /api/v3/accounts/acc-1/transactions?direction=in" + auth + fwd,
		"GET /api/v3/recipients?name=SCHMIDT&limit=1" + auth + fwd,
		"GET /api/v3/exchange-rates" + auth + fwd,
	}, take()); diff != "" {
		t.Errorf("upstream requests (-want +got):\n%s", diff)
	}

	ctx := context.Background()
	other := examples.RetailBankingToken("cust-42")
	connect := func(tr mcp.Transport) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	client := &http.Client{Transport: headerTransport{"Authorization": "Bearer " + other, "X-Bancony-Integration": "ide-agent/1.0"}}
	streamable := connect(&mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: client, MaxRetries: -1, DisableStandaloneSSE: true})
	sse := connect(&mcp.SSEClientTransport{Endpoint: sseURL, HTTPClient: client})
	// 6: enum, default and bounds in the input schema.
	list, err := streamable.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var schema string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name == "get-account-transactions" {
			b, _ := json.Marshal(tl.InputSchema)
			schema = string(b)
		}
	}
	if want := []string{"exchange-rates", "get-account-transactions", "get-accounts", "recipients-by-name"}; !slices.Equal(names, want) {
		t.Errorf("tools over Streamable HTTP: %q, want %q", names, want)
	}
	if want := `{"properties":{"accountId":{"type":"string"},"direction":{"default":"all","description":"Money in, money out or both.","enum":["in","out","all"],"type":"string"},"limit":{"default":20,"description":"How many transactions at most.","maximum":50,"minimum":1,"type":"integer"}},"required":["accountId"],"type":"object"}`; schema != want {
		t.Errorf("get-account-transactions inputSchema:\n%s\nwant\n%s", schema, want)
	}
	// 5: 40 calls, alternating transports, then the 41st refused on both.
	for i := range 40 {
		cs := streamable
		if i%2 == 1 {
			cs = sse
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-accounts", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i+1, res, err)
		}
	}
	// The window opened with the first of the 40 calls: the wait is what is
	// left of its 60 s.
	limited := regexp.MustCompile(`^rate limit exceeded: 40 calls per minute of plan "assistant"; retry after ([1-9]|[1-5][0-9]|60) seconds$`)
	_, err = sse.CallTool(ctx, &mcp.CallToolParams{Name: "get-accounts", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -31429 || !limited.MatchString(rpcErr.Message) {
		t.Errorf("41st call over SSE: %v", err)
	}
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(callBody(41, "get-accounts", `{}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+other)
	res := doHTTP(t, req)
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if _ = json.Unmarshal([]byte(res.body), &body); res.status != 429 || res.header.Get("Retry-After") == "" || body.Error.Code != -31429 || !limited.MatchString(body.Error.Message) {
		t.Errorf("41st call over Streamable HTTP: %d %v %s", res.status, res.header, res.body)
	}
	// 3 on the go-sdk's transports: the one listed header this client sends.
	upstreamLines := take()
	if len(upstreamLines) != 40 || slices.ContainsFunc(upstreamLines, func(l string) bool {
		return l != "GET /api/v3/accounts | Authorization: Bearer "+other+" | X-Bancony-Integration: ide-agent/1.0"
	}) {
		t.Errorf("upstream requests of the 40 calls: %q", upstreamLines)
	}
}

// retailBankingSSEWant is what sse-check.mjs prints for the calls of
// TestRetailBankingExample: the whole output of the TypeScript SDK client.
const retailBankingSSEWant = `{"serverName":"Bancony Banking MCP",
"tools":["exchange-rates","get-account-transactions","get-accounts","recipients-by-name"],
"results":[
{"content":[{"type":"text","text":"{\"accounts\":[{\"id\":\"acc-1\",\"type\":\"current\",\"name\":\"Girokonto\",\"iban\":\"DE44500105175407324931\",\"currency\":\"EUR\",\"balance\":2140.55}]}\n"}],
 "structuredContent":{"accounts":[{"balance":2140.55,"currency":"EUR","iban":"DE44500105175407324931","id":"acc-1","name":"Girokonto","type":"current"}]}},
{"content":[{"type":"text","text":"{\"transactions\":[{\"id\":\"tx-8\",\"date\":\"2026-11-27\",\"amount\":2900,\"text\":\"Salary November\"},{\"id\":\"tx-5\",\"date\":\"2026-11-20\",\"amount\":25,\"text\":\"Refund Bookshop\"}]}\n"}],
 "structuredContent":{"transactions":[{"amount":2900,"date":"2026-11-27","id":"tx-8","text":"Salary November"},{"amount":25,"date":"2026-11-20","id":"tx-5","text":"Refund Bookshop"}]}},
{"content":[{"type":"text","text":"invalid arguments: direction: is not one of the allowed values [\"in\",\"out\",\"all\"]"}],"isError":true},
{"content":[{"type":"text","text":"invalid arguments: limit: 51 must be <= 50"}],"isError":true},
{"content":[{"type":"text","text":"{\"recipients\":[{\"id\":\"rcp-1\",\"name\":\"Anna Schmidt\",\"iban\":\"DE02120300000000202051\"}]}\n"}],
 "structuredContent":{"recipients":[{"iban":"DE02120300000000202051","id":"rcp-1","name":"Anna Schmidt"}]}},
{"content":[{"type":"text","text":"{\"base\":\"EUR\",\"date\":\"2026-11-30\",\"rates\":{\"CHF\":0.9307,\"GBP\":0.8321,\"USD\":1.0512}}\n"}],
 "structuredContent":{"base":"EUR","date":"2026-11-30","rates":{"CHF":0.9307,"GBP":0.8321,"USD":1.0512}}}
]}`
