package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyTransport adds the x-api-key header to every request, as an IDE agent
// configured with headers does.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-api-key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// startDefault runs `restmcp` with no arguments but a free port, as a new
// user does with `go run ./cmd/restmcp`, and returns the MCP URL it prints.
func startDefault(t *testing.T) string {
	t.Helper()
	mcpURL, banner := startServe(t, nil)
	for _, want := range []string{`"x-api-key": "demo-key"`, mcpURL + "?api_key=demo-key", `"mcpServers"`} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	return mcpURL
}

// startRun is startDefault with further environment variables.
func startRun(t *testing.T, extra map[string]string) string {
	t.Helper()
	mcpURL, _ := startServe(t, extra)
	return mcpURL
}

// startServe runs restmcp serve with the environment extra on a free
// loopback port and returns its MCP URL and startup banner.
func startServe(t *testing.T, extra map[string]string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	env := map[string]string{"RESTMCP_ADDR": "127.0.0.1:0"}
	for k, v := range extra {
		env[k] = v
	}
	go func() {
		done <- run(ctx, nil, func(k string) string { return env[k] }, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v", err)
		}
	})
	urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)\s*$`)
	sc := bufio.NewScanner(pr)
	mcpURL := ""
	var banner strings.Builder
	for sc.Scan() {
		line := sc.Text()
		banner.WriteString(line + "\n")
		if m := urlRE.FindStringSubmatch(line); m != nil && mcpURL == "" {
			mcpURL = m[1]
		}
		if strings.Contains(line, "?api_key=") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if mcpURL == "" {
		t.Fatalf("no MCP URL in the startup banner:\n%s", banner.String())
	}
	return mcpURL, banner.String()
}

func TestDefaultRunServesDemo(t *testing.T) {
	mcpURL := startDefault(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: "restmcp-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   mcpURL,
		HTTPClient: &http.Client{Transport: keyTransport{key: "demo-key"}},
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	wantNames := []string{"equities_profile", "equities_quote", "etfs_top_holdings", "fx_rates", "watchlists_create"}
	for _, w := range wantNames {
		if !contains(names, w) {
			t.Errorf("tools/list lacks %q; got %v", w, names)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "equities_profile", Arguments: map[string]any{"symbol": "AAPL"}})
	if err != nil {
		t.Fatalf("tools/call equities_profile: %v", err)
	}
	if res.IsError {
		t.Fatalf("equities_profile isError: %s", text(res))
	}
	var profile map[string]any
	if err := json.Unmarshal([]byte(text(res)), &profile); err != nil {
		t.Fatalf("equities_profile text is not JSON: %v: %s", err, text(res))
	}
	if diff := cmp.Diff("AAPL", profile["symbol"]); diff != "" {
		t.Errorf("profile symbol (-want +got):\n%s", diff)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "etfs_top_holdings", Arguments: map[string]any{"symbol": "SPY", "limit": 3}})
	if err != nil {
		t.Fatalf("tools/call etfs_top_holdings: %v", err)
	}
	if res.IsError {
		t.Fatalf("etfs_top_holdings isError: %s", text(res))
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// skipUnlessRequired skips the test with msg, or fails it when the
// environment variable require is 1 (.ci/run sets each RESTMCP_REQUIRE_*
// after installing what the tests need).
func skipUnlessRequired(t testing.TB, require, msg string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatal(msg + " (" + require + "=1)")
	}
	t.Skip(msg)
}
