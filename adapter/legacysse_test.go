package adapter

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

// TestLegacySSE: the go-sdk's SSE client (2024-11-05 transport) lists and
// calls tools at LegacySSEPath; the caller is the GET's credential, each
// call admitted and metered as on the main path, sent upstream with that
// key, and refused by the plan gate and the meter as there.
func TestLegacySSE(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	meter := &recordingMeter{}
	keys := fakeKeys{"k-free": testPlan("free", `"tag:public"`)}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), Keys: keys, Meter: meter, LegacySSEPath: "/sse", ForwardHeaders: []string{"X-Culture"}})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.SSEClientTransport{Endpoint: srv.URL + "/sse", HTTPClient: &http.Client{Transport: addHeaders{base: http.DefaultTransport, h: map[string]string{"X-API-Key": "k-free", "X-Culture": "de-DE"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 3 {
		t.Fatalf("tools/list over SSE: %v %v", list, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_quote", Arguments: map[string]any{"symbol": "A"}})
	if err != nil || res.IsError || text(res) != `{"ok":true}` {
		t.Fatalf("get_quote over SSE: %v %v", res, err)
	}
	upHost := strings.TrimPrefix(up.URL, "http://")
	want := []recorded{{Method: "GET", RequestURI: "/v1/quotes/A", Host: upHost, Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-free", "X-Culture": "de-DE"})}}
	if diff := cmp.Diff(want, up.take()); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metering.Call{{KeyID: metering.KeyID("k-free"), Tool: "get_quote", Cost: 1}}, meter.take()); diff != "" {
		t.Errorf("admission (-want +got):\n%s", diff)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "etfs_top_holdings", Arguments: map[string]any{"symbol": "SPY"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `is not included in plan "free"`) {
		t.Errorf("outside the plan over SSE: %v %v", res, err)
	}
	if n := len(up.take()) + len(meter.take()); n != 0 {
		t.Errorf("%d upstream requests and admissions for a denied call", n)
	}

	// A stream opened without a key: its calls are refused as on /mcp.
	anon, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.SSEClientTransport{Endpoint: srv.URL + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.CallTool(ctx, &mcp.CallToolParams{Name: "get_quote", Arguments: map[string]any{"symbol": "A"}}); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Errorf("call without a key over SSE: %v", err)
	}

	// A message from a foreign page is refused before it reaches a session.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/sse?sessionid=anything", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "https://evil.example")
	if got := do(t, req); got.status != http.StatusForbidden {
		t.Errorf("a foreign Origin on the message endpoint: %d %s", got.status, got.body)
	}
}

// text is the concatenated text content of a result.
func text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// TestLegacySSEPostBelongsToTheOpener: a POST to a legacy session's message
// URL that carries another key is answered as for an unknown session and
// runs nothing; one without a key runs as the stream's opener, as the
// 2024-11-05 transport defines the URL as the capability; the session id
// appears in no log line.
func TestLegacySSEPostBelongsToTheOpener(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	logs := &logBuffer{}
	meter := &recordingMeter{}
	keys := fakeKeys{"k-pro": testPlan("pro", `"*"`), "k-other": testPlan("pro", `"*"`)}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/compact.yaml", up.URL), Keys: keys, Meter: meter, LegacySSEPath: "/sse", Logger: newLogger(logs)})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-Key", "k-pro")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	endpoint := ""
	for endpoint == "" {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	sessionID := endpoint[strings.Index(endpoint, "sessionid=")+len("sessionid="):]
	send := func(key, body string) rpcResponse {
		h := map[string]string{"X-API-Key": key}
		return post(t, srv.URL+endpoint, body, h)
	}
	call := toolsCallBody(2, "get_quote", `{"symbol":"A"}`)
	if got := send("", initializeBody); got.status != http.StatusAccepted {
		t.Fatalf("initialize: %d %s", got.status, got.body)
	}
	if got := send("", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", got.status, got.body)
	}
	if got := send("k-other", call); got.status != http.StatusNotFound || got.body != "session not found\n" {
		t.Errorf("another key's POST: %d %q, want 404 \"session not found\"", got.status, got.body)
	}
	for i, key := range []string{"k-pro", ""} {
		if got := send(key, toolsCallBody(3+i, "get_quote", `{"symbol":"A"}`)); got.status != http.StatusAccepted {
			t.Errorf("POST with key %q: %d %s", key, got.status, got.body)
		}
	}
	upHost := strings.TrimPrefix(up.URL, "http://")
	wantUp := recorded{Method: "GET", RequestURI: "/v1/quotes/A", Host: upHost, Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-pro"})}
	// The calls run on the stream's goroutine: wait for them (a behaviour,
	// not a timing), up to 10 s.
	var got []recorded
	_ = testenv.Poll(10*time.Second, func() error {
		if got = append(got, up.take()...); len(got) < 2 {
			return errors.New("fewer than 2 upstream requests") // the diff below names them
		}
		return nil
	})
	if diff := cmp.Diff([]recorded{wantUp, wantUp}, got); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
	cancel()
	sum := sha256.Sum256([]byte(sessionID))
	if l := logs.String(); strings.Contains(l, sessionID) || !strings.Contains(l, "sessionid=sha256%3A"+hex.EncodeToString(sum[:4])) {
		t.Errorf("the log holds the session id, or not its hash:\n%s", l)
	}
}
