package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/corpustest"
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

// TestToolsListEncodingMatchesSDK: the tools/list result assembled from
// tools encoded one by one is, byte for byte, the go-sdk's encoding of the
// whole ListToolsResult, for three large corpus documents (and for an
// empty list).
func TestToolsListEncodingMatchesSDK(t *testing.T) {
	corpustest.Require(t)
	check := func(name string, listed []*mcp.Tool) {
		t.Helper()
		want, err := sdkJSON(&mcp.ListToolsResult{Tools: listed, Cacheable: mcp.Cacheable{CacheScope: "public"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeToolsList(listed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: the assembled list differs from the SDK's at byte %d of %d", name, i, len(want))
		}
	}
	check("no tools", []*mcp.Tool{})
	for _, folder := range []string{"github-rest-v1.1.3", "stripe-2022-04-12", "kubernetes-1.36-swagger20"} {
		doc, err := openapi.Load(context.Background(), corpustest.Path(t, folder), openapi.LoadOptions{Lenient: true, RelativeServers: true})
		if err != nil {
			t.Fatal(err)
		}
		var listed []*mcp.Tool
		for _, tl := range doc.Tools {
			mt, err := listedTool(tl)
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, mt)
		}
		check(folder, listed)
	}
}
