package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/restmcp/restmcp/internal/testenv"
)

func TestMain(m *testing.M) {
	if os.Getenv(JQWorkerEnv) == "1" {
		// A jq worker the tests started from their own executable.
		os.Exit(ServeJQWorker(os.Stdin, os.Stdout, os.Stderr))
	}
	// Tests are their own main: silence gin's debug route listing.
	gin.SetMode(gin.TestMode)
	testenv.Main(m)
}

// logBuffer is a goroutine-safe slog sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// serve starts restmcp with opts on a real listener.
func serve(t testing.TB, opts Options) *httptest.Server {
	t.Helper()
	srv, _ := serveServer(t, opts)
	return srv
}

// serveServer is serve that also returns the adapter's Server, for tests
// that Close it to wait for what it writes after a response.
func serveServer(t testing.TB, opts Options) (*httptest.Server, *Server) {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, s
}

// rpcResponse is a raw HTTP exchange with the MCP endpoint.
type rpcResponse struct {
	status int
	header http.Header
	body   string
}

// post sends body to url with the usual MCP headers plus extra (a header set
// to "" is removed).
func post(t testing.TB, url, body string, extra map[string]string) rpcResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) rpcResponse {
	t.Helper()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rpcResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// decodeRPC decodes a JSON-RPC response body into a generic value.
func decodeRPC(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
	return m
}

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	toolsListBody  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	pingBody       = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

func toolsCallBody(id int, name, args string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": json.RawMessage(args)}})
	return string(b)
}

// serveHandler serves an already built Server on a real listener.
func serveHandler(t testing.TB, s *Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}
