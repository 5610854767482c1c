package adapter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestDownloadLinks: with BinaryLinkBytes, a GET's 20 MB binary answer is a
// resource_link; resources/read of it by the same caller calls the
// operation again (admitted and metered) and returns the bytes exactly;
// another caller, or a changed token, gets -32002; an answer without a
// Content-Length is linked without a size.
func TestDownloadLinks(t *testing.T) {
	big := make([]byte, 20<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		switch r.URL.Path {
		case "/v1/files/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
		case "/v1/files/chunked":
			for range 4 {
				_, _ = w.Write(big[:512<<10])
				w.(http.Flusher).Flush()
			}
		case "/v1/files/small":
			_, _ = w.Write([]byte("%PDF-1.7"))
		}
	})
	meter := allowAll(0)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/files.yaml", up.URL), Meter: meter, BinaryLinkBytes: 1 << 20})
	key := map[string]string{"X-API-Key": "k-1"}
	result := func(got rpcResponse) map[string]any {
		t.Helper()
		var m struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(got.body), &m); err != nil || m.Result == nil {
			t.Fatalf("%d %.300s", got.status, got.body)
		}
		return m.Result
	}

	init := post(t, srv.URL+"/mcp", initializeBody, nil)
	if !strings.Contains(init.body, `"resources":{}`) {
		t.Errorf("initialize does not advertise resources: %s", init.body)
	}
	// A small answer is inline as before.
	res := result(post(t, srv.URL+"/mcp", toolsCallBody(1, "get_file", `{"id":"small"}`), key))
	if c := res["content"].([]any)[0].(map[string]any); c["type"] != "resource" {
		t.Errorf("small answer: %v", res)
	}

	res = result(post(t, srv.URL+"/mcp", toolsCallBody(2, "get_file", `{"id":"big"}`), key))
	content := res["content"].([]any)
	if len(content) != 2 {
		t.Fatalf("big answer: %v", res)
	}
	text := content[0].(map[string]any)["text"]
	if text != "The answer is a file (application/pdf, 20971520 bytes), too large to return inline: read it with resources/read of the linked URI within 10 minutes (the read is metered as a call of get_file)." {
		t.Errorf("text %q", text)
	}
	rl := content[1].(map[string]any)
	uri, _ := rl["uri"].(string)
	if rl["type"] != "resource_link" || !strings.HasPrefix(uri, "restmcp://download/") || rl["name"] != "get_file answer" ||
		rl["mimeType"] != "application/pdf" || rl["size"] != float64(20<<20) {
		t.Errorf("resource_link %v", rl)
	}
	read := func(id int, uri string, hdr map[string]string) rpcResponse {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": map[string]string{"uri": uri}})
		return post(t, srv.URL+"/mcp", string(b), hdr)
	}
	got := read(3, uri, key)
	var rr struct {
		Result struct {
			Contents []struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Blob     string `json:"blob"`
			} `json:"contents"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got.body), &rr); err != nil || len(rr.Result.Contents) != 1 {
		t.Fatalf("resources/read: %d %.300s", got.status, got.body)
	}
	c := rr.Result.Contents[0]
	data, err := base64.StdEncoding.DecodeString(c.Blob)
	if err != nil || !bytes.Equal(data, big) || c.URI != uri || c.MIMEType != "application/pdf" {
		t.Errorf("read back %d bytes (equal %v), uri %v, type %s, %v", len(data), bytes.Equal(data, big), c.URI == uri, c.MIMEType, err)
	}
	if n := meter.calls.Load(); n != 3 {
		t.Errorf("%d calls metered, want 3 (small, big, the read)", n)
	}

	// Another caller, and a changed token: not found, nothing sent.
	before := len(up.take())
	notFound := `{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"resource ` + uri[:57] + `…: not a download link of this caller, or expired; call the tool again for a new link"}}`
	if got := read(4, uri, map[string]string{"X-API-Key": "k-2"}); got.body != notFound {
		t.Errorf("another key: %s", got.body)
	}
	tampered := uri[:len(uri)-2] + "AA"
	if got := read(4, tampered, key); got.body != strings.Replace(notFound, uri[:57], tampered[:57], 1) {
		t.Errorf("changed token: %s", got.body)
	}
	if sent := up.take(); len(sent) != 0 {
		t.Errorf("%d upstream requests for refused reads (before: %d)", len(sent), before)
	}

	// No Content-Length: linked once past the bound, without a size.
	res = result(post(t, srv.URL+"/mcp", toolsCallBody(5, "get_file", `{"id":"chunked"}`), key))
	content = res["content"].([]any)
	if len(content) != 2 || content[1].(map[string]any)["size"] != nil ||
		content[0].(map[string]any)["text"] != "The answer is a file (application/pdf), too large to return inline: read it with resources/read of the linked URI within 10 minutes (the read is metered as a call of get_file)." {
		t.Errorf("chunked: %v", res)
	}
}
