package adapter

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/openapi"
)

// TestReloadSwapsTheTable: Reload replaces the tools at once; a call that
// started before finishes on its own table, later requests see the new
// one, and a set of tools with a problem is refused whole.
func TestReloadSwapsTheTable(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/pets/slow" {
			started <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	before := loadTools(t, "testdata/c23.yaml", up.URL)
	s, err := New(Options{Tools: before})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k"}, "2025-11-25")
	names := func() []string {
		t.Helper()
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"get_pet"}) {
		t.Fatalf("tools before: %v", got)
	}

	// A call in flight on the old table.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_pet", Arguments: map[string]any{"petId": "slow"}})
		done <- res
	}()
	<-started

	renamed := *before[0]
	renamed.Name = "fetch_pet"
	if err := s.Reload([]*openapi.Tool{&renamed, nil}); err == nil || err.Error() != "Tools[1] is nil" {
		t.Errorf("Reload with a nil tool: %v", err)
	}
	if got := names(); !slices.Equal(got, []string{"get_pet"}) {
		t.Errorf("after a refused reload: %v", got)
	}
	if err := s.Reload([]*openapi.Tool{&renamed}); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"fetch_pet"}) {
		t.Errorf("tools after: %v", got)
	}
	close(release)
	if res := <-done; res == nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `{"ok":true}` {
		t.Errorf("the call in flight: %v", res)
	}
	got := post(t, srv.URL+"/mcp", toolsCallBody(5, "get_pet", `{"petId":"p1"}`), map[string]string{"X-API-Key": "k"})
	if want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool \"get_pet\""}}`; strings.TrimSpace(got.body) != want {
		t.Errorf("the old tool after the reload: %d %s", got.status, got.body)
	}
	if res := callTool(t, cs, "fetch_pet", `{"petId":"p1"}`); res.IsError {
		t.Errorf("the new tool: %v", asJSON(t, res))
	}
}
