package adapter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/adapter/session"
	"github.com/restmcp/restmcp/internal/benchdata"
	"github.com/restmcp/restmcp/openapi"
)

// benchUpstream is a loopback upstream with a small JSON answer.
func benchUpstream(b *testing.B) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"p1","name":"Rex","tag":"dog"}`)
	}))
	b.Cleanup(up.Close)
	return up
}

// mcpRequest is a POST of body to the MCP URL u, with the Content-Type
// and Accept a Streamable HTTP client sends.
func mcpRequest(u, body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

func drain(b *testing.B, c *http.Client, req *http.Request) {
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// benchCalls is the timed loop of the tools/call benchmarks: each
// iteration POSTs a tools/call of get_pet (petId p1) to the MCP URL u with
// the header name set to value, and reads the whole answer (drain: 200
// or the benchmark fails).
func benchCalls(b *testing.B, u, name, value string) {
	c := benchClient()
	body := toolsCallBody(1, "get_pet", `{"petId":"p1"}`)
	b.ReportAllocs()
	for b.Loop() {
		req := mcpRequest(u, body)
		req.Header.Set(name, value)
		drain(b, c, req)
	}
}

// BenchmarkToolsCall is one tools/call end to end: HTTP POST to restmcp
// over loopback, middleware, the fast path (or the go-sdk stateless
// session), request building, upstream GET over loopback, result mapping,
// JSON response.
func BenchmarkToolsCall(b *testing.B) { benchToolsCall(b, false) }

// BenchmarkToolsCallSDK is BenchmarkToolsCall with the fast path off: every
// call goes through the go-sdk's handler.
func BenchmarkToolsCallSDK(b *testing.B) { benchToolsCall(b, true) }

func benchToolsCall(b *testing.B, disableFastPath bool) {
	up := benchUpstream(b)
	srv := serve(b, Options{Tools: loadTools(b, "testdata/c23.yaml", up.URL), Meter: allowAll(0), DisableFastPath: disableFastPath})
	benchCalls(b, srv.URL+"/mcp", "X-API-Key", "k-123")
}

// BenchmarkDirectUpstream is the same upstream GET without restmcp: the
// difference to BenchmarkToolsCall is the adapter's overhead per call.
func BenchmarkDirectUpstream(b *testing.B) {
	up := benchUpstream(b)
	c := benchClient()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, up.URL+"/v1/pets/p1", nil)
		req.Header.Set("X-API-Key", "k-123")
		drain(b, c, req)
	}
}

// BenchmarkToolsCallParallel measures throughput with concurrent callers.
func BenchmarkToolsCallParallel(b *testing.B) {
	up := benchUpstream(b)
	srv := serve(b, Options{Tools: loadTools(b, "testdata/c23.yaml", up.URL), Meter: allowAll(0)})
	c := benchClient()
	body := toolsCallBody(1, "get_pet", `{"petId":"p1"}`)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := mcpRequest(srv.URL+"/mcp", body)
			req.Header.Set("X-API-Key", "k-123")
			drain(b, c, req)
		}
	})
}

// BenchmarkToolsListGitHub is one tools/list of the GitHub REST document
// (692 tools, 683 KB), over loopback: the fast path writes bytes encoded
// once per tool table; "sdk" is the go-sdk's handler encoding it per call;
// "fast-params" is a tools/list with "params":{} (as most clients send it),
// answered by the fast path too. These accept only identity; "fast-gzip"
// accepts gzip (listgzip.go) and reads the compressed bytes as they come,
// without decompressing: a Go client that decompresses spends about 2 ms
// more on this list, its own cost, not restmcp's.
func BenchmarkToolsListGitHub(b *testing.B) {
	doc, err := openapi.Load(context.Background(), filepath.Join(corpusDir, "github-rest-v1.1.3/api.github.com.json"),
		openapi.LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	tools := doc.Tools
	for _, tt := range []struct {
		name     string
		disable  bool
		body     string
		encoding string
	}{
		{"fast", false, toolsListBody, "identity"},
		{"sdk", true, toolsListBody, "identity"},
		{"fast-params", false, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, "identity"},
		{"fast-gzip", false, toolsListBody, "gzip"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			srv := serve(b, Options{Tools: tools, DisableFastPath: tt.disable})
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
			b.ReportAllocs()
			for b.Loop() {
				req := mcpRequest(srv.URL+"/mcp", tt.body)
				req.Header.Set("Accept-Encoding", tt.encoding)
				drain(b, c, req)
			}
		})
	}
}

// BenchmarkToolsCallOAuth is BenchmarkToolsCall on the OAuth MCP endpoint
// with an access token (memory store, token cache on): the difference to
// BenchmarkToolsCall is what resolving the token costs per call.
func BenchmarkToolsCallOAuth(b *testing.B) {
	up := benchUpstream(b)
	base := serveOAuth(b, &revocableKeys{revoked: map[string]bool{}}, up.URL, "testdata/c23.yaml", nil)
	_, h := connectOAuth(b, base, "k-123")
	ts, err := h.TokenSource(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, base+"/oauth/mcp", "Authorization", "Bearer "+tok.AccessToken)
}

// BenchmarkSessionMemory reports what a live session and an open session
// stream cost this process ("B/session": the memory store's entry, the
// session cap's and the ids; "B/stream": the server's side of one GET
// stream, its goroutine and buffers, with the in-process client's share of
// the connection, so an upper bound).
func BenchmarkSessionMemory(b *testing.B) {
	up := benchUpstream(b)
	srv := serve(b, Options{Tools: loadTools(b, "testdata/c23.yaml", up.URL), Sessions: session.NewMemoryStore(nil), MaxSessions: -1, MaxSessionsPerAddress: -1, MaxStreamsPerSession: -1,
		SessionStreamLifetime: time.Hour})
	c := benchClient()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 2000
	before := heap()
	ids := make([]string, n)
	for i := range n {
		req := mcpRequest(srv.URL+"/mcp", initializeBody)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ids[i] = resp.Header.Get("Mcp-Session-Id")
	}
	perSession := float64(heap()-before) / n
	const streams = 200
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before = heap()
	sc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: streams}}
	var open []*http.Response
	for i := range streams {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", ids[i])
		req.Header.Set("Accept", "text/event-stream")
		resp, err := sc.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("stream %d: %v %v", i, resp, err)
		}
		open = append(open, resp)
	}
	perStream := float64(heap()-before) / streams
	for range b.N {
	}
	b.ReportMetric(perSession, "B/session")
	b.ReportMetric(perStream, "B/stream")
	for _, r := range open {
		r.Body.Close()
	}
}

// BenchmarkBigAnswer is one tools/call whose upstream answers a JSON
// object of 1 or 10 MB, through the fast path: the cost per megabyte of
// reading the body, making the text content and structuredContent and
// encoding the response (b.SetBytes: MB/s is the upstream body's).
func BenchmarkBigAnswer(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		body := benchdata.Answer(size)
		b.Run(strconv.Itoa(size>>20)+"MB", func(b *testing.B) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				_, _ = w.Write(body)
			}))
			b.Cleanup(up.Close)
			srv := serve(b, Options{Tools: loadTools(b, "testdata/c23.yaml", up.URL), Meter: allowAll(0), MaxResponseBytes: 64 << 20})
			b.SetBytes(int64(len(body)))
			benchCalls(b, srv.URL+"/mcp", "X-API-Key", "k-123")
		})
	}
}

// BenchmarkToolsCallIdP is BenchmarkToolsCall with the caller's identity
// an access token of the vendor's identity provider (RS256, checked
// against the cached JWKS on every call) instead of an API key, the
// upstream credential forwarded: the difference is the token validation's
// cost per call.
func BenchmarkToolsCallIdP(b *testing.B) {
	up := benchUpstream(b)
	p := idptest.New(b)
	v, err := idp.New(context.Background(), idp.Config{Issuer: p.URL, Audience: idpResource, Upstream: idp.UpstreamForward})
	if err != nil {
		b.Fatal(err)
	}
	srv := serve(b, Options{Tools: loadTools(b, "testdata/c23.yaml", up.URL), Meter: allowAll(0), IdP: v, IdPResource: idpResource, IdPIssuer: p.URL})
	tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: "bench", Audience: []string{idpResource}, Expiry: time.Now().Add(time.Hour)})
	benchCalls(b, srv.URL+"/mcp", "Authorization", "Bearer "+tok)
	if v.Fetches() != 1 {
		b.Fatalf("%d JWKS fetches, want the one at start", v.Fetches())
	}
}
