package adapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/metering"
)

// recordingMeter admits every call and records each Call.
type recordingMeter struct {
	fakeMeter
	mu    sync.Mutex
	calls []metering.Call
}

func (m *recordingMeter) AdmitCall(ctx context.Context, c metering.Call) (metering.Decision, error) {
	m.mu.Lock()
	m.calls = append(m.calls, metering.Call{KeyID: c.KeyID, Tool: c.Tool, Cost: c.Cost})
	m.mu.Unlock()
	return metering.Decision{Allowed: true, Cost: c.Cost}, nil
}

func (m *recordingMeter) take() []metering.Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.calls
	m.calls = nil
	return c
}

// TestCompactMode: three tools listed; search_operations ranks the
// operations; describe_operation gives one's schema; call_operation runs
// the operation exactly as its own tool would (the same upstream request,
// admitted under the operation's name and cost); the operations are not
// callable by name; with a key, the plan limits what is found, described
// and called.
func TestCompactMode(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	meter := &recordingMeter{}
	free := testPlan("free", `"tag:public"`)
	keys := fakeKeys{"k-free": free, "k-pro": testPlan("pro")}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), Compact: true, Keys: keys, Meter: meter})
	upHost := strings.TrimPrefix(up.URL, "http://")
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-pro"}, "2025-11-25")
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantList := `{"tools":[` +
		`{"annotations":{"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false},"description":"Call one operation of the API by name, with its arguments (see describe_operation for their schema). The call is sent to the API with your credentials and counts against your plan like a direct call.","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."},"arguments":{"type":"object","description":"The operation's arguments, matching its input schema."}},"required":["name"],"additionalProperties":false},"name":"call_operation","title":"Call an operation"},` +
		`{"annotations":{"idempotentHint":false,"readOnlyHint":true},"description":"The full description and input schema of one operation, to call it with call_operation.","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."}},"required":["name"],"additionalProperties":false},"name":"describe_operation","title":"Describe an operation"},` +
		`{"annotations":{"idempotentHint":false,"readOnlyHint":true},"description":"Find the operations of the API that fit a task, best first: each with its name, method, path and one-line description. Then describe_operation gives one's arguments and call_operation calls it.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Words describing the task, e.g. \"list the pods in a namespace\"."},"tag":{"type":"string","description":"Only operations with this tag."},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"How many operations to return."}},"required":["query"],"additionalProperties":false},"name":"search_operations","title":"Search the API's operations"}],"cacheScope":"public","ttlMs":0}`
	if diff := cmp.Diff(parseJSON(t, wantList), asJSON(t, list)); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}

	// call returns the whole result, its members in a fixed order
	// (structuredContent is decoded into a map by the client).
	call := func(cs *mcp.ClientSession, tool, args string) string {
		t.Helper()
		b, _ := json.Marshal(asJSON(t, callTool(t, cs, tool, args)))
		return string(b)
	}
	canon := func(s string) string {
		b, _ := json.Marshal(parseJSON(t, s))
		return string(b)
	}
	quote := `{"name":"get_quote","method":"GET","path":"/quotes/{symbol}","description":"Get the latest quote of a stock"}`
	holdings := `{"name":"etfs_top_holdings","method":"GET","path":"/etfs/{symbol}/holdings","description":"List the top holdings of an ETF"}`
	watchlist := `{"name":"create_watchlist","method":"POST","path":"/watchlists","description":"Create a watchlist of stocks"}`
	result := func(s string) string {
		return `{"content":[{"type":"text","text":` + quoteJSON(s) + `}],"structuredContent":` + s + `}`
	}
	for _, tc := range []struct{ args, want string }{
		{`{"query":"latest stock quote"}`, result(`{"operations":[` + quote + `,` + watchlist + `]}`)},
		{`{"query":"top holdings of a fund"}`, result(`{"operations":[` + holdings + `]}`)},
		{`{"query":"stock","tag":"public","limit":1}`, result(`{"operations":[` + watchlist + `]}`)},
		{`{"query":"nothing matches zzz"}`, result(`{"operations":[]}`)},
		{`{"query":""}`, `{"content":[{"type":"text","text":"search_operations needs query: words describing the task"}],"isError":true}`},
		{`{"query":"x","limit":99}`, `{"content":[{"type":"text","text":"search_operations: limit must be 1 to 50"}],"isError":true}`},
		{`{"q":"x"}`, `{"content":[{"type":"text","text":"search_operations: invalid arguments: json: unknown field \"q\""}],"isError":true}`},
	} {
		if got := call(cs, "search_operations", tc.args); got != canon(tc.want) {
			t.Errorf("search_operations %s:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
	wantDescribe := result(`{"name":"etfs_top_holdings","method":"GET","path":"/etfs/{symbol}/holdings","title":"List the top holdings of an ETF","description":"List the top holdings of an ETF\n\nThe largest positions of the fund, by weight.","tags":["etf"],"read_only":true,"destructive":false,"input_schema":{"type":"object","properties":{"symbol":{"type":"string"}},"required":["symbol"]}}`)
	if got := call(cs, "describe_operation", `{"name":"etfs_top_holdings"}`); got != canon(wantDescribe) {
		t.Errorf("describe_operation:\n got %s\nwant %s", got, wantDescribe)
	}
	if n := len(meter.take()); n != 0 {
		t.Errorf("search and describe admitted %d calls, want none (they are never metered)", n)
	}

	// call_operation: the operation's own request, metered as the operation.
	up.take()
	if got, want := call(cs, "call_operation", `{"name":"etfs_top_holdings","arguments":{"symbol":"SPY"}}`), canon(result(`{"ok":true}`)); got != want {
		t.Errorf("call_operation: %s, want %s", got, want)
	}
	wantReq := []recorded{{Method: "GET", RequestURI: "/v1/etfs/SPY/holdings", Host: upHost, Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-pro"})}}
	if diff := cmp.Diff(wantReq, up.take()); diff != "" {
		t.Errorf("call_operation upstream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metering.Call{{KeyID: metering.KeyID("k-pro"), Tool: "etfs_top_holdings", Cost: 5}}, meter.take()); diff != "" {
		t.Errorf("call_operation admission (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"name":"no_such_op"}`, `unknown operation \"no_such_op\": search_operations finds the operations and their names`},
		{`{"name":"get_quote","name":"etfs_top_holdings","arguments":{"symbol":"SPY"}}`, `invalid request: member \"arguments.name\" appears twice in arguments; send it once`},
		{`{"name":"get_quote","args":{}}`, `call_operation takes name and arguments; unknown member \"args\"`},
		{`{"name":7}`, `call_operation needs name, the operation's name as a string (search_operations finds it)`},
		{`{"name":"get_quote","arguments":[1]}`, `call_operation's arguments must be an object, the operation's arguments`},
		{`{"name":"get_quote","arguments":{}}`, `invalid arguments: symbol: required argument is missing`},
	} {
		want := canon(`{"content":[{"type":"text","text":"` + tc.want + `"}],"isError":true}`)
		if got := call(cs, "call_operation", tc.args); got != want {
			t.Errorf("call_operation %s:\n got %s\nwant %s", tc.args, got, want)
		}
	}
	if n := len(up.take()); n != 0 {
		t.Errorf("%d upstream requests for refused call_operations, want 0", n)
	}
	if calls := meter.take(); len(calls) != 1 || calls[0].Tool != "get_quote" {
		t.Errorf("admissions of refused call_operations: %v, want only the one with invalid arguments (refunded)", calls)
	}

	// An operation is not a tool of its own in compact mode.
	got := post(t, srv.URL+"/mcp", toolsCallBody(9, "get_quote", `{"symbol":"A"}`), map[string]string{"X-API-Key": "k-pro"})
	if want := `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown tool \"get_quote\""}}`; got.status != 200 || strings.TrimSpace(got.body) != want {
		t.Errorf("direct call of an operation: %d %s", got.status, got.body)
	}

	// With a key on the free plan (tag:public) the ETF operation is not
	// found, described or called.
	fcs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-free"}, "2025-11-25")
	if got, want := call(fcs, "search_operations", `{"query":"top holdings of a fund or a stock quote"}`), canon(result(`{"operations":[`+quote+`,`+watchlist+`]}`)); got != want {
		t.Errorf("free plan search:\n got %s\nwant %s", got, want)
	}
	denied := canon(`{"content":[{"type":"text","text":` + quoteJSON(free.DeniedMessage("etfs_top_holdings")) + `}],"isError":true}`)
	if got := call(fcs, "describe_operation", `{"name":"etfs_top_holdings"}`); got != denied {
		t.Errorf("free plan describe: %s, want %s", got, denied)
	}
	if got := call(fcs, "call_operation", `{"name":"etfs_top_holdings","arguments":{"symbol":"SPY"}}`); got != denied {
		t.Errorf("free plan call: %s, want %s", got, denied)
	}
	if n := len(up.take()); n != 0 {
		t.Errorf("%d upstream requests for a denied operation, want 0", n)
	}
	if n := len(meter.take()); n != 0 {
		t.Errorf("%d admissions for a denied operation, want 0", n)
	}
}

// quoteJSON is s as a JSON string.
// quoteJSON is s as a JSON string, as the go-sdk and restmcp write it (no
// HTML escaping).
func quoteJSON(s string) string {
	b, _ := sdkJSON(s)
	return string(b)
}
