package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tsClientDir holds the TypeScript SDK client check (examples/ts-client).
const tsClientDir = "../../examples/ts-client"

// requireTSClient skips the test when node or the client's node_modules are
// missing, unless RESTMCP_REQUIRE_NODE=1 (set by .ci/run after `npm ci`).
func requireTSClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk"))
	if err == nil && statErr == nil {
		return node
	}
	msg := "!!! SKIPPING the TypeScript SDK client check: needs node and `npm ci` in examples/ts-client !!!"
	skipUnlessRequired(t, "RESTMCP_REQUIRE_NODE", msg)
	return ""
}

// TestTypeScriptSDKClient drives the default demo server with the official
// TypeScript MCP SDK client, presenting the key in each of the three ways.
func TestTypeScriptSDKClient(t *testing.T) {
	node := requireTSClient(t)
	mcpURL := startDefault(t)

	type output struct {
		ServerName string   `json:"serverName"`
		Tools      []string `json:"tools"`
		Result     struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
			IsError           bool           `json:"isError"`
		} `json:"result"`
	}
	wantTools := []string{"equities_profile", "equities_quote", "etfs_top_holdings", "fx_rates", "status_get", "watchlists_create"}
	for _, how := range []string{"header", "query", "bearer"} {
		t.Run(how, func(t *testing.T) {
			out := runTSClient(t, node, "check.mjs", mcpURL, "demo-key", "fx_rates", `{"base":"USD","symbols":["EUR","JPY"]}`, how)
			var got output
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("output is not JSON: %v: %s", err, out)
			}
			if got.ServerName != "restmcp" {
				t.Errorf("server name = %q, want restmcp", got.ServerName)
			}
			if diff := cmp.Diff(wantTools, got.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if got.Result.IsError || len(got.Result.Content) != 1 || got.Result.Content[0].Type != "text" {
				t.Fatalf("unexpected result: %+v", got.Result)
			}
			wantStructured := map[string]any{"base": "USD", "date": "2025-06-30", "rates": map[string]any{"EUR": 0.9215, "JPY": 157.42}}
			if diff := cmp.Diff(wantStructured, got.Result.StructuredContent); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			if got.Result.Content[0].Text != "{\"base\":\"USD\",\"date\":\"2025-06-30\",\"rates\":{\"EUR\":0.9215,\"JPY\":157.42}}\n" {
				t.Errorf("text = %q", got.Result.Content[0].Text)
			}
		})
	}
}

// TestTypeScriptClientV2Modern drives the default demo server with the
// official TypeScript MCP client v2 (@modelcontextprotocol/client) pinned to
// the 2026-07-28 revision, which refuses a tools/call result without
// resultType: the whole result is compared.
func TestTypeScriptClientV2Modern(t *testing.T) {
	node := requireTSClient(t)
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		msg := "!!! SKIPPING the TypeScript client v2 check: needs `npm ci` in examples/ts-client !!!"
		skipUnlessRequired(t, "RESTMCP_REQUIRE_NODE", msg)
	}
	mcpURL := startDefault(t)
	out := runTSClient(t, node, "check-v2.mjs", mcpURL, "demo-key", "fx_rates", `{"base":"USD","symbols":["EUR","JPY"]}`)
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v: %s", err, out)
	}
	want := map[string]any{
		"tools": []any{"equities_profile", "equities_quote", "etfs_top_holdings", "fx_rates", "status_get", "watchlists_create"},
		"result": map[string]any{
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "restmcp", "version": version}},
			"content":           []any{map[string]any{"type": "text", "text": "{\"base\":\"USD\",\"date\":\"2025-06-30\",\"rates\":{\"EUR\":0.9215,\"JPY\":157.42}}\n"}},
			"structuredContent": map[string]any{"base": "USD", "date": "2025-06-30", "rates": map[string]any{"EUR": 0.9215, "JPY": 157.42}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client v2 output (-want +got):\n%s", diff)
	}
}

// runTSClient runs one script of examples/ts-client with node and returns
// its standard output; a failure or a run past 30 s fails the test with the
// script's standard error.
func runTSClient(t *testing.T, node, script string, args ...string) []byte {
	t.Helper()
	return runNode(t, tsClientDir, node, 30*time.Second, false, append([]string{script}, args...)...)
}

// runNode runs node with args in dir, with HOME a fresh temporary folder
// (the Inspector keeps its catalog and secrets there), and returns its
// standard output. A non-zero exit fails the test with the standard error,
// unless allowFail; a run past timeout always fails.
func runNode(t *testing.T, dir, node string, timeout time.Duration, allowFail bool, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && (!allowFail || ctx.Err() != nil) {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}
