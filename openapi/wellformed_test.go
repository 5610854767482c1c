package openapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWellFormed(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		problems       []Problem
	}{
		{name: "well formed", in: `{"a":1,"b":[true,"x"]}`, want: `{"a":1,"b":[true,"x"]}`},
		{name: "repeated member: the last is kept", in: `{"p":{"/x":{"s":"first","t":1,"s":"second"}}}`,
			want: `{"p":{"/x":{"t":1,"s":"second"}}}`,
			problems: []Problem{{Severity: SeverityWarning, File: "doc.json", Pointer: "/p/~1x/s",
				Message: `member "s" appears more than once in this object; the last one is used`}}},
		{name: "invalid UTF-8 in a string and a name", in: "{\"t\":\"caf\xe9\",\"k\xff\":[\"ok\"]}",
			want: "{\"t\":\"caf\uFFFD\",\"k\uFFFD\":[\"ok\"]}",
			problems: []Problem{
				{Severity: SeverityWarning, File: "doc.json", Pointer: "/t", Message: "a string here is not valid UTF-8; each invalid sequence is read as U+FFFD"},
				{Severity: SeverityWarning, File: "doc.json", Pointer: "", Message: "a member name here is not valid UTF-8; each invalid sequence is read as U+FFFD"},
			}},
		{name: "not JSON: as it came", in: `{"a":`, want: `{"a":`},
		{name: "trailing data: as it came", in: `{"a":1,"a":2} x`, want: `{"a":1,"a":2} x`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, problems := wellFormed([]byte(c.in), "doc.json")
			if string(got) != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if diff := cmp.Diff(c.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// A document with a repeated member name or invalid UTF-8 loads, as it
// did on encoding/json's own implementation (the last member wins), with a
// warning naming the file and the member, whether it is JSON or YAML.
func TestLoadRepairsRepeatedMembersAndInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	docs := map[string]string{
		"dup.json": `{"openapi":"3.0.3","info":{"title":"Dup","version":"1"},"servers":[{"url":"http://x.test"}],
 "paths":{"/a":{"get":{"operationId":"getA","summary":"first","summary":"second","responses":{"200":{"description":"ok"}}}}}}`,
		"dup.yaml": "openapi: 3.0.3\ninfo: {title: Dup, version: '1'}\nservers: [{url: 'http://x.test'}]\npaths:\n  /a:\n    get:\n      operationId: getA\n      summary: first\n      summary: second\n      responses: {'200': {description: ok}}\n",
		"utf.json": "{\"openapi\":\"3.0.3\",\"info\":{\"title\":\"U\",\"version\":\"1\"},\"servers\":[{\"url\":\"http://x.test\"}],\"paths\":{\"/a\":{\"get\":{\"operationId\":\"getA\",\"summary\":\"caf\xe9\",\"responses\":{\"200\":{\"description\":\"ok\"}}}}}}",
	}
	for name, body := range docs {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := Load(context.Background(), p, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			for _, p := range d.Problems {
				problems = append(problems, p.String())
			}
			want := []string{`warning: ` + name + `#/paths/~1a/get/summary: member "summary" appears more than once in this object; the last one is used`}
			title := "second"
			if name == "utf.json" {
				want = []string{"warning: utf.json#/paths/~1a/get/summary: a string here is not valid UTF-8; each invalid sequence is read as U+FFFD"}
				title = "caf\uFFFD"
			}
			if diff := cmp.Diff(want, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(d.Tools) != 1 || d.Tools[0].Title != title {
				t.Errorf("tools: %+v, want one titled %q", d.Tools, title)
			}
		})
	}
}

// TestLoadRefusesWhatIsNotOpenAPI: an empty file, and YAML or JSON that
// is not an OpenAPI document, are errors naming the file and what is
// missing, not a server with no tools.
func TestLoadRefusesWhatIsNotOpenAPI(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"empty.yaml":  {"", "the document is empty"},
		"spaces.json": {" \n\t\n", "the document is empty"},
		"hello.yaml":  {"hello: world\n", `not an OpenAPI document: it has no top-level "openapi" (3.x) or "swagger" (2.0) member (its members: "hello")`},
		"other.json": {`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`,
			`not an OpenAPI document: it has no top-level "openapi" (3.x) or "swagger" (2.0) member (its members: "a", "b", "c", "d", "e", …)`},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), p, LoadOptions{})
			want := "loading " + p + ": " + c.want
			if err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}
