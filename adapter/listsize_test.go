package adapter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/restmcp/restmcp/openapi"
)

// TestReportListBytesMatchesToolsList checks openapi's Report.ListBytes
// against what the go-sdk actually sends for tools/list.
func TestReportListBytesMatchesToolsList(t *testing.T) {
	for _, file := range []string{"testdata/petstore.yaml", "testdata/c22.yaml", "testdata/c25.yaml"} {
		t.Run(file, func(t *testing.T) {
			up := newUpstream(t, petstoreAPI)
			doc, err := openapi.Load(context.Background(), file, openapi.LoadOptions{Upstream: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			srv := serve(t, Options{Tools: doc.Tools})
			cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			wire, err := json.Marshal(map[string]any{"tools": res.Tools})
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Report(openapi.ReportOptions{}).ListBytes; got != len(wire) {
				t.Errorf("Report.ListBytes = %d, tools/list = %d bytes:\n%s", got, len(wire), wire)
			}
		})
	}
}
