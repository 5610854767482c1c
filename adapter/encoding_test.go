package adapter

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// TestR9ContentEncodings: restmcp asks only for the codings it decodes, and
// decodes each of them (gzip, zlib and raw deflate, br, zstd, two codings
// stacked) into the same result; a coding it does not decode comes back as
// a binary blob, never as garbled text.
func TestR9ContentEncodings(t *testing.T) {
	const payload = `{"id":"p1","name":"Rex"}`
	encode := map[string]func(io.Writer) io.WriteCloser{
		"gzip":    func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
		"deflate": func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) },
		"raw-deflate": func(w io.Writer) io.WriteCloser {
			fw, _ := flate.NewWriter(w, flate.DefaultCompression)
			return fw
		},
		"br": func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) },
		"zstd": func(w io.Writer) io.WriteCloser {
			zw, _ := zstd.NewWriter(w)
			return zw
		},
	}
	compress := func(coding string, data []byte) []byte {
		var b bytes.Buffer
		w := encode[coding](&b)
		_, _ = w.Write(data)
		_ = w.Close()
		return b.Bytes()
	}
	var gotAE []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		gotAE = append(gotAE, r.Header.Get("Accept-Encoding"))
		coding := strings.TrimPrefix(r.URL.Path, "/v1/pets/")
		w.Header().Set("Content-Type", "application/json")
		body := []byte(payload)
		switch coding {
		case "identity":
			w.Header().Set("Content-Encoding", "identity")
		case "stacked":
			body = compress("br", compress("gzip", body))
			w.Header().Set("Content-Encoding", "gzip, br")
		case "compress":
			w.Header().Set("Content-Encoding", "compress")
			body = []byte("\x1f\x9d\x90{")
		default:
			body = compress(coding, body)
			w.Header().Set("Content-Encoding", strings.TrimPrefix(coding, "raw-"))
		}
		_, _ = w.Write(body)
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), AllowAnonymous: true})
	decoded := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"id\":\"p1\",\"name\":\"Rex\"}"}],"structuredContent":{"id":"p1","name":"Rex"}}}`
	for _, coding := range []string{"identity", "gzip", "deflate", "raw-deflate", "br", "zstd", "stacked"} {
		got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"`+coding+`"}`), nil)
		if got.body != decoded {
			t.Errorf("%s: %s\nwant %s", coding, got.body, decoded)
		}
	}
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"compress"}`), nil)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"resource","resource":{"uri":"` + up.URL + `/v1/pets/compress","mimeType":"application/octet-stream","blob":"H52Qew=="}}],"structuredContent":{}}}`
	if got.body != want {
		t.Errorf("unknown coding: %s\nwant %s", got.body, want)
	}
	wantAE := make([]string, 8)
	for i := range wantAE {
		wantAE[i] = "gzip, deflate, br, zstd"
	}
	if diff := cmp.Diff(wantAE, gotAE); diff != "" {
		t.Errorf("Accept-Encoding upstream (-want +got):\n%s", diff)
	}
}

// TestR9DecompressionBomb: a small compressed body that expands to 64 MiB
// is read only up to the text cap, like any body (R5).
func TestR9DecompressionBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 64 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), AllowAnonymous: true, MaxResponseBytes: 1000})
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_pet", `{"petId":"x"}`), nil)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"\"` +
		strings.Repeat("a", 999) + `\n[truncated: showing 1000 of more than 1000 bytes]"}],"structuredContent":{}}}`
	if got.body != want {
		t.Errorf("bomb (%d compressed bytes): %d-byte answer %.200s…\nwant %.200s…", bomb.Len(), len(got.body), got.body, want)
	}
}
