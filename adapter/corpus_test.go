package adapter

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// corpusDir is the third-party OpenAPI corpus shared beside the repository.
var corpusDir = corpustest.Dir()

// TestCorpusPetstoreEndToEnd loads two real published documents, serves
// them, and checks that calls through the go-sdk client reach an httptest
// upstream as exactly the right requests.
func TestCorpusPetstoreEndToEnd(t *testing.T) {
	corpustest.Require(t)
	okJSON := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
	type call struct {
		tool, args string
		want       recorded // Host is filled in from the upstream
	}
	tests := []struct {
		name  string
		file  string
		calls []call
	}{
		{
			name: "petstore-oas30",
			file: "petstore-oas30/openapi.yaml",
			calls: []call{
				{tool: "find_pets_by_status", args: `{"status":"sold"}`, want: recorded{
					Method: "GET", RequestURI: "/api/v3/pet/findByStatus?status=sold",
					Header: upstreamHeaders(map[string]string{"Authorization": "Bearer k-123", "Accept": "application/json, application/xml"}),
				}},
				{tool: "add_pet", args: `{"name":"Rex","photoUrls":["https://img.example/rex.png"],"status":"available"}`, want: recorded{
					Method: "POST", RequestURI: "/api/v3/pet",
					Header: upstreamHeaders(map[string]string{"Authorization": "Bearer k-123", "Content-Type": "application/json", "Content-Length": "79", "Accept": "application/json, application/xml"}),
					Body:   `{"name":"Rex","photoUrls":["https://img.example/rex.png"],"status":"available"}`,
				}},
			},
		},
		{
			name: "petstore-swagger20",
			file: "petstore-swagger20/petstore.json",
			calls: []call{
				{tool: "list_pets", args: `{"limit":20}`, want: recorded{
					Method: "GET", RequestURI: "/v1/pets?limit=20", Header: upstreamHeaders(map[string]string{"Accept": "application/json"}),
				}},
				{tool: "show_pet_by_id", args: `{"petId":"p 1/2"}`, want: recorded{
					Method: "GET", RequestURI: "/v1/pets/p%201%2F2", Header: upstreamHeaders(map[string]string{"Accept": "application/json"}),
				}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, okJSON)
			srv := serve(t, Options{Tools: loadTools(t, filepath.Join(corpusDir, tt.file), up.URL)})
			cs := connect(t, srv.URL+"/mcp", map[string]string{"x-api-key": "k-123"}, "")
			for _, c := range tt.calls {
				res := callTool(t, cs, c.tool, c.args)
				if res.IsError {
					t.Fatalf("%s: isError: %v", c.tool, resultJSON(t, res))
				}
				got := up.take()
				c.want.Host = up.Listener.Addr().String()
				if diff := cmp.Diff([]recorded{c.want}, got); diff != "" {
					t.Errorf("%s %s: upstream requests (-want +got):\n%s", c.tool, c.args, diff)
				}
			}
		})
	}
}
