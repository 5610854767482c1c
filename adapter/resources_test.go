package adapter

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/metering"
)

// TestResources: a configured GET operation is an MCP resource: listed,
// read through the go-sdk client as its JSON body, admitted and metered as
// a call of the operation, and refused by the plan gate like one;
// capabilities.resources is advertised only with resources.
func TestResources(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"banks":4512}`))
	})
	tools := loadTools(t, "testdata/resources.yaml", up.URL)
	meter := &recordingMeter{}
	keys := fakeKeys{"k-free": testPlan("free", `"tag:public"`), "k-pro": testPlan("pro")}
	srv := serve(t, Options{Tools: tools, Keys: keys, Meter: meter, Resources: []Resource{
		{URI: "bankscope://v1/metrics", Tool: "get_metrics"}, {URI: "bankscope://v1/internal", Tool: "get_internal"},
	}})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-free"}, "2025-11-25")
	ctx := context.Background()
	if cs.InitializeResult().Capabilities.Resources == nil {
		t.Error("capabilities.resources is not advertised")
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantList := `{"resources":[{"description":"GET /internal","mimeType":"application/json","name":"get_internal","uri":"bankscope://v1/internal"},{"description":"Metrics","mimeType":"application/json","name":"get_metrics","title":"Metrics","uri":"bankscope://v1/metrics"}],"cacheScope":"public","ttlMs":0}`
	if diff := cmp.Diff(parseJSON(t, wantList), asJSON(t, list)); diff != "" {
		t.Errorf("resources/list (-want +got):\n%s", diff)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bankscope://v1/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(parseJSON(t, `{"cacheScope":"public","contents":[{"uri":"bankscope://v1/metrics","mimeType":"application/json","text":"{\"banks\":4512}"}],"ttlMs":0}`), asJSON(t, read)); diff != "" {
		t.Errorf("resources/read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metering.Call{{KeyID: metering.KeyID("k-free"), Tool: "get_metrics", Cost: 1}}, meter.take()); diff != "" {
		t.Errorf("admission (-want +got):\n%s", diff)
	}
	// Outside the free plan: refused like the tool, nothing sent or metered.
	up.take()
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bankscope://v1/internal"}); err == nil || !strings.Contains(err.Error(), `tool "get_internal" is not included in plan "free"`) {
		t.Errorf("read outside the plan: %v", err)
	}
	if n := len(up.take()) + len(meter.take()); n != 0 {
		t.Errorf("%d upstream requests and admissions for a denied read, want 0", n)
	}
	// Without a key, when keys are required: 401, as for tools/call.
	got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"bankscope://v1/metrics"}}`, nil)
	if got.status != 401 {
		t.Errorf("read without a key: %d %s", got.status, got.body)
	}
	// A uri given twice is refused before anything runs.
	got = post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"bankscope://v1/internal","uri":"bankscope://v1/metrics"}}`, map[string]string{"X-API-Key": "k-free"})
	if got.status != 400 || !strings.Contains(got.body, `member \"params.uri\" appears twice`) {
		t.Errorf("duplicate uri: %d %s", got.status, got.body)
	}

	none := serve(t, Options{Tools: tools})
	if c := connect(t, none.URL+"/mcp", nil, "2025-11-25").InitializeResult().Capabilities; c.Resources != nil {
		t.Errorf("capabilities.resources without resources: %+v", c.Resources)
	}
	_, err = New(Options{Tools: tools, Resources: []Resource{{URI: "x://a", Tool: "post_thing"}, {URI: "nouri", Tool: "get_metrics"}, {URI: "x://b", Tool: "nope"}, {URI: "x://c", Tool: "get_bank"}}})
	want := "Resources: x://a: post_thing is POST, not GET\nResources: \"nouri\" is not a URI\nResources: x://b: no tool \"nope\"\nResources: x://c: get_bank needs arguments; a resource is read without any"
	if err == nil || err.Error() != want {
		t.Errorf("New: %v\nwant %s", err, want)
	}
}
