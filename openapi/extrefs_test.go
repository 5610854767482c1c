package openapi

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// countingLoad loads spec strictly, counting the reads of each referenced
// file (by its path relative to the spec's folder).
func countingLoad(t *testing.T, spec string) (*Document, map[string]int) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Dir(spec))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reads := map[string]int{}
	d, err := Load(context.Background(), spec, LoadOptions{ReadFromURI: func(_ context.Context, u *url.URL) ([]byte, error) {
		rel, err := filepath.Rel(dir, filepath.FromSlash(u.Path))
		if err != nil {
			return nil, err
		}
		mu.Lock()
		reads[filepath.ToSlash(rel)]++
		mu.Unlock()
		return os.ReadFile(filepath.FromSlash(u.Path))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d, reads
}

// TestShareExternalRefs: each file an OpenAPI 3.0 document references is
// read once, however many references reach it (whole files, file#/pointer,
// a percent-encoded pointer, from the root and from other files, back into
// the root's components); the
// references to one target share one value, keeping their $ref; and the
// tools are built from them as from a single-file document.
func TestShareExternalRefs(t *testing.T) {
	spec := filepath.Join("testdata", "extrefs", "openapi.yaml")
	shared, reads := countingLoad(t, spec)
	want := map[string]int{
		"parameters.yaml": 1, "headers.yaml": 1, "examples.yaml": 1,
		"responses/thing.yaml": 1, "responses/things.yaml": 1,
		"schemas/thing.yaml": 1, "schemas/owner.yaml": 1, "schemas/common.yaml": 1, "schemas/error.yaml": 1,
	}
	if diff := cmp.Diff(want, reads); diff != "" {
		t.Errorf("reads per file (-want +got):\n%s", diff)
	}

	shareRefs = false
	plain, plainReads := countingLoad(t, spec)
	shareRefs = true
	if plainReads["schemas/thing.yaml"] < 2 {
		t.Errorf("without sharing schemas/thing.yaml was read %d times; the loader reads it once per reference", plainReads["schemas/thing.yaml"])
	}
	// S3 cuts thing.yaml where it is reached again while being expanded
	// (in owner.yaml's things), as in a single-file document; the loader
	// alone gives each occurrence its own copy, so it expands the cycle
	// once more before cutting it.
	wantTools := []struct{ name, in, out string }{
		{"list_things",
			`{"type":"object","properties":{"limit":{"type":"integer","maximum":100},"page_size":{"type":"integer"}}}`,
			`{"type":"object","properties":{"things":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"name":{"anyOf":[{"type":"string"},{"type":"null"}]},"owner":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"things":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","description":"Recursive reference to thing.yaml; structure not expanded"},{"type":"null"}]}},{"type":"null"}]}}},{"type":"null"}]},"tags":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"label":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]},"headers":{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{"x-rate-limit":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}}}`},
		{"create_thing",
			`{"type":"object","properties":{"id":{"type":"string","pattern":"^t[0-9]+$"},"name":{"type":"string","maxLength":40},"owner":{"type":"object","properties":{"id":{"type":"string","pattern":"^t[0-9]+$"},"things":{"type":"array","items":{"type":"object","description":"Recursive reference to thing.yaml; structure not expanded"}}}},"tags":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"}}}}}}`,
			`{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"name":{"anyOf":[{"type":"string"},{"type":"null"}]},"owner":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"things":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","description":"Recursive reference to thing.yaml; structure not expanded"},{"type":"null"}]}},{"type":"null"}]}}},{"type":"null"}]},"tags":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"label":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]},"headers":{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{"x-rate-limit":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}}}`},
		{"get_thing",
			`{"type":"object","properties":{"id":{"type":"string","pattern":"^t[0-9]+$"}},"required":["id"]}`,
			`{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"name":{"anyOf":[{"type":"string"},{"type":"null"}]},"owner":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"things":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","description":"Recursive reference to thing.yaml; structure not expanded"},{"type":"null"}]}},{"type":"null"}]}}},{"type":"null"}]},"tags":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"label":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]},"headers":{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{"x-rate-limit":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}}}`},
	}
	if len(shared.Tools) != len(wantTools) {
		t.Fatalf("%d tools, want %d", len(shared.Tools), len(wantTools))
	}
	for i, w := range wantTools {
		tl := shared.Tools[i]
		if tl.Name != w.name || string(tl.InputSchema) != w.in || string(tl.OutputSchema) != w.out {
			t.Errorf("tool %d: %s\ninputSchema  %s\noutputSchema %s\nwant %s\ninputSchema  %s\noutputSchema %s", i, tl.Name, tl.InputSchema, tl.OutputSchema, w.name, w.in, w.out)
		}
	}
	for _, i := range []int{0, 2} { // no cycle in list_things' and get_thing's inputs
		if string(plain.Tools[i].InputSchema) != string(shared.Tools[i].InputSchema) {
			t.Errorf("%s inputSchema: %s without sharing, %s with", shared.Tools[i].Name, plain.Tools[i].InputSchema, shared.Tools[i].InputSchema)
		}
	}

	paths := shared.kin.Paths
	created := paths.Value("/things").Post.RequestBody.Value.Content["application/json"].Schema.Value
	one := paths.Value("/things/{id}").Get.Responses.Value("200").Value
	if got := paths.Value("/things").Post.Responses.Value("201").Value; got != one {
		t.Errorf("the two references to responses/thing.yaml have different values")
	}
	if got := one.Content["application/json"].Schema.Value; got != created {
		t.Errorf("responses/thing.yaml's schema is not the value of the request body's reference to schemas/thing.yaml")
	}
	owner := created.Properties["owner"].Value
	if got := owner.Properties["things"].Value.Items.Value; got != created {
		t.Errorf("schemas/owner.yaml's reference back to thing.yaml has its own value")
	}
	if got, want := created.Properties["tags"].Value.Items.Value, shared.kin.Components.Schemas["Tag"].Value; got != want {
		t.Errorf("the reference back to the root's components/schemas/Tag has its own value")
	}
	if got := created.Properties["id"].Ref; got != "common.yaml#/Id" {
		t.Errorf("a shared reference keeps its $ref: %q", got)
	}
}

// TestShareExternalRefsGivesUp: a document the sharing does not handle (a
// path item given as a reference) is resolved by the loader alone, with
// the same tools.
func TestShareExternalRefsGivesUp(t *testing.T) {
	spec := filepath.Join("testdata", "C02-external-ref", "openapi.yaml")
	shared, _ := countingLoad(t, spec)
	shareRefs = false
	plain, _ := countingLoad(t, spec)
	shareRefs = true
	if len(shared.Tools) == 0 {
		t.Fatal("no tools")
	}
	if diff := cmp.Diff(plain.Tools, shared.Tools, cmpopts.IgnoreUnexported(Tool{})); diff != "" {
		t.Errorf("tools (-loader alone +shared):\n%s", diff)
	}
}
