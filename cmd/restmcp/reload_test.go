package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/openapi"
)

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startLogged is startServe with the log kept.
func startLogged(t *testing.T, env map[string]string) (string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	mcpURL, _ := startRunning(t, env, logs)
	return mcpURL, logs
}

// waitFor polls cond for up to 10 s (a behaviour to wait for, not a
// timing to assert).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, what, cond)
}

const reloadExtraOp = `
  /news:
    get:
      operationId: getNews
      tags: [public]
      responses: {"200": {description: ok}}
`

// TestWatchReloadsTheDocument: with watch on, an MCP client sees a new
// operation once the spec file gains it; a broken document keeps the
// current tools and the log says why; without watch, SIGHUP reloads.
func TestWatchReloadsTheDocument(t *testing.T) {
	orig, err := os.ReadFile("testdata/plans_api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	names := func(cs *mcp.ClientSession) []string {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	before := []string{"admin_stats", "always_fails", "etfs_top_holdings", "get_quote"}
	after := []string{"admin_stats", "always_fails", "etfs_top_holdings", "get_news", "get_quote"}
	for _, mode := range []string{"watch", "sighup", "sessions"} {
		t.Run(mode, func(t *testing.T) {
			spec := filepath.Join(t.TempDir(), "api.yaml")
			if err := os.WriteFile(spec, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_UPSTREAM": "http://127.0.0.1:1"}
			if mode != "sighup" {
				env["RESTMCP_WATCH"], env["RESTMCP_RELOAD_INTERVAL"] = "true", "50ms"
			}
			// In sessions mode the client keeps a stream open and hears
			// notifications/tools/list_changed.
			changed := make(chan struct{}, 8)
			var opts *mcp.ClientOptions
			if mode == "sessions" {
				env["RESTMCP_SESSIONS"], env["RESTMCP_LOG_LEVEL"] = "memory", "debug"
				opts = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
			}
			mcpURL, logs := startLogged(t, env)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: keyTransport{key: "k"}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := names(cs); !slices.Equal(got, before) {
				t.Fatalf("tools before: %v", got)
			}
			if mode == "sessions" {
				waitFor(t, "the client's session stream", func() bool { return strings.Contains(logs.String(), `msg="session stream opened"`) })
			}
			if err := os.WriteFile(spec, append(slices.Clone(orig), reloadExtraOp...), 0o600); err != nil {
				t.Fatal(err)
			}
			if mode == "sighup" {
				if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
			}
			if mode == "sessions" {
				select {
				case <-changed:
				case <-time.After(10 * time.Second):
					t.Fatalf("no notifications/tools/list_changed reached the client; log:\n%s", logs.String())
				}
				if got := names(cs); !slices.Equal(got, after) {
					t.Errorf("tools after the notification: %v", got)
				}
			}
			waitFor(t, "the new operation", func() bool { return slices.Equal(names(cs), after) })
			// The reloader logs once the server has swapped the table, so
			// a client can see the new tools a moment before the line.
			waitFor(t, "the reload in the log", func() bool { return strings.Contains(logs.String(), `msg="document reloaded"`) })

			// A broken operation: a lenient load would drop it and serve the
			// rest; a reload of a document that loaded as published refuses.
			broken := append(slices.Clone(orig), (reloadExtraOp + "  /broken:\n    get:\n      operationId: brokenOp\n      parameters: [{name: x, in: nowhere}]\n      responses: {\"200\": {description: ok}}\n")...)
			if err := os.WriteFile(spec, broken, 0o600); err != nil {
				t.Fatal(err)
			}
			if mode == "sighup" {
				_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
			}
			defer func() {
				if t.Failed() {
					t.Logf("log:\n%s", logs.String())
				}
			}()
			waitFor(t, "the failed reload in the log", func() bool {
				return strings.Contains(logs.String(), `msg="reloading the document failed; the current tools stay"`) &&
					strings.Contains(logs.String(), `error="the document does not load as published (1 problems, the first: `)
			})
			if got := names(cs); !slices.Equal(got, after) {
				t.Errorf("tools after a broken document: %v, want %v", got, after)
			}

			// A document without operations does not empty the server.
			if err := os.WriteFile(spec, []byte("openapi: 3.1.0\ninfo: {title: Empty, version: \"1\"}\npaths: {}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if mode == "sighup" {
				_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
			}
			waitFor(t, "the refused empty document in the log", func() bool {
				return strings.Contains(logs.String(), `error="the document has no operations to serve"`)
			})
			if got := names(cs); !slices.Equal(got, after) {
				t.Errorf("tools after an empty document: %v, want %v", got, after)
			}
		})
	}
}

// TestReloadIntervalRefetchesAURL: a spec URL is fetched again every
// reload_interval with If-None-Match; 304 changes nothing, a new version is
// served.
func TestReloadIntervalRefetchesAURL(t *testing.T) {
	orig, err := os.ReadFile("testdata/plans_api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	body, etag := orig, `"v1"`
	var conditional int
	docs := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("If-None-Match") == etag {
			conditional++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(body)
	}))
	mcpURL, logs := startLogged(t, map[string]string{"RESTMCP_SPEC": docs + "/api.yaml", "RESTMCP_UPSTREAM": "http://127.0.0.1:1", "RESTMCP_RELOAD_INTERVAL": "30ms"})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: keyTransport{key: "k"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	count := func() int {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Tools)
	}
	waitFor(t, "a conditional fetch answered 304", func() bool { mu.Lock(); defer mu.Unlock(); return conditional >= 2 })
	if n := count(); n != 4 {
		t.Fatalf("tools before: %d", n)
	}
	mu.Lock()
	body, etag = append(slices.Clone(orig), reloadExtraOp...), `"v2"`
	mu.Unlock()
	waitFor(t, "the new version served", func() bool { return count() == 5 })
	waitFor(t, "the reload in the log", func() bool { return strings.Contains(logs.String(), `msg="document reloaded"`) })
}

func httptestServer(t *testing.T, h http.Handler) string {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// TestSessionsAcrossReplicas: with sessions: redis, a session initialized
// on one replica is served by another, and a DELETE on either ends it for
// both.
func TestSessionsAcrossReplicas(t *testing.T) {
	redisURL := testRedisURL(t)
	env := map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_SESSIONS": "redis"}
	a := startApp(t, "", env)
	b := startApp(t, "", env)
	send := func(base, method, body, id string) httpResult {
		req, _ := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
		}
		return doHTTP(t, req)
	}
	init := send(a.url, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	id := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || id == "" {
		t.Fatalf("initialize on A: %d %v %s", init.status, init.header, init.body)
	}
	t.Cleanup(func() { redisClient(t, redisURL).Del(context.Background(), "restmcp:session:"+id) })
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if got := send(b.url, http.MethodPost, list, id); got.status != 200 || !strings.Contains(got.body, `"get_quote"`) {
		t.Errorf("tools/list on B in A's session: %d %s", got.status, got.body)
	}
	if got := send(b.url, http.MethodDelete, "", id); got.status != 204 {
		t.Errorf("DELETE on B: %d %s", got.status, got.body)
	}
	if got := send(a.url, http.MethodPost, list, id); got.status != 404 || got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Session not found or expired. Re-initialize."}}` {
		t.Errorf("A after B ended the session: %d %s", got.status, got.body)
	}
}

// TestReloadKeepsToolNames: a reload moves no tool name to another
// operation. /a and /b both want list_users, so /b is list_users_2; the
// document is reloaded without /a: /b is still list_users_2 and a client
// that calls list_users (the tool it listed for /a) gets an unknown-tool
// error, not /b's operation.
func TestReloadKeepsToolNames(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	up := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}))
	doc := func(withA bool) []byte {
		a := ""
		if withA {
			a = `"/a":{"get":{"operationId":"list-users","responses":{"200":{"description":"ok"}}}},`
		}
		return []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"` + up + `"}],"paths":{` + a +
			`"/b":{"get":{"operationId":"list_users","responses":{"200":{"description":"ok"}}}}}}`)
	}
	spec := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(spec, doc(true), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpURL, _ := startLogged(t, map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_WATCH": "true", "RESTMCP_RELOAD_INTERVAL": "50ms"})
	base := strings.TrimSuffix(mcpURL, "/mcp") // postMCP adds it
	list := func() string {
		got := postMCP(t, base, "k", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var m struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(got.body), &m)
		var names []string
		for _, tl := range m.Result.Tools {
			names = append(names, tl.Name)
		}
		return strings.Join(names, ",")
	}
	if got := list(); got != "list_users,list_users_2" {
		t.Fatalf("tools before: %s", got)
	}
	if err := os.WriteFile(spec, doc(false), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload without /a", func() bool { return list() == "list_users_2" })
	if got := postMCP(t, base, "k", callBody(2, "list_users", `{}`)); got.body != `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool \"list_users\""}}` {
		t.Errorf("list_users after the reload: %d %s", got.status, got.body)
	}
	if got := postMCP(t, base, "k", callBody(3, "list_users_2", `{}`)); got.body != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{}"}]}}` {
		t.Errorf("list_users_2 after the reload: %d %s", got.status, got.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(paths, []string{"/b"}) {
		t.Errorf("upstream paths %q, want [/b]", paths)
	}
}

// TestReloadIntervalOnSynctestClock: with reload_interval 1m, the spec URL
// is asked again once a minute and no more (a conditional GET: 304 changes
// nothing), and a new version is served at the first check after it
// appears. On synctest's clock, the document served from memory (a
// RoundTripper, no socket), so the minutes pass at once and exactly.
func TestReloadIntervalOnSynctestClock(t *testing.T) {
	orig, err := os.ReadFile("testdata/plans_api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		body, etag := orig, `"v1"`
		var asked []string // each request: its If-None-Match and the answer's status
		docs := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			h := http.Header{"Etag": {etag}}
			if r.Header.Get("If-None-Match") == etag {
				asked = append(asked, r.Header.Get("If-None-Match")+" 304")
				return &http.Response{StatusCode: http.StatusNotModified, Header: h, Body: http.NoBody, Request: r}, nil
			}
			asked = append(asked, r.Header.Get("If-None-Match")+" 200")
			return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(string(body))), Request: r}, nil
		})
		const location = "https://docs.example/api.yaml"
		served, err := openapi.LoadData(context.Background(), orig, location, openapi.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var applied []int // the tools of each document served
		r := newReloader(apiSource{location: location}, served, func(d *openapi.Document) error {
			mu.Lock()
			defer mu.Unlock()
			applied = append(applied, len(d.Tools))
			return nil
		}, slog.New(slog.DiscardHandler))
		// seen is what was asked and applied so far (synctest's clock
		// orders the goroutines, not the race detector's view of them).
		seen := func() ([]string, []int) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(asked), slices.Clone(applied)
		}
		r.client.Transport = docs
		r.etag = `"v1"` // as the first load saw it
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.run(ctx, time.Minute, nil); close(done) }()

		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if asked, _ := seen(); len(asked) != 0 {
			t.Fatalf("asked before a minute: %q", asked)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		if asked, applied := seen(); !slices.Equal(asked, []string{`"v1" 304`, `"v1" 304`}) || len(applied) != 0 {
			want := []string{`"v1" 304`, `"v1" 304`}
			t.Fatalf("two minutes unchanged: asked %q, applied %v; want %q and nothing applied", asked, applied, want)
		}
		mu.Lock()
		body, etag = append(slices.Clone(orig), reloadExtraOp...), `"v2"`
		mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		if asked, applied := seen(); !slices.Equal(asked, []string{`"v1" 304`, `"v1" 304`, `"v1" 200`, `"v2" 304`}) || !slices.Equal(applied, []int{len(served.Tools) + 1}) {
			want := []string{`"v1" 304`, `"v1" 304`, `"v1" 200`, `"v2" 304`}
			t.Fatalf("after the change: asked %q, applied %v; want %q and one document of %d tools", asked, applied, want, len(served.Tools)+1)
		}
		cancel()
		<-done
	})
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
