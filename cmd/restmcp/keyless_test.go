package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keylessAdvice is what restmcp's registration endpoint says, without the
// OAuth front, to an OAuth-capable client that got a 401 for a missing key.
const keylessAdvice = "this MCP server takes an API key, not an OAuth sign-in: set your API key in your MCP client's configuration, as the x-api-key header, as ?api_key=YOUR_KEY on the MCP URL (/mcp), or as Authorization: Bearer YOUR_KEY"

// TestKeylessClientsSeeTheMessage: a user forgets the key. tools/call
// answers 401 (the HTTP contract), and OAuth-capable clients start a
// sign-in on any 401. Without the OAuth front their sign-in ends at
// restmcp's registration endpoint, whose error says how to send the key:
// the TypeScript SDK v1 (as Claude Code uses it) throws it, the Inspector
// CLI prints it for a person at a terminal and prints the 401's own
// message with --stored-auth-only, and mcp-remote stops with it instead of
// waiting for a browser. With the OAuth front, the same 401 on mcp_path
// leads to restmcp's sign-in for mcp_path itself.
func TestKeylessClientsSeeTheMessage(t *testing.T) {
	mcpURL := startRun(t, map[string]string{"RESTMCP_REQUIRE_KEY": "true"})
	t.Run("typescript-sdk-v1", func(t *testing.T) {
		node := requireTSClient(t)
		out := runTSClient(t, node, "keyless-check.mjs", mcpURL, "fx_rates", `{"base":"USD"}`)
		want := `{"name":"InvalidClientMetadataError","message":"` + keylessAdvice + `"}` + "\n"
		if string(out) != want {
			t.Errorf("got %s\nwant %s", out, want)
		}
	})
	t.Run("inspector", func(t *testing.T) {
		node := requireNode22(t)
		call := []string{"node_modules/.bin/mcp-inspector", "--cli", mcpURL, "--method", "tools/call", "--tool-name", "fx_rates", "--tool-arg", "base=USD"}
		// Its sign-in listens for the OAuth callback on 127.0.0.1:6276 unless
		// told otherwise: a free port of this run's own, so that nothing
		// else on the machine holding 6276 can fail it (EADDRINUSE, seen once
		// in CI).
		callback := fmt.Sprintf("MCP_OAUTH_CALLBACK_URL=http://127.0.0.1:%d/oauth/callback", freePort(t))
		got := decodeJSON(t, runNode22Env(t, node, []string{"MCP_AUTO_OPEN_ENABLED=true", "BROWSER=true", "MCP_INSPECTOR_SECRET_STORE=memory", callback}, call...))
		want := map[string]any{"error": map[string]any{"code": "error", "status": float64(400),
			"message": `Dynamic Client Registration rejected (HTTP 400): {"error":"invalid_client_metadata","error_description":"` + keylessAdvice + `"}`}}
		if !jsonEqual(got, want) {
			t.Errorf("person at a terminal: %v\nwant %v", got, want)
		}
		got = decodeJSON(t, runNode22Env(t, node, []string{"MCP_INSPECTOR_SECRET_STORE=memory"}, append(call, "--stored-auth-only")...))
		want = map[string]any{"error": map[string]any{"code": "auth_required",
			"message": `Error POSTing to endpoint: {"jsonrpc":"2.0","id":2,"error":{"code":-31401,"message":"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`}}
		if !jsonEqual(got, want) {
			t.Errorf("--stored-auth-only: %v\nwant %v", got, want)
		}
	})
	t.Run("mcp-remote", func(t *testing.T) {
		node := requireNode22(t)
		bridge, err := filepath.Abs(filepath.Join(node22Dir, "node_modules", "mcp-remote", "dist", "proxy.js"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(t.TempDir(), "servers.json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"restmcp": map[string]any{"command": node, "args": []string{bridge, mcpURL}}}})
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got := decodeJSON(t, runNode22Env(t, node, []string{"BROWSER=true"}, "node_modules/.bin/mcp-inspector", "--cli", "--config", cfg, "--server", "restmcp",
			"--method", "tools/call", "--tool-name", "fx_rates", "--tool-arg", "base=USD"))
		want := map[string]any{"error": map[string]any{"code": "error",
			"message": `mcp-remote: Dynamic Client Registration rejected (HTTP 400): {"error":"invalid_client_metadata","error_description":"` + keylessAdvice + `"}`}}
		if !jsonEqual(got, want) {
			t.Errorf("through mcp-remote: %v\nwant %v", got, want)
		}
		t.Logf("mcp-remote stopped with the advice after %v", time.Since(start).Round(time.Millisecond))
	})
	t.Run("oauth-front", func(t *testing.T) {
		node := requireTSClient(t)
		app := startApp(t, oauthPlans, map[string]string{"RESTMCP_OAUTH": "true"})
		out := runTSClient(t, node, "keyless-check.mjs", app.url+"/mcp", "get_quote", `{"symbol":"Z"}`)
		var got struct{ Redirect string }
		if err := json.Unmarshal(out, &got); err != nil || !strings.HasPrefix(got.Redirect, app.url+"/oauth/authorize?") {
			t.Fatalf("keyless call on mcp_path with the OAuth front: %s", out)
		}
		u, _ := url.Parse(got.Redirect)
		if q := u.Query(); q.Get("resource") != app.url+"/mcp" || q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != "http://127.0.0.1:9/callback" {
			t.Errorf("authorization request: %v", q)
		}
	})
}

// runNode22Env runs a script of node22Dir's node_modules with Node 22 and
// environment variables added, for at most 90 s, and returns the last
// line of its standard error (where the Inspector CLI reports a failure
// as JSON); whether it exits zero is not asked.
func runNode22Env(t *testing.T, node string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = node22Dir
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("node %s: still running after 90 s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return []byte(lines[len(lines)-1])
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
