package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/metering"
)

// TestToolHandlerRefusesUnadmittedCall: a tools/call that reaches a tool
// handler without an admission made by the gate for that tool and key is
// refused with a JSON-RPC error and logged as a bug, never served; an
// admission serves one call only.
func TestToolHandlerRefusesUnadmittedCall(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	logs := &logBuffer{}
	s, err := New(Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Logger: newLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	h := s.table.Load().handlers["get_pet"]
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "get_pet", Arguments: json.RawMessage(`{"petId":"p1"}`)}}
	withEx := func(ex *exchange) context.Context { return context.WithValue(context.Background(), exchangeKey{}, ex) }
	cred := newCredential("k-1", "header")
	mine := &admission{call: metering.Call{KeyID: cred.keyID, Tool: "get_pet", Cost: 1}}
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"no exchange", context.Background()},
		{"no admission", withEx(&exchange{cred: cred})},
		{"admission for another tool", withEx(&exchange{cred: cred, admission: &admission{call: metering.Call{KeyID: cred.keyID, Tool: "list_pets"}}})},
		{"admission for another key", withEx(&exchange{cred: newCredential("k-2", "header"), admission: &admission{call: metering.Call{KeyID: cred.keyID, Tool: "get_pet"}}})},
		{"anonymous admission, keyed caller", withEx(&exchange{cred: cred, admission: &admission{call: metering.Call{KeyID: AnonymousKeyID, Tool: "get_pet"}}})},
		{"settled admission", withEx(&exchange{cred: cred, admission: func() *admission { a := &admission{call: mine.call}; a.settle(); return a }()})},
	}
	want := &jsonrpc.Error{Code: codeInternalError, Message: "internal error: the call was not admitted; it was not run"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h(tt.ctx, req)
			var je *jsonrpc.Error
			if res != nil || !errors.As(err, &je) || je.Code != want.Code || je.Message != want.Message || je.Data != nil {
				t.Errorf("handler = %v, %v; want nil, %v", res, err, want)
			}
		})
	}
	if n := strings.Count(logs.String(), `"msg":"bug: tools/call reached the tool handler without an admission for this tool and key; refused"`); n != len(tests) {
		t.Errorf("%d bug log lines, want %d:\n%s", n, len(tests), logs.String())
	}
	if got := up.take(); len(got) != 0 {
		t.Errorf("upstream saw %d requests, want 0", len(got))
	}

	// The gate's own admission serves exactly one call.
	ctx := withEx(&exchange{cred: cred, admission: mine})
	if res, err := h(ctx, req); err != nil || res.IsError {
		t.Fatalf("admitted call = %v, %v", res, err)
	}
	if res, err := h(ctx, req); res != nil || err == nil {
		t.Errorf("second call on one admission = %v, %v; want refused", res, err)
	}
	if got := up.take(); len(got) != 1 {
		t.Errorf("upstream saw %d requests, want 1", len(got))
	}
}
