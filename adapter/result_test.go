package adapter

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/openapi"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestMapResponse(t *testing.T) {
	s := &Server{opts: Options{MaxResponseBytes: 10, MaxBinaryBytes: 8}}
	tests := []struct {
		name          string
		status        int
		contentType   string
		header        map[string]string
		body          string
		contentLength int64 // -1 unknown; 0 means len(body)
		want          string
	}{
		{name: "R1 JSON object gets structuredContent", status: 200, contentType: "application/json", body: `{"a":1}`,
			want: `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
		{name: "R1 JSON array is text only", status: 200, contentType: "application/json", body: `[1,2]`,
			want: `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{name: "R1 problem+json object", status: 200, contentType: "application/problem+json", body: `{"t":"x"}`,
			want: `{"content":[{"type":"text","text":"{\"t\":\"x\"}"}],"structuredContent":{"t":"x"}}`},
		{name: "R1 XML verbatim", status: 200, contentType: "application/xml", body: `<a>1</a>`,
			want: `{"content":[{"type":"text","text":"<a>1</a>"}]}`},
		{name: "R1 no Content-Type is text", status: 200, body: `plain`,
			want: `{"content":[{"type":"text","text":"plain"}]}`},
		{name: "R2 200 empty", status: 200, contentType: "application/json", body: ``,
			want: `{"content":[{"type":"text","text":"HTTP 200 OK"}]}`},
		{name: "R2 202 empty", status: 202, body: ``,
			want: `{"content":[{"type":"text","text":"HTTP 202 Accepted"}]}`},
		{name: "R3 unknown status code", status: 599, body: `x`,
			want: `{"content":[{"type":"text","text":"HTTP 599\nx"}],"isError":true}`},
		{name: "R3 503 with Retry-After", status: 503, header: map[string]string{"Retry-After": "120"}, body: ``,
			want: `{"content":[{"type":"text","text":"HTTP 503 Service Unavailable\nRetry-After: 120\nrate limited by the API: retry after 120 s"}],"isError":true,"structuredContent":{"rate_limit":{"retry_after_seconds":120}}}`},
		{name: "R3 refused redirect names Location", status: 302, header: map[string]string{"Location": "https://other.example/x"}, body: ``,
			want: `{"content":[{"type":"text","text":"HTTP 302 Found\nLocation: https://other.example/x (redirect not followed: restmcp follows redirects only within the same host)"}],"isError":true}`},
		{name: "R3 non-2xx body truncated too", status: 400, contentType: "text/plain", body: `0123456789abc`,
			want: `{"content":[{"type":"text","text":"HTTP 400 Bad Request\n0123456789\n[truncated: showing 10 of 13 bytes]"}],"isError":true}`},
		{name: "R4 image", status: 200, contentType: "image/png", body: "\x89PNG",
			want: `{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw=="}]}`},
		{name: "R4 audio", status: 200, contentType: "audio/mpeg", body: "ID3",
			want: `{"content":[{"type":"audio","mimeType":"audio/mpeg","data":"SUQz"}]}`},
		{name: "R4 blob without query in the URI", status: 200, contentType: "application/pdf", body: "%PDF",
			want: `{"content":[{"type":"resource","resource":{"uri":"http://upstream.test/v1/doc","mimeType":"application/pdf","blob":"JVBERg=="}}]}`},
		{name: "R4 SVG is text", status: 200, contentType: "image/svg+xml", body: "<svg/>",
			want: `{"content":[{"type":"text","text":"<svg/>"}]}`},
		{name: "R4 binary over its cap", status: 200, contentType: "image/png", body: "123456789",
			want: `{"content":[{"type":"text","text":"HTTP 200 OK\n[image/png body of 9 bytes is larger than the 8-byte limit for binary results and was not returned]"}],"isError":true}`},
		{name: "R5 truncated, length known", status: 200, contentType: "text/plain", body: `0123456789abcdef`,
			want: `{"content":[{"type":"text","text":"0123456789\n[truncated: showing 10 of 16 bytes]"}]}`},
		{name: "R5 truncated, length unknown", status: 200, contentType: "text/plain", body: `0123456789abcdef`, contentLength: -1,
			want: `{"content":[{"type":"text","text":"0123456789\n[truncated: showing 10 of more than 10 bytes]"}]}`},
		{name: "R5 cut on a UTF-8 boundary", status: 200, contentType: "text/plain", body: `012345678é0`,
			want: `{"content":[{"type":"text","text":"012345678\n[truncated: showing 9 of 12 bytes]"}]}`},
		{name: "R5 exactly at the cap is whole", status: 200, contentType: "text/plain", body: `0123456789`,
			want: `{"content":[{"type":"text","text":"0123456789"}]}`},
		{name: "R5 truncated JSON has no structuredContent", status: 200, contentType: "application/json", body: `{"a":"0123456789"}`,
			want: `{"content":[{"type":"text","text":"{\"a\":\"0123\n[truncated: showing 10 of 18 bytes]"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.contentType != "" {
				h.Set("Content-Type", tt.contentType)
			}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			cl := tt.contentLength
			if cl == 0 {
				cl = int64(len(tt.body))
			}
			body := &countingReader{r: strings.NewReader(tt.body)}
			u, _ := url.Parse("http://upstream.test/v1/doc?api_key=k-123")
			resp := &http.Response{StatusCode: tt.status, Header: h, Body: io.NopCloser(body), ContentLength: cl, Request: &http.Request{URL: u}}
			res, err := s.mapResponse(resp, &openapi.Tool{}, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(parseJSON(t, tt.want), asJSON(t, res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if body.n > 10+1 && tt.contentType != "image/png" {
				t.Errorf("read %d bytes from upstream, want at most cap+1 = 11", body.n)
			}
		})
	}
}

func TestReadTextNeverBuffersMoreThanCapPlusOne(t *testing.T) {
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 1<<20))}
	text, truncated, err := readText(body, -1, 100<<10)
	if err != nil || !truncated || len(text) != 100<<10 {
		t.Fatalf("readText = %d bytes, truncated %v, err %v", len(text), truncated, err)
	}
	if body.n != 100<<10+1 {
		t.Errorf("read %d bytes, want %d", body.n, 100<<10+1)
	}
}

func TestSameHostRedirects(t *testing.T) {
	mk := func(s string) *http.Request { u, _ := url.Parse(s); return &http.Request{URL: u} }
	first := mk("https://api.example.com/v1/a")
	tests := []struct {
		to   string
		want error
	}{
		{"https://api.example.com/v1/b", nil},
		{"https://evil.example.com/v1/b", http.ErrUseLastResponse},
		{"http://api.example.com/v1/b", http.ErrUseLastResponse},
	}
	for _, tt := range tests {
		if got := sameHostRedirects(mk(tt.to), []*http.Request{first}); got != tt.want {
			t.Errorf("redirect to %s: %v, want %v", tt.to, got, tt.want)
		}
	}
}

// TestReadAtMost: the body is read to its end or to max bytes, whatever the
// size hint says; a reader's error comes back with what was read.
func TestReadAtMost(t *testing.T) {
	body := strings.Repeat("abcdefghij", 100) // 1,000 bytes
	for _, tc := range []struct {
		name      string
		hint, max int64
		want      string
	}{
		{"hint exact", 1000, 2000, body},
		{"no hint", -1, 2000, body},
		{"hint short", 10, 2000, body},
		{"hint long", 5000, 2000, body},
		{"cut at max", 1000, 301, body[:301]},
		{"cut at max, no hint", -1, 999, body[:999]},
		{"max zero", 1000, 0, ""},
	} {
		got, err := readAtMost(strings.NewReader(body), tc.hint, tc.max)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %d bytes, %v; want %d bytes", tc.name, len(got), err, len(tc.want))
		}
	}
	boom := errors.New("connection reset")
	got, err := readAtMost(io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom)), 100, 1000)
	if string(got) != "partial" || !errors.Is(err, boom) {
		t.Errorf("failing reader: %q, %v; want \"partial\", %v", got, err, boom)
	}
}

// TestStructuredContentFromBytes: a 2xx JSON object becomes
// structuredContent from its bytes, compacted, in the upstream's member
// order (a repeated member kept, as JSON parsers read the last), its
// tokens as the upstream wrote them but for invalid UTF-8 (\ufffd); the
// go-sdk's json.Marshal escapes <, > and & in it besides. The text keeps
// the body verbatim. When the object does not fit the tool's
// outputSchema, the tree path makes it fit (R8), its members then sorted
// as json.Marshal sorts them.
func TestStructuredContentFromBytes(t *testing.T) {
	s := &Server{opts: Options{MaxResponseBytes: 1 << 20, MaxBinaryBytes: 8}}
	body := " {\n  \"z\" : 1,\n  \"a\" : \"<\\u00e9>\\/\xff\",\n  \"n\": [ 1.50 , null ],\n  \"z\": 2\n}\n"
	schema := func(s string) *openapi.Tool { return &openapi.Tool{OutputSchema: json.RawMessage(s)} }
	const asSent, sdkSent = `{"z":1,"a":"<\u00e9>\/\ufffd","n":[1.50,null],"z":2}`, `{"z":1,"a":"\u003c\u00e9\u003e\/\ufffd","n":[1.50,null],"z":2}`
	for _, c := range []struct {
		name      string
		tool      *openapi.Tool
		want, sdk string
	}{
		{"no output schema", &openapi.Tool{}, asSent, sdkSent},
		{"fits its output schema", schema(`{"type":"object","properties":{"z":{"type":"integer"},"n":{"type":"array","items":{"type":"number"}}}}`),
			asSent, sdkSent},
		{"does not fit: the tree path", schema(`{"type":"object","properties":{"a":{"type":"integer"}}}`),
			`{"a":null,"n":[1.50,null],"z":2}`, `{"a":null,"n":[1.50,null],"z":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}}
			resp := &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
				Request: &http.Request{URL: &url.URL{Scheme: "http", Host: "upstream.test", Path: "/v1/doc"}}}
			res, err := s.mapResponse(resp, c.tool, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			res = conformToOutputSchema(c.tool, res, false)
			got, err := appendToolResult(nil, res)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := json.Marshal(body)
			want := `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + c.want + `}`
			if string(got) != want {
				t.Errorf("result\n got %s\nwant %s", got, want)
			}
			want = `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + c.sdk + `}`
			sdk, err := json.Marshal(res)
			if err != nil || string(sdk) != want {
				t.Errorf("json.Marshal of the result (the go-sdk's path)\n got %s (%v)\nwant %s", sdk, err, want)
			}
		})
	}
}
