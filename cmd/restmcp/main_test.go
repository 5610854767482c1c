package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/internal/testenv"
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
	return startRunning(t, extra, io.Discard)
}

// startRunning is startServe with the log written to logs.
func startRunning(t *testing.T, extra map[string]string, logs io.Writer) (string, string) {
	t.Helper()
	return startRunningArgs(t, nil, extra, logs)
}

// startRunningArgs is startRunning with command-line arguments.
func startRunningArgs(t *testing.T, args []string, extra map[string]string, logs io.Writer) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	env := map[string]string{"RESTMCP_ADDR": "127.0.0.1:0"}
	for k, v := range extra {
		env[k] = v
	}
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, pw, logs)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v", err)
		}
	})
	urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/\S*)\s*$`)
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
	what := map[string]string{"RESTMCP_REQUIRE_NODE": "the Node clients", "RESTMCP_REQUIRE_BROWSER": "Chromium"}[require]
	testenv.Unavailable(t, require, what, msg)
}

// TestCLITellsTheTruth: an unknown command is an error naming the
// commands (not a server); help lists the commands; a missing document,
// a port in use and an upstream without a scheme are each one error that
// says what to do, with its context said once.
func TestCLITellsTheTruth(t *testing.T) {
	ctx := context.Background()
	noEnv := func(string) string { return "" }
	var stdout, stderr strings.Builder
	err := run(ctx, []string{"sevre"}, noEnv, &stdout, &stderr)
	if want := `unknown command "sevre"; the commands are serve, tools, validate, keys, usage, clients, health, version, help (restmcp help lists them with the settings)`; err == nil || err.Error() != want || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("sevre: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}

	stdout.Reset()
	if err := run(ctx, []string{"help"}, noEnv, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	wantHead := "restmcp serves an OpenAPI-described REST API as a remote MCP server.\n\nUsage: restmcp [command] [flags]\n\nCommands:\n" +
		"  serve     serve the document as a remote MCP server (the default: restmcp with only flags serves)\n" +
		"  tools     print the tool table of the document: names, methods, paths, schema sizes\n" +
		"  validate  load the document strictly and list every problem\n" +
		"  keys      manage registry API keys: create [--plan P] [--label L], list, show KEY_ID, revoke KEY_ID\n" +
		"  usage     print a key's usage report (JSON): usage KEY_ID [--plan P]\n" +
		"  clients   print ready-to-paste configurations for Claude, Cursor, VS Code, the Inspector and connectors\n" +
		"  health    ask a running restmcp serve's /health: exit 0 when it answers 200 (a container's HEALTHCHECK): health [--url URL | --addr HOST:PORT]\n" +
		"  version   print restmcp's version, its module version and commit, and the Go it was built with (also --version)\n" +
		"  help      print this help\n\nWith no --spec, serve runs the bundled demo finance API.\n\nSettings (precedence: flag > environment > config file > default), by concern:\n" +
		"(Several documents on one endpoint: --spec NAME=PATH and --upstream NAME=URL for each, or an apis: list in the\nconfig file; see docs/apis.md.)\n\nDOCUMENT AND TOOLS: "
	if !strings.HasPrefix(stdout.String(), wantHead) || !strings.Contains(stdout.String(), "\nOAUTH: The sign-in for clients that cannot send an API key (Claude, ChatGPT and other connectors).\n\n  --oauth bool\n") {
		t.Errorf("help:\n%s", stdout.String())
	}

	stdout.Reset()
	err = run(ctx, []string{"--spec", "missing.yaml", "--addr", "127.0.0.1:0"}, noEnv, &stdout, io.Discard)
	if want := "loading missing.yaml: open missing.yaml: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("missing document: %v, want %s", err, want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	err = run(ctx, []string{"--addr", addr}, noEnv, &stdout, io.Discard)
	if want := "listening on " + addr + ": the address is already in use (another process, or another restmcp, has the port); choose another with --addr (RESTMCP_ADDR, addr in the config file)"; err == nil || err.Error() != want || stdout.Len() != 0 {
		t.Errorf("port in use: %v, banner %q; want %s", err, stdout.String(), want)
	}

	err = run(ctx, []string{"--upstream", "127.0.0.1:9901"}, noEnv, &stdout, io.Discard)
	if want := `upstream: has no scheme: add http:// or https://, e.g. "http://127.0.0.1:9901"`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("upstream without scheme: %v, want …%s", err, want)
	}
}

// TestVersionCommand: `restmcp version` and `--version` print one line with
// restmcp's version, the module version and commit the build recorded, and
// the Go release.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, func(string) string { return "" }, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		want := versionLine(debug.ReadBuildInfo()) + "\n"
		if out.String() != want || !strings.HasPrefix(want, "restmcp "+version+" (module ") || !strings.HasSuffix(want, ", "+runtime.Version()+")\n") {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
	info := &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0e0bba2c1f3a4b5c6d7e8f90"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionLine(info, true), "restmcp "+version+" (module v0.1.0, commit 0e0bba2c1f3a+modified, go1.27.3)"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
}

// TestContainerAddressAndHealth: listening on every interface (a
// container's RESTMCP_ADDR=0.0.0.0:8080), the banner shows the URL a
// client on this machine reaches (127.0.0.1, not [::]), after the public
// URL when one is set; restmcp health asks /health there and exits 0, and
// fails, saying why, where nothing answers.
func TestContainerAddressAndHealth(t *testing.T) {
	mcpURL, banner := startRunningArgs(t, nil, map[string]string{"RESTMCP_ADDR": "0.0.0.0:0", "RESTMCP_PUBLIC_URL": "https://mcp.example.com/mcp"}, io.Discard)
	port := strings.TrimSuffix(strings.TrimPrefix(mcpURL, "http://127.0.0.1:"), "/mcp")
	want := "\nrestmcp is serving \"Demo Finance Data API\" (6 tools) at https://mcp.example.com/mcp\non this machine at http://127.0.0.1:" + port + "/mcp\n"
	if !strings.HasPrefix(banner, want) {
		t.Errorf("banner:\n%s\nwant it to start with:\n%s", banner, want)
	}
	var out, errOut bytes.Buffer
	env := map[string]string{"RESTMCP_ADDR": "0.0.0.0:" + port}
	if err := run(context.Background(), []string{"health"}, func(k string) string { return env[k] }, &out, &errOut); err != nil {
		t.Fatalf("health: %v %s", err, errOut.String())
	}
	if want := "ok: http://127.0.0.1:" + port + "/health answered 200 OK\n"; out.String() != want {
		t.Errorf("health printed %q, want %q", out.String(), want)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	err = run(context.Background(), []string{"health", "--addr", closed}, func(string) string { return "" }, &out, &errOut)
	if want := `health: http://` + closed + `/health: Get "http://` + closed + `/health": dial tcp ` + closed + `: connect: connection refused`; err == nil || err.Error() != want {
		t.Errorf("health where nothing answers: %v, want %q", err, want)
	}
}
