package openapi

import (
	"context"
	"os"
	"testing"

	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestListedSizeMatchesMarshal checks the arithmetic ListedSize against
// encoding the entry, on texts and schemas that need escaping.
func TestListedSizeMatchesMarshal(t *testing.T) {
	texts := []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\rff\fbs\b", "\x00\x1f\x7f", "<b>&amp;</b>",
		"caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff\xfe utf8 \xe2\x80", "\xe2\x80\xa8"}
	schemas := []string{"", `{"type":"object"}`, `{"type":"object","description":"<a href=\"x\">&</a> \u2028 \u00e9 caf` + "\u00e9\u2028\u2029" + `","properties":{"a\\\"b":{"type":"string"}}}`,
		`{"type":"object", "x":1}`, "{\"type\":\"object\",\n\"x\":1}", `{"type":"object","d":"unterminated}`, "{\"d\":\"ctl\x01\"}"}
	for _, title := range texts {
		for _, desc := range texts {
			for _, in := range schemas {
				for _, out := range schemas[:3] {
					for _, flag := range []bool{false, true} {
						tl := &Tool{Name: "n" + title, Title: title, Description: desc, InputSchema: []byte(in), OutputSchema: []byte(out),
							ReadOnly: flag, Destructive: !flag, Idempotent: flag}
						if got, want := tl.ListedSize(), tl.marshaledSize(); got != want {
							t.Errorf("title %q desc %q in %q out %q: ListedSize %d, marshaled %d", title, desc, in, out, got, want)
						}
					}
				}
			}
		}
	}
}

// TestListedSizeCorpus checks ListedSize against encoding for every tool
// of the largest corpus documents.
func TestListedSizeCorpus(t *testing.T) {
	corpustest.Require(t)
	for _, folder := range []string{"github-rest-v1.1.3", "stripe-2022-04-12"} {
		p := corpustest.Path(t, folder)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := LoadData(context.Background(), data, p, LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range d.Tools {
			if got, want := tl.ListedSize(), tl.marshaledSize(); got != want {
				t.Errorf("%s %s: ListedSize %d, marshaled %d", folder, tl.Name, got, want)
			}
		}
	}
}
