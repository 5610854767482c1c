package adapter

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/benchdata"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// TestFastPathMatchesSDK is the fast path's conformance test: every request
// goes to a server with the fast path and to one without it (the go-sdk's
// own handler), and the two answers must be identical: status, headers
// (but Date and X-Request-Id) and body, byte for byte. It covers the
// methods the fast path answers, each protocol revision (the fast path takes
// the pre-2026 ones; 2026-07-28 and unknown revisions must fall through to
// the SDK) and both response modes.
func TestFastPathMatchesSDK(t *testing.T) {
	up := newPlanUpstream(t)
	tools := loadTools(t, "testdata/plans_api.yaml", up.URL)
	newSrv := func(disable bool) (*Server, *httptest.Server) {
		s, err := New(Options{Tools: tools, Keys: planKeys(), Meter: &fakeMeter{admit: allowedDecision}, DisableFastPath: disable, ListByPlan: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, serveHandler(t, s)
	}
	fastServer, fast := newSrv(false)
	sdkServer, sdk := newSrv(true)

	bodies := map[string]string{
		"tools/list":             `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"tools/list null":        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
		"tools/list cursor":      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}`,
		"tools/list {}":          `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		"tools/list cursor \"\"": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":""}}`,
		"tools/list cursor null": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null,"_meta":{"progressToken":1}}}`,
		"tools/list _meta":       `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}`,
		"tools/list new wire":    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		// The 2026-07-28 _meta whole, with the Mcp-Method header (headers
		// below): the fast path answers it on that revision.
		"tools/list new wire full":     `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"progressToken":"p"}}}`,
		"tools/list new wire no info":  `{"jsonrpc":"2.0","id":"s","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		"tools/list new wire with key": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		// Left to the SDK: capabilities not an object, client info not an
		// Implementation, a repeated member, a cursor, another version.
		"tools/list new wire bad caps":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`,
		"tools/list new wire caps type": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":5}}}}`,
		"tools/list new wire caps null": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`,
		"tools/list new wire info null": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"tools/list new wire bad info":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":5},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"tools/list new wire repeated":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"tools/list new wire cursor":    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"tools/list new wire old meta":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"call ok":                       `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
		"call string id":                `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"A<B>&C"}}}`,
		"call big id":                   `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
		"call no arguments":             `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_stats"}}`,
		"call upstream 500":             `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"always_fails","arguments":{}}}`,
		"call invalid args":             `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":5}}}`,
		"call unknown tool":             `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		"call progress token":           `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"},"_meta":{"progressToken":"p1"}}}`,
		"call not in plan":              `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"etfs_top_holdings","arguments":{"symbol":"SPY"}}}`,
		"call extra params":             `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"},"requestState":"s"}}`,
		"ping (never fast)":             `{"jsonrpc":"2.0","id":10,"method":"ping"}`,
		"initialize (never)":            `{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		"call arguments null":           `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"admin_stats","arguments":null}}`,
		"call arguments array":          `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"admin_stats","arguments":[1]}}`,
		"call escaped name":             `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get\u005fquote","arguments":{"symbol":"AAPL"}}}`,
		"notification (never)":          `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"tools/list with key":           `{"jsonrpc":"2.0","id":15,"method":"tools/list"}`,
		"call text/plain (415)":         `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
	}
	revisions := []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2099-01-01"}
	keys := map[string]string{"tools/list with key": "k-pro", "tools/list unknown key": "k-unknown", "tools/list no key": ""}
	bodies["tools/list unknown key"] = bodies["tools/list"]
	bodies["tools/list no key"] = bodies["tools/list"]
	accepts := []string{"application/json, text/event-stream", "application/json", "text/event-stream"}
	n := 0
	for name, body := range bodies {
		for _, rev := range revisions {
			for _, accept := range accepts {
				h := map[string]string{"X-API-Key": "k-free", "Accept": accept, "MCP-Protocol-Version": rev}
				if k, ok := keys[name]; ok {
					h["X-API-Key"] = k
				}
				if strings.HasPrefix(name, "tools/list new wire ") {
					h["Mcp-Method"] = "tools/list"
				}
				if name == "tools/list new wire with key" {
					h["X-API-Key"] = "k-pro"
				}
				if name == "call text/plain (415)" {
					h["Content-Type"] = "text/plain"
				}
				got, want := post(t, fast.URL+"/mcp", body, h), post(t, sdk.URL+"/mcp", body, h)
				for _, r := range []*rpcResponse{&got, &want} {
					r.header.Del("Date")
					r.header.Del("X-Request-Id")
					// Server-Timing's durations differ by run: its shape is
					// checked, then it is compared as present or not.
					if st := r.header.Get("Server-Timing"); st != "" {
						if !serverTimingRE.MatchString(st) {
							t.Errorf("Server-Timing %q", st)
						}
						r.header.Set("Server-Timing", "meter;dur=M, upstream;dur=U, total;dur=T")
					}
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(rpcResponse{})); diff != "" {
					t.Errorf("%s, revision %q, Accept %q (-sdk +fast):\n%s", name, rev, accept, diff)
				}
				n++
			}
		}
	}
	if want := len(bodies) * len(revisions) * len(accepts); n != want {
		t.Fatalf("%d exchanges compared, want %d", n, want)
	}
	// The fast path took every tools/call and plain tools/list on the five
	// pre-2026 revisions (none, 2024-11-05 … 2025-11-25) in the three modes,
	// but the 415; the SDK answered the rest.
	// And the three whole 2026-07-28 tools/list on that revision.
	fastBodies := 0
	for name := range bodies {
		if strings.HasPrefix(name, "call ") && name != "call text/plain (415)" || strings.HasPrefix(name, "tools/list") && name != "tools/list cursor" && !strings.HasPrefix(name, "tools/list new wire") {
			fastBodies++
		}
	}
	if got, want := fastServer.fastServed.Load(), int64(fastBodies*5*len(accepts)+3*len(accepts)); got != want {
		t.Errorf("fast path answered %d requests, want %d", got, want)
	}
	if got := sdkServer.fastServed.Load(); got != 0 {
		t.Errorf("with DisableFastPath the fast path answered %d requests", got)
	}
}

// TestModernToolsCallResult: on the 2026-07-28 wire a tools/call result
// carries "resultType": "complete" and the server's identity in _meta,
// where the go-sdk's own encoding puts them; the SDK's handler, answering
// through restmcp's receiving middleware, leaves resultType out, which
// 2026-07-28 clients refuse ("missing required resultType").
func TestModernToolsCallResult(t *testing.T) {
	up := newPlanUpstream(t)
	tools := loadTools(t, "testdata/plans_api.yaml", up.URL)
	fast := serve(t, Options{Tools: tools})
	sdk := serve(t, Options{Tools: tools, DisableFastPath: true})
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	const info = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"restmcp","version":"dev"}}`
	tests := []struct {
		name, tool, args, want string
	}{
		{"ok", "get_quote", `{"symbol":"AAPL"}`,
			`{"jsonrpc":"2.0","id":1,"result":{` + info + `,"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true},"resultType":"complete"}}`},
		{"upstream 500", "always_fails", `{}`,
			`{"jsonrpc":"2.0","id":1,"result":{` + info + `,"content":[{"type":"text","text":"HTTP 500 Internal Server Error\n{\"error\":\"boom\"}"}],"isError":true,"resultType":"complete"}}`},
		{"invalid arguments", "get_quote", `{"symbol":5}`,
			`{"jsonrpc":"2.0","id":1,"result":{` + info + `,"content":[{"type":"text","text":"invalid arguments: symbol: has type integer, want string"}],"isError":true,"resultType":"complete"}}`},
	}
	for _, tt := range tests {
		for _, accept := range []string{"application/json", "text/event-stream"} {
			h := map[string]string{"X-API-Key": "k-1", "Accept": accept, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tt.tool}
			want := tt.want
			if accept == "text/event-stream" {
				want = "event: message\ndata: " + want + "\n\n"
			}
			if got := post(t, fast.URL+"/mcp", call(tt.tool, tt.args), h); got.status != 200 || got.body != want {
				t.Errorf("%s (%s) = %d %s\nwant 200 %s", tt.name, accept, got.status, got.body, want)
			}
			if got := post(t, sdk.URL+"/mcp", call(tt.tool, tt.args), h); got.body != strings.Replace(want, `,"resultType":"complete"`, "", 1) {
				t.Errorf("%s (%s) through the SDK = %s; the SDK's answer is expected to lack only resultType", tt.name, accept, got.body)
			}
		}
	}
}

// FuzzFastPathMatchesSDK sends any body (seeded with the conformance
// requests) to a server with the fast path and to one without, and fails
// when their answers differ in status or body: the fast path may only
// answer what it answers exactly as the SDK does. Both servers refuse
// 2026-07-28 requests' missing headers alike, so the fuzzed bodies go
// without protocol headers.
func FuzzFastPathMatchesSDK(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add([]byte(s), "application/json")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`), "text/event-stream")
	up := newPlanUpstream(f)
	tools := loadTools(f, "testdata/plans_api.yaml", up.URL)
	mk := func(disable bool) http.Handler {
		s, err := New(Options{Tools: tools, Keys: planKeys(), Meter: &fakeMeter{admit: allowedDecision}, DisableFastPath: disable, ListByPlan: true})
		if err != nil {
			f.Fatal(err)
		}
		return s.Handler()
	}
	fast, sdk := mk(false), mk(true)
	f.Fuzz(func(t *testing.T, body []byte, accept string) {
		do := func(h http.Handler) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			req.Header.Set("X-API-Key", "k-free")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		got, want := do(fast), do(sdk)
		if got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Fatalf("body %q, Accept %q:\nfast %d %q\n sdk %d %q", body, accept, got.Code, got.Body.String(), want.Code, want.Body.String())
		}
	})
}

// serverTimingRE is the Server-Timing restmcp sends on tools/call.
var serverTimingRE = regexp.MustCompile(`^meter;dur=\d+\.\d{3}, upstream;dur=\d+\.\d{3}, total;dur=\d+\.\d{3}$`)

// TestAppendToolResult: appendToolResult gives json.Marshal's bytes (the
// SDK's CallToolResult.MarshalJSON) for the results restmcp builds and for
// those it hands to json.Marshal.
func TestAppendToolResult(t *testing.T) {
	impl := &mcp.Implementation{Name: "restmcp", Version: "1.2.3"}
	for _, res := range []*mcp.CallToolResult{
		{Content: []mcp.Content{}},
		{},
		{Content: []mcp.Content{&mcp.TextContent{Text: "<b>&\u2028\x01"}}, IsError: true},
		{Content: []mcp.Content{&mcp.TextContent{Text: `{"a":1}`}, &mcp.TextContent{}}, StructuredContent: map[string]any{"z": json.Number("1.50"), "a": []any{"<", nil, true}}},
		{Meta: mcp.Meta{metaKeyServerInfo: impl, "timing": map[string]any{"upstream_ms": 1.25}}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(` {"q": "&"} `)},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any(nil)},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, RequestState: "s"},
	} {
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendToolResult(nil, res)
		if err != nil || string(got) != string(want) {
			t.Errorf("appendToolResult = %s, %v\nwant %s", got, err, want)
		}
	}
}

// TestWriteLarge: a large result written as it is encoded gives the bytes
// appendToolResult gives (json.Marshal's, the SDK's), with text pieces cut
// next to multi-byte runes, invalid UTF-8, U+2028 and escapes, several
// contents, _meta, isError, compact structuredContent (nil too) and the
// 2026-07-28 suffix.
func TestWriteLarge(t *testing.T) {
	edge := func(tail string) string { return strings.Repeat("a", writeChunkBytes-1) + tail }
	texts := []string{
		edge("é" + strings.Repeat("<\"\n", 5000)),
		edge("\xe2\x80" + "\xa8x"), // an invalid sequence across the cut
		edge("\u2028" + strings.Repeat("日本", 20000)),
		edge("\xff\xfe"),
		strings.Repeat("\U0001F600", writeChunkBytes), // 4-byte runes, the cut moved off their middle
		"",
	}
	// No <, > or & in it: json.Marshal escapes them in what MarshalJSON
	// returns, and the fast path writes a Compact as it is
	// (TestCompactEncodesAsItself).
	sc, err := jsonvalue.AppendCompact(nil, []byte(` {"b": "x\"y\u00e9", "a": [1, 2]} `))
	if err != nil {
		t.Fatal(err)
	}
	impl := &mcp.Implementation{Name: "restmcp", Version: "1.2.3"}
	for i, text := range texts {
		for _, res := range []*mcp.CallToolResult{
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}},
			{Content: []mcp.Content{&mcp.TextContent{Text: "note"}, &mcp.TextContent{Text: text}}, StructuredContent: jsonvalue.Compact(sc)},
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: jsonvalue.Compact(""), IsError: true},
			{Meta: mcp.Meta{metaKeyServerInfo: impl}, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: jsonvalue.Compact(sc)},
		} {
			if !streamable(res) {
				t.Fatalf("text %d: not streamable", i)
			}
			want, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if app, _ := appendToolResult(nil, res); !bytes.Equal(app, want) {
				t.Fatalf("text %d: appendToolResult differs from json.Marshal", i)
			}
			for _, modern := range []bool{false, true} {
				e := &resultEncoder{}
				if err := e.open(res); err != nil {
					t.Fatal(err)
				}
				l := &largeResult{enc: e, res: res, modern: modern}
				var got countingWriter
				writeLarge(&got, l)
				// Few large writes: a large []byte goes out at once on a
				// chunked answer, where net/http's response cuts a string
				// (WriteString) into a chunk per 2 KiB.
				if most := got.Len()/(writeChunkBytes/2) + 3; got.writes > most || got.strings > 0 {
					t.Fatalf("text %d, modern %v: %d writes of %d bytes and %d WriteString calls; want at most %d writes", i, modern, got.writes, got.Len(), got.strings, most)
				}
				w := want
				if modern {
					w = append(want[:len(want)-1:len(want)-1], `,"resultType":"complete"}`...)
				}
				if !bytes.Equal(got.Bytes(), w) {
					g, ww := got.String(), string(w)
					at := 0
					for at < min(len(g), len(ww)) && g[at] == ww[at] {
						at++
					}
					t.Fatalf("text %d, modern %v: writeLarge differs at byte %d of %d:\n got …%q\nwant …%q", i, modern, at, len(ww), g[at:min(at+40, len(g))], ww[at:min(at+40, len(ww))])
				}
			}
		}
	}
	for _, res := range []*mcp.CallToolResult{
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"a": 1}},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, RequestState: "s"},
	} {
		if streamable(res) {
			t.Errorf("streamable(%+v) = true; writeLarge cannot encode it", res)
		}
	}
}

// countingWriter is a bytes.Buffer that counts the calls it gets.
type countingWriter struct {
	bytes.Buffer
	writes, strings int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }
func (w *countingWriter) WriteString(s string) (int, error) {
	w.strings++
	return w.Buffer.WriteString(s)
}

// TestLargeAnswerMatchesSDK: a tools/call whose upstream answers a 1 MB
// JSON object is answered by the fast path (written as it is encoded) with
// the go-sdk handler's status and headers, in JSON and in SSE form. The
// text content is the upstream's body in both; the structuredContent is
// the upstream's compact object as sent, which the go-sdk's json.Marshal
// writes with <, > and & escaped (the same value).
func TestLargeAnswerMatchesSDK(t *testing.T) {
	body := benchdata.Answer(1 << 20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(up.Close)
	newSrv := func(disable bool) (*Server, *httptest.Server) {
		s, err := New(Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Meter: allowAll(0), MaxResponseBytes: 2 << 20, DisableFastPath: disable})
		if err != nil {
			t.Fatal(err)
		}
		return s, serveHandler(t, s)
	}
	fastServer, fast := newSrv(false)
	_, sdk := newSrv(true)
	call := toolsCallBody(1, "get_pet", `{"petId":"p1"}`)
	text, _ := json.Marshal(string(body))
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, body)
	for _, accept := range []string{"application/json", "text/event-stream"} {
		h := map[string]string{"X-API-Key": "k-123", "Accept": accept, "MCP-Protocol-Version": "2025-11-25"}
		got, sdkGot := post(t, fast.URL+"/mcp", call, h), post(t, sdk.URL+"/mcp", call, h)
		for _, c := range []struct {
			name string
			r    *rpcResponse
			sc   []byte
		}{{"fast path", &got, body}, {"go-sdk", &sdkGot, escaped.Bytes()}} {
			want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + string(c.sc) + `}}`
			if accept == "text/event-stream" {
				want = "event: message\ndata: " + want + "\n\n"
			}
			if c.r.body != want {
				t.Fatalf("Accept %s, %s: the answer is not the upstream's text and object (%d bytes, want %d)", accept, c.name, len(c.r.body), len(want))
			}
			for _, k := range []string{"Date", "X-Request-Id", "Server-Timing"} {
				c.r.header.Del(k)
			}
		}
		if diff := cmp.Diff(sdkGot.header, got.header); diff != "" || got.status != sdkGot.status {
			t.Fatalf("Accept %s: status %d, go-sdk's %d; headers (-sdk +fast):\n%s", accept, got.status, sdkGot.status, diff)
		}
	}
	if got := fastServer.fastServed.Load(); got != 2 {
		t.Fatalf("fast path answered %d calls, want 2", got)
	}
}

// TestPooledBuffersCarryNothingOver: fast-path calls reuse the buffers an
// earlier call read, compacted and wrote its answer through; a shorter
// answer after a longer one, and a non-JSON one after JSON, come back
// exactly as the upstream sent them, with nothing of the earlier answer.
func TestPooledBuffersCarryNothingOver(t *testing.T) {
	bodies := map[string][]byte{
		"long":  benchdata.Answer(400 << 10), // the body, compact and chunk buffers of all three share a 512 KiB pool
		"short": benchdata.Answer(280 << 10),
		"text":  []byte(strings.Repeat("plain text, not JSON; ", 14000)),
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		if name == "text" {
			w.Header().Set("Content-Type", "text/plain")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(bodies[name])
	}))
	t.Cleanup(up.Close)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Meter: allowAll(0), MaxResponseBytes: 1 << 20})
	for _, name := range []string{"long", "short", "long", "text", "short", "text"} {
		got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"`+name+`"}`), map[string]string{"X-API-Key": "k-123", "Accept": "application/json"})
		text, _ := json.Marshal(string(bodies[name]))
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":`
		if name == "text" { // get_pet lists an outputSchema: R8b's note and {}
			want = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"the upstream's 2xx response is not a JSON object, so structuredContent is empty; the response follows."},{"type":"text","text":` + string(text) + `}],"structuredContent":{}}}`
		} else {
			compact, _ := jsonvalue.AppendCompact(nil, bodies[name])
			want += string(compact) + `}}`
		}
		if got.body != want {
			t.Fatalf("%s: the answer differs from the upstream's (%d bytes, want %d): %.300s", name, len(got.body), len(want), got.body)
		}
	}
}

// TestFastPathContentLength: a fast-path answer in JSON mode carries its
// exact Content-Length, where net/http would chunk a body over 2 KB (the
// client then reads a fixed length); an SSE answer is a stream (chunked),
// as the go-sdk's.
func TestFastPathContentLength(t *testing.T) {
	pet := `{"id":"p1","notes":"` + strings.Repeat("n", 3000) + `"}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(pet))
	}))
	defer up.Close()
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Meter: allowAll(0)})
	text, _ := json.Marshal(pet)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + pet + `}}`
	for _, c := range []struct {
		accept, body string
		length       int64
		chunked      bool
	}{
		{"application/json, text/event-stream", want, int64(len(want)), false},
		{"application/json", want, int64(len(want)), false},
		{"text/event-stream", "event: message\ndata: " + want + "\n\n", -1, true},
	} {
		req := mcpRequest(srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"p1"}`))
		req.Header.Set("Accept", c.accept)
		req.Header.Set("X-API-Key", "k-123")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
		if string(b) != c.body || resp.ContentLength != c.length || chunked != c.chunked {
			t.Errorf("Accept %q: Content-Length %d, chunked %v, body:\n%s\nwant Content-Length %d, chunked %v, body:\n%s",
				c.accept, resp.ContentLength, chunked, b, c.length, c.chunked, c.body)
		}
	}
}
