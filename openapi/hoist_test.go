package openapi

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/restmcp/restmcp/internal/yamltree"
)

// TestHoistSharedComponents: the repairer points the operations' external
// response and parameter references at one component each in the root
// document (a reference to the file, rebased), once per target, and the
// tools built are exactly those built without hoisting. An inlined
// operation's header named x-… is a header, not an extension: its $ref is
// rebased too.
func TestHoistSharedComponents(t *testing.T) {
	spec := filepath.Join("testdata", "lenient", "hoist", "spec.yaml")
	src, err := newSource(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := readFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := yamltree.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r := newRepairer(src, tree)
	r.run()
	got := string(yamltree.EncodeJSON(r.root.root))
	want := `{"openapi":"3.0.3","info":{"title":"Shared responses","version":"1"},"servers":[{"url":"https://api.example.test"}],` +
		`"paths":{"/things":{"get":{"operationId":"listThings","parameters":[{"$ref":"#/components/parameters/per_page"}],` +
		`"responses":{"200":{"$ref":"#/components/responses/things"},"401":{"$ref":"#/components/responses/unauthorized"}}}},` +
		`"/things/{id}":{"get":{"operationId":"getThing","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],` +
		`"responses":{"200":{"description":"One thing","headers":{"x-request-id":{"$ref":"shared/headers.yml#/x-request-id"}},"content":{"application/json":{"schema":{"$ref":"shared/thing.yml#"}}}},"401":{"$ref":"#/components/responses/unauthorized"}}}}},` +
		`"components":{"parameters":{"per_page":{"$ref":"shared/parameters.yml#/per_page"}},` +
		`"responses":{"things":{"$ref":"ops/responses/things.yml#"},"unauthorized":{"$ref":"shared/unauthorized.yml#"}}}}`
	if got != want {
		t.Errorf("repaired root:\n%s\nwant\n%s", got, want)
	}

	hoisted, err := Load(context.Background(), spec, LoadOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	hoistComponents = false
	defer func() { hoistComponents = true }()
	plain, err := Load(context.Background(), spec, LoadOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hoisted.Tools) != 2 {
		t.Fatalf("%d tools", len(hoisted.Tools))
	}
	if diff := cmp.Diff(plain.Tools, hoisted.Tools, cmpopts.IgnoreUnexported(Tool{})); diff != "" {
		t.Errorf("tools with hoisting (-without +with):\n%s", diff)
	}
	if want := `{"type":"object","properties":{"things":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"name":{"anyOf":[{"type":"string"},{"type":"null"}]},"id":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]},"headers":{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{"x-request-id":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}}}`; string(hoisted.Tools[0].OutputSchema) != want {
		t.Errorf("list_things outputSchema %s", hoisted.Tools[0].OutputSchema)
	}
}
