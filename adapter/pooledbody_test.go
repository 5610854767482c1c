package adapter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/benchdata"
)

// TestPooledAnswers: a large 2xx JSON object with a Content-Length is read
// into a pooled buffer and written from it (pooledbody.go), and the answer
// is byte for byte the one mapped from a string (the same body sent
// chunked, which is never pooled): a compact object and one with white
// space (both pooled), an object that does not fit the output schema, an
// array, invalid JSON and a body under 256 KiB (mapped as before), each in
// JSON and SSE and on the 2026-07-28 wire; the output schema is checked
// member by member of every item. The pool's count is exact. Buffers are
// reused from one call to the next: a byte left of an earlier answer
// would show in a later one.
func TestPooledAnswers(t *testing.T) {
	compact := benchdata.Answer(600_000)
	var spaced bytes.Buffer
	if err := json.Indent(&spaced, compact, "", "  "); err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"compact": compact,
		"spaced":  spaced.Bytes(),
		"notfit":  bytes.Replace(compact, []byte(`"total":0`), []byte(`"total":"many"`), 1),
		"array":   append(append([]byte("["), compact...), ']'),
		"invalid": append(bytes.Clone(compact), '}'),
		"small":   benchdata.Answer(100_000),
		"large":   benchdata.Answer(10 << 20),
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		variant, mode, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/answers/"), "-")
		body := bodies[variant]
		w.Header().Set("Content-Type", "application/json")
		if mode == "length" {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
			return
		}
		_, _ = w.Write(body[:100]) // chunked: no Content-Length
		w.(http.Flusher).Flush()
		_, _ = w.Write(body[100:])
	}))
	t.Cleanup(up.Close)
	s, err := New(Options{Tools: loadTools(t, "testdata/pooled.yaml", up.URL), Meter: allowAll(0), MaxResponseBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)

	call := func(variant, accept string, modern bool) string {
		t.Helper()
		h := map[string]string{"X-API-Key": "k-123", "Accept": accept, "MCP-Protocol-Version": "2025-11-25"}
		body := toolsCallBody(7, "get_answer", `{"variant":"`+variant+`"}`)
		if modern {
			h["MCP-Protocol-Version"], h["Mcp-Method"], h["Mcp-Name"] = protocolVersionStandardHeaders, "tools/call", "get_answer"
			body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_answer","arguments":{"variant":"` + variant +
				`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		}
		r := post(t, srv.URL+"/mcp", body, h)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d: %.300s", variant, r.status, r.body)
		}
		return r.body
	}
	pooled := map[string]bool{"compact": true, "spaced": true, "large": true}
	want := int64(0)
	for _, variant := range []string{"compact", "spaced", "notfit", "array", "invalid", "small", "large"} {
		for _, mode := range []struct {
			accept string
			modern bool
		}{{"application/json", false}, {"text/event-stream", false}, {"application/json", true}} {
			before := s.pooledAnswers.Load()
			got, ref := call(variant+"-length", mode.accept, mode.modern), call(variant+"-chunked", mode.accept, mode.modern)
			if got != ref {
				i := 0
				for i < min(len(got), len(ref)) && got[i] == ref[i] {
					i++
				}
				t.Errorf("%s, Accept %s, 2026-07-28 %v: the answer (%d bytes) differs from the one mapped from a string (%d) at byte %d: %.120q / %.120q",
					variant, mode.accept, mode.modern, len(got), len(ref), i, got[max(0, i-40):], ref[max(0, i-40):])
			}
			if pooled[variant] {
				want++
			}
			if n := s.pooledAnswers.Load() - before; n != int64(btoi(pooled[variant])) {
				t.Errorf("%s: %d answers pooled, want %v", variant, n, pooled[variant])
			}
		}
	}
	// The text is the body, escaped as json.Marshal escapes it; the compact
	// object is structuredContent.
	text, _ := json.Marshal(spaced.String())
	wantSpaced := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + string(compact) + `}}`
	if got := call("spaced-length", "application/json", false); got != wantSpaced {
		t.Errorf("the spaced answer: %d bytes, want %d", len(got), len(wantSpaced))
	}
	if got := s.pooledAnswers.Load(); got != want+1 {
		t.Errorf("%d answers pooled in all, want %d", got, want+1)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
