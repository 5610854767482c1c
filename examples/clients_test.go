package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientConfigs checks that every client configuration is valid JSON,
// names the finance server, points at an MCP URL and carries the key in one
// of the places restmcp reads it from.
func TestClientConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("clients", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found %d client configs, want at least 4", len(files))
	}
	readme, err := os.ReadFile(filepath.Join("clients", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			}
			// VS Code's "inputs" is an array; decode the servers part only.
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatalf("%s is not valid JSON: %v", f, err)
			}
			delete(raw, "inputs")
			b, _ := json.Marshal(raw)
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			servers := cfg["mcpServers"]
			if servers == nil {
				servers = cfg["servers"] // VS Code
			}
			s, ok := servers["finance"]
			if !ok {
				t.Fatalf("%s: no finance server under mcpServers or servers", f)
			}
			if !strings.Contains(s.URL, "/mcp") {
				t.Errorf("%s: url %q is not an MCP endpoint", f, s.URL)
			}
			if s.Headers[APIKeyHeader] == "" && !strings.Contains(s.URL, "?api_key=") {
				t.Errorf("%s: the key is neither in an %s header nor in ?api_key=", f, APIKeyHeader)
			}
			if !strings.Contains(string(readme), filepath.Base(f)) {
				t.Errorf("clients/README.md does not mention %s", filepath.Base(f))
			}
		})
	}
}
