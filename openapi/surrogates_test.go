package openapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSurrogateEscapesEveryPath: a JSON document whose strings hold
// surrogate-pair escapes ("\ud83d\udc4d", as Twilio's do) loads on every
// path, the characters intact: strict, lenient (a repair is needed), through
// an overlay written in JSON, and through an external reference to a JSON
// file.
func TestSurrogateEscapesEveryPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const thumbs = `\ud83d\udc4d`
	ok := func(broken string) string {
		return `{"openapi":"3.0.3","info":{"title":"t ` + thumbs + `","version":"1"},"servers":[{"url":"http://upstream.test"}],"paths":{"/a":{"get":{"operationId":"a","summary":"s ` + thumbs + `",` +
			`"parameters":[{"name":"q","in":"query","schema":{"$ref":"shared.json#/Q"}}],` +
			`"responses":{"200":{"description":"ok"` + broken + `}}}}}}`
	}
	write("shared.json", `{"Q":{"type":"string","description":"from the shared file `+thumbs+`"}}`)
	overlay := write("overlay.json", `{"overlay":"1.0.0","info":{"title":"o","version":"1"},"actions":[{"target":"$.paths['/a'].get","update":{"description":"overlaid `+thumbs+`"}}]}`)
	for _, tt := range []struct {
		name, doc string
		opts      LoadOptions
		desc      string
	}{
		{"strict", ok(""), LoadOptions{}, "s 👍"},
		{"lenient", ok(`,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Missing"}}}`), LoadOptions{Lenient: true}, "s 👍"},
		{"overlay", ok(""), LoadOptions{Overlays: []string{overlay}}, "s 👍\n\noverlaid 👍"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load(context.Background(), write("doc-"+tt.name+".json", tt.doc), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.Title != "t 👍" || len(d.Tools) != 1 || d.Tools[0].Description != tt.desc {
				t.Fatalf("title %q, tools %d, description %q; want \"t 👍\", 1, %q", d.Title, len(d.Tools), d.Tools[0].Description, tt.desc)
			}
			if in := string(d.Tools[0].InputSchema); !strings.Contains(in, `"description":"from the shared file 👍"`) {
				t.Errorf("input schema %s lacks the external file's description", in)
			}
		})
	}
}
