package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestToolsListGzip: restmcp serve on GitHub's REST document answers a
// tools/list from a client that accepts gzip with the list compressed
// (Content-Encoding gzip, Vary, its exact Content-Length), which decodes to
// exactly the answer a client that accepts only identity gets, for any
// JSON-RPC id, for a plan's list and on the 2026-07-28 wire, and answers
// identity where gzip is refused, to an event stream, and for a list under
// 16 KiB (the demo's).
func TestToolsListGzip(t *testing.T) {
	spec := corpustest.Path(t, "github-rest-v1.1.3")
	mcpURL := startRun(t, map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_UPSTREAM": "http://127.0.0.1:9"})
	demoURL := startDefault(t)
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}} // the bytes as sent

	plans := filepath.Join(t.TempDir(), "plans.yaml")
	if err := os.WriteFile(plans, []byte("default_plan: repos\nkey_mode: open\nplans:\n  repos:\n    tools: [\"repos_*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planURL := startRun(t, map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_UPSTREAM": "http://127.0.0.1:9", "RESTMCP_PLANS_FILE": plans, "RESTMCP_LIST_BY_PLAN": "true"})
	key, modern := "", false
	post := func(url, id, accept, acceptEncoding string) (*http.Response, []byte) {
		t.Helper()
		reqBody := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`
		if modern { // as a 2026-07-28 client sends it (the TypeScript SDK 2.x)
			reqBody = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		}
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		if modern {
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/list")
		}
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tools/list id %.40s: status %d: %.300s", id, resp.StatusCode, body)
		}
		return resp, body
	}
	const both = "application/json, text/event-stream"

	listRest := 0
	longID := strconv.Quote(strings.Repeat("é", 40_000)) // 80 KB: two stored blocks
	for _, id := range []string{"7", `"a-string-id"`, `"with \"escapes\" \u00e9"`, "123456789012345678901234567890", longID} {
		_, plain := post(mcpURL, id, both, "identity")
		wantHead := `{"jsonrpc":"2.0","id":` + id + `,"result":{"ttlMs":0,"cacheScope":"public","tools":[{`
		if !bytes.HasPrefix(plain, []byte(wantHead)) {
			t.Fatalf("id %.40s: the identity answer begins %.200s", id, plain)
		}
		if n := bytes.Count(plain, []byte(`"inputSchema":`)); n != 692 {
			t.Fatalf("id %.40s: the identity answer lists %d tools", id, n)
		}
		resp, zipped := post(mcpURL, id, both, "gzip, deflate")
		h := resp.Header
		if h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" || h.Get("Content-Type") != "application/json" ||
			h.Get("Content-Length") != strconv.Itoa(len(zipped)) || h.Get("Cache-Control") != "no-cache, no-transform" {
			t.Errorf("id %.40s: gzip answer headers %v, %d bytes", id, h, len(zipped))
		}
		if got := gunzip(t, zipped); !bytes.Equal(got, plain) {
			t.Errorf("id %.40s: the gzip answer decodes to %d bytes that differ from the identity answer's %d", id, len(got), len(plain))
		}
		// The compressed list, header and trailer are the same bytes for
		// every id: only the envelope's stored blocks differ.
		headLen := len(`{"jsonrpc":"2.0","id":` + id + `,"result":`)
		rest := len(zipped) - headLen - 5*((headLen+0xfffe)/0xffff)
		if listRest == 0 {
			listRest = rest
		}
		if rest != listRest || rest*7 > len(plain) {
			t.Errorf("id %.40s: %d bytes in gzip for %d, %d besides the envelope (the first id's: %d)", id, len(zipped), len(plain), rest, listRest)
		}
		t.Logf("id of %d bytes: %d bytes as gzip, %d as identity", len(id), len(zipped), len(plain))
	}

	// A plan's list (list_by_plan), compressed on its own: the plan's
	// repos_* tools and the job_status tool of operations that answer 202.
	key = "k-plan"
	_, plain := post(planURL, "3", both, "identity")
	resp, zipped := post(planURL, "3", both, "gzip")
	n := bytes.Count(plain, []byte(`"inputSchema":`))
	if !bytes.HasPrefix(plain, []byte(`{"jsonrpc":"2.0","id":3,"result":{"ttlMs":0,"cacheScope":"private","tools":[{`)) || n < 100 || n >= 692 ||
		bytes.Count(plain, []byte(`"name":"repos_`))+bytes.Count(plain, []byte(`"name":"job_status"`)) != n {
		t.Errorf("the plan's list: %d tools, begins %.200s", n, plain)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, zipped), plain) {
		t.Errorf("the plan's list in gzip: Content-Encoding %q, it decodes to the identity answer: %v", resp.Header.Get("Content-Encoding"), bytes.Equal(gunzip(t, zipped), plain))
	}
	_, whole := post(mcpURL, "3", both, "identity") // the same key on the server without plans
	if len(whole) <= len(plain) {
		t.Errorf("the plan's list (%d bytes) is not smaller than the whole (%d)", len(plain), len(whole))
	}
	key = ""

	// The 2026-07-28 wire: the same list after resultType and the server's
	// identity, in gzip too.
	modern = true
	_, plainModern := post(mcpURL, "9", both, "identity")
	resp, zipped = post(mcpURL, "9", both, "gzip")
	modern = false
	_, plainOld := post(mcpURL, "9", both, "identity")
	head := `{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"restmcp","version":"`
	rest, ok := bytes.CutPrefix(plainModern, []byte(head))
	if _, after, found := bytes.Cut(rest, []byte(`"}},`)); !ok || !found || !bytes.Equal(after, plainOld[len(`{"jsonrpc":"2.0","id":9,"result":{`):]) {
		t.Errorf("the 2026-07-28 list is not the list after resultType and serverInfo: it begins %.300s", plainModern)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, zipped), plainModern) {
		t.Errorf("the 2026-07-28 list in gzip: Content-Encoding %q, it decodes to the identity answer: %v", resp.Header.Get("Content-Encoding"), bytes.Equal(gunzip(t, zipped), plainModern))
	}

	for _, tt := range []struct{ name, url, accept, acceptEncoding string }{
		{"gzip refused", mcpURL, both, "gzip;q=0, br"},
		{"no Accept-Encoding", mcpURL, both, ""},
		{"an event stream", mcpURL, "text/event-stream", "gzip"},
		{"the demo's small list", demoURL, both, "gzip"},
	} {
		resp, body := post(tt.url, "1", tt.accept, tt.acceptEncoding)
		if ce := resp.Header.Get("Content-Encoding"); ce != "" || resp.Header.Get("Vary") != "" {
			t.Errorf("%s: Content-Encoding %q, Vary %q", tt.name, ce, resp.Header.Get("Vary"))
		}
		if !bytes.Contains(body, []byte(`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public","tools":[{`)) {
			t.Errorf("%s: the answer is not the list: %.200s", tt.name, body)
		}
	}
}

// gunzip decodes one gzip member, whole: compress/gzip checks its CRC-32
// and size.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decoding the gzip answer: %v", err)
	}
	return out
}
