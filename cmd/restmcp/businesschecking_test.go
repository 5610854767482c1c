package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/examples"
)

// TestBusinessCheckingExample runs examples/business-checking as its
// README says and checks each behaviour it stands for through the go-sdk
// client (in sessions mode) and plain HTTP:
//
//  1. the MCP endpoint at the root, /health and the server card still
//     reachable; server name and version in initialize;
//  2. one search with fifteen optional filters, its schema closed
//     (additionalProperties: false), matched by the upstream as given;
//  3. bearer tokens: sent upstream as the operation's bearer credential;
//     401 with the configured code and message without one;
//  4. a sliding window of exactly 100 calls in any 60 s: the 101st is 429
//     with the configured code and message; rate-limit headers on every
//     tools/call response and none elsewhere;
//  5. sessions: Mcp-Session-Id from initialize; missing 400, unknown 404
//     with the fixed messages; DELETE 204; GET with and without Accept:
//     text/event-stream;
//  6. protocol negotiation among 2024-11-05, 2025-03-26, 2025-06-18;
//  7. an unknown tool is 404 with -32601 "Unknown tool: <name>";
//  8. a request without an id is answered 202 with an empty body.
func TestBusinessCheckingExample(t *testing.T) {
	t.Chdir("../..")
	var mu sync.Mutex
	var auths []string
	demo := examples.NewBusinessCheckingUpstream()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		demo.ServeHTTP(w, r)
	}))
	defer up.Close()
	mcpURL, _ := startLogged(t, map[string]string{"RESTMCP_CONFIG": "examples/business-checking/restmcp.yaml", "RESTMCP_UPSTREAM": up.URL})
	root := mcpURL // the MCP endpoint is the root
	ctx := context.Background()

	// 1, 6 (through the client), 3 (its token upstream).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: root, HTTPClient: &http.Client{Transport: headerTransport{"Authorization": "Bearer tok-1"}}, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ir := cs.InitializeResult()
	if ir.ServerInfo.Name != "Bancadia MCP" || ir.ServerInfo.Version != "2.1.0" || ir.ProtocolVersion != "2025-06-18" || cs.ID() == "" {
		t.Errorf("initialize: %+v %q session %q", ir.ServerInfo, ir.ProtocolVersion, cs.ID())
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var search *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "search_accounts" {
			search = tl
		}
	}
	schema, _ := json.Marshal(search.InputSchema)
	var sm struct {
		Properties           map[string]any `json:"properties"`
		AdditionalProperties *bool          `json:"additionalProperties"`
	}
	_ = json.Unmarshal(schema, &sm)
	if len(sm.Properties) != 15 || sm.AdditionalProperties == nil || *sm.AdditionalProperties {
		t.Errorf("search_accounts schema: %d properties, additionalProperties %v", len(sm.Properties), sm.AdditionalProperties)
	}
	ids := func(res *mcp.CallToolResult) []string {
		var out struct {
			Accounts []struct{ ID string } `json:"accounts"`
		}
		_ = json.Unmarshal([]byte(text(res)), &out)
		var got []string
		for _, a := range out.Accounts {
			got = append(got, a.ID)
		}
		return got
	}
	for _, tc := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"entity_types": []string{"llc", "corporation"}, "states": []string{"NY"}, "max_monthly_fee": 30}, []string{"acc-101", "acc-104"}},
		{map[string]any{"entity_types": []string{"llc", "corporation"}, "states": []string{"NY"}, "insurance_type": "fdic"}, []string{"acc-101"}},
		{map[string]any{"min_apy": 0.5, "online_opening": true}, []string{"acc-102", "acc-104"}},
		{map[string]any{"max_monthly_fee": 0, "free_atm": true, "no_minimum_balance": true}, []string{"acc-101", "acc-103"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_accounts", Arguments: tc.args})
		if err != nil || res.IsError || !slices.Equal(ids(res), tc.want) {
			t.Errorf("search %v: %v %v, want %v", tc.args, ids(res), err, tc.want)
		}
	}
	if res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_accounts", Arguments: map[string]any{"colour": "red"}}); !res.IsError || text(res) != "invalid arguments: colour: unknown argument" {
		t.Errorf("an unknown filter: %q", text(res))
	}
	mu.Lock()
	if len(auths) == 0 || slices.ContainsFunc(auths, func(a string) bool { return a != "Bearer tok-1" }) {
		t.Errorf("upstream Authorization headers %q", auths)
	}
	mu.Unlock()

	// Plain HTTP in a session of its own.
	send := func(method, body string, h map[string]string) httpResult {
		req, _ := http.NewRequest(method, root, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return doHTTP(t, req)
	}
	initBody := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	}
	// 6.
	for asked, want := range map[string]string{"2025-11-25": "2025-06-18", "2025-03-26": "2025-03-26", "2024-11-05": "2024-11-05"} {
		if got := send(http.MethodPost, initBody(asked), nil); !strings.Contains(got.body, `"protocolVersion":"`+want+`"`) {
			t.Errorf("initialize asking %s: %s, want %s", asked, got.body, want)
		}
	}
	init := send(http.MethodPost, initBody("2025-06-18"), nil)
	sid := init.header.Get("Mcp-Session-Id")
	withSession := map[string]string{"Mcp-Session-Id": sid, "Authorization": "Bearer tok-2", "MCP-Protocol-Version": "2025-06-18"}

	// 5.
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": "Bearer tok-2"}); got.status != 400 || got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Missing Mcp-Session-Id header."}}` {
		t.Errorf("no session: %d %s", got.status, got.body)
	}
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "gone"}); got.status != 404 || got.body != `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Session not found or expired. Re-initialize."}}` {
		t.Errorf("unknown session: %d %s", got.status, got.body)
	}
	for _, accept := range []string{"application/json", "*/*"} { // stream_accept_strict
		if got := send(http.MethodGet, "", map[string]string{"Mcp-Session-Id": sid, "Accept": accept}); got.status != 405 || got.body != "" || got.header.Get("Allow") != "GET, POST, DELETE" {
			t.Errorf("GET with Accept %s: %d %q", accept, got.status, got.body)
		}
	}
	// unknown_method_not_found: 404 -32601 for any method it does not serve.
	for _, m := range []string{"resources/list", "prompts/list"} {
		if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":4,"method":"`+m+`"}`, withSession); got.status != 404 || got.body != `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: \"`+m+`\""}}` {
			t.Errorf("%s: %d %s", m, got.status, got.body)
		}
	}
	// accept_requests_without_id: a request without an id is answered as a
	// notification, 202 and an empty body, and nothing runs.
	for _, body := range []string{`{"jsonrpc":"2.0","method":"tools/list"}`, callBody(0, "search_accounts", `{}`)} {
		body = strings.Replace(body, `"id":0,`, "", 1)
		if got := send(http.MethodPost, body, map[string]string{"Mcp-Session-Id": sid, "Authorization": "Bearer tok-1"}); got.status != http.StatusAccepted || got.body != "" {
			t.Errorf("%s without an id: %d %q, want 202 and no body", body, got.status, got.body)
		}
	}
	// origin_refusal_text: a plain-text 403.
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Origin": "https://evil.example"}); got.status != 403 || got.body != "Forbidden: origin not allowed\n" {
		t.Errorf("foreign Origin: %d %q", got.status, got.body)
	}
	// Nothing watches the document: no tools.listChanged. Tasks are on
	// (the default): the tasks extension is declared.
	if !strings.Contains(init.body, `"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}}`) {
		t.Errorf("initialize: %s, want tools without listChanged", init.body)
	}
	req, _ := http.NewRequest(http.MethodGet, root, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	sctx, cancel := context.WithCancel(ctx)
	resp, err := http.DefaultClient.Do(req.WithContext(sctx))
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("GET stream: %v %v", resp, err)
	} else {
		cancel() // the client leaves; the server ends the stream
		resp.Body.Close()
	}
	cancel()

	// 3: no token.
	if got := send(http.MethodPost, callBody(4, "get_account", `{"id":"acc-101"}`), map[string]string{"Mcp-Session-Id": sid}); got.status != 401 ||
		got.body != `{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"Unauthorized. Register at https://developer.bancadia.example to obtain an API token."}}` {
		t.Errorf("no token: %d %s", got.status, got.body)
	}
	// 7.
	if got := send(http.MethodPost, callBody(5, "retired_search", `{}`), withSession); got.status != 404 || got.body != `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Unknown tool: retired_search"}}` {
		t.Errorf("unknown tool: %d %s", got.status, got.body)
	}
	// 4: 100 in the window, then 429; headers on tools/call only.
	for i := range 100 {
		got := send(http.MethodPost, callBody(10+i, "get_account", `{"id":"acc-101"}`), withSession)
		if got.status != 200 || got.header.Get("RateLimit-Limit") != "100" {
			t.Fatalf("call %d: %d %v %s", i+1, got.status, got.header, got.body)
		}
	}
	got := send(http.MethodPost, callBody(200, "get_account", `{"id":"acc-101"}`), withSession)
	if got.status != 429 || got.header.Get("Retry-After") == "" ||
		got.body != `{"jsonrpc":"2.0","id":200,"error":{"code":-32029,"message":"Rate limit exceeded: 100 requests per minute. Retry after the Retry-After seconds."}}` {
		t.Errorf("101st call: %d %v %s", got.status, got.header, got.body)
	}
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":201,"method":"tools/list"}`, withSession); got.header.Get("RateLimit-Limit") != "" {
		t.Errorf("rate-limit headers on tools/list: %v", got.header)
	}
	// 5: DELETE ends the session, for its owner only: the session opened
	// without a token belongs to tok-2, whose call claimed it.
	if got := send(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": sid}); got.status != 404 {
		t.Errorf("DELETE without the owner's token: %d, want 404", got.status)
	}
	if got := send(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": sid, "Authorization": "Bearer tok-1"}); got.status != 404 {
		t.Errorf("DELETE with another token: %d, want 404", got.status)
	}
	if got := send(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": sid, "Authorization": "Bearer tok-2"}); got.status != 204 {
		t.Errorf("DELETE: %d", got.status)
	}
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","id":202,"method":"tools/list"}`, withSession); got.status != 404 {
		t.Errorf("after DELETE: %d", got.status)
	}
	// 1: the other routes.
	for _, p := range []string{"health", ".well-known/mcp"} {
		req, _ := http.NewRequest(http.MethodGet, root+p, nil)
		if got := doHTTP(t, req); got.status != 200 || (p == ".well-known/mcp" && !strings.Contains(got.body, `"name":"Bancadia MCP"`)) {
			t.Errorf("GET /%s: %d %s", p, got.status, got.body)
		}
	}
}
