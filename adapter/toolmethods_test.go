package adapter

import (
	"testing"

	"github.com/restmcp/restmcp/openapi"
)

func TestToolsListExact(t *testing.T) {
	srv := serve(t, Options{AllowAnonymous: true, Tools: []*openapi.Tool{
		{Name: "zeta", Method: "DELETE", Title: "Zeta", Description: "Delete a zeta",
			InputSchema: []byte(`{"type":"object","properties":{}}`), Destructive: true},
		{Name: "alpha", Method: "GET", Description: "Get an alpha", ReadOnly: true,
			InputSchema:  []byte(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			OutputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
	}})
	got := post(t, srv.URL+"/mcp", toolsListBody, nil)
	want := `{"jsonrpc":"2.0","id":2,"result":{"ttlMs":0,"cacheScope":"public","tools":[` +
		`{"annotations":{"destructiveHint":false,"idempotentHint":false,"readOnlyHint":true},"description":"Get an alpha",` +
		`"inputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},"name":"alpha",` +
		`"outputSchema":{"type":"object","properties":{"id":{"type":"string"}}}},` +
		`{"annotations":{"destructiveHint":true,"idempotentHint":false,"readOnlyHint":false},"description":"Delete a zeta",` +
		`"inputSchema":{"type":"object","properties":{}},"name":"zeta","title":"Zeta"}]}}`
	if got.status != 200 || got.body != want {
		t.Errorf("tools/list = %d\n%s\nwant 200\n%s", got.status, got.body, want)
	}
}

func TestToolsListCursorAndUnknownTool(t *testing.T) {
	srv := serve(t, Options{AllowAnonymous: true, Tools: handTools()})
	tests := []struct{ name, body, want string }{
		{"cursor", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"abc"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid cursor: every tool is listed in the first page"}}`},
		{"unknown tool", toolsCallBody(5, "no_such_tool", `{}`),
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool \"no_such_tool\""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := post(t, srv.URL+"/mcp", tt.body, nil)
			if got.body != tt.want {
				t.Errorf("body =\n%s\nwant\n%s", got.body, tt.want)
			}
		})
	}
}

func TestToolsListEmpty(t *testing.T) {
	srv := serve(t, Options{AllowAnonymous: true})
	got := post(t, srv.URL+"/mcp", toolsListBody, nil)
	want := `{"jsonrpc":"2.0","id":2,"result":{"ttlMs":0,"cacheScope":"public","tools":[]}}`
	if got.status != 200 || got.body != want {
		t.Errorf("tools/list = %d\n%s\nwant 200\n%s", got.status, got.body, want)
	}
}
