package openapi

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/internal/yamltree"
	"github.com/speakeasy-api/jsonpath/pkg/jsonpath"
)

func writeOverlay(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "overlay.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const overlayHead = "overlay: 1.0.0\ninfo: {title: t, version: 1.0.0}\nactions:\n"

// TestOverlay applies overlays to testdata/overlay/base.yaml and checks
// the tools (name → input schema) and problems.
func TestOverlay(t *testing.T) {
	tests := []struct {
		name     string
		overlays []string
		tools    map[string]string
		problems []string // Problem.String() with the overlay path replaced by "OVERLAY"
	}{
		{
			name:     "none",
			overlays: []string{overlayHead + "  - target: $.info\n    update: {title: Renamed}\n"},
			tools: map[string]string{
				"list_pets":  `{"type":"object","properties":{"limit":{"type":"integer"}}}`,
				"create_pet": `{"type":"object","properties":{"name":{"type":"string"}}}`,
				"reset_all":  `{"type":"object","properties":{}}`,
			},
		},
		{
			name: "update merges objects, appends arrays, replaces scalars",
			overlays: []string{overlayHead + `  - target: $.components.schemas.Pet
    update:
      required: [age]
      properties:
        age: {type: integer, minimum: 0}
        name: {maxLength: 20}
  - target: $.paths['/pets'].get.parameters
    update:
      name: sort
      in: query
      schema: {type: string}
`},
			tools: map[string]string{
				"list_pets":  `{"type":"object","properties":{"limit":{"type":"integer"},"sort":{"type":"string"}}}`,
				"create_pet": `{"type":"object","properties":{"name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0}}}`,
				"reset_all":  `{"type":"object","properties":{}}`,
			},
		},
		{
			name: "remove with a filter, then a descendant update",
			overlays: []string{overlayHead + `  - target: "$.paths.*[?(@.tags[0] == 'internal')]"
    remove: true
  - target: $..[?@.operationId == 'listPets']
    update: {operationId: findPets}
`},
			tools: map[string]string{
				"find_pets":  `{"type":"object","properties":{"limit":{"type":"integer"}}}`,
				"create_pet": `{"type":"object","properties":{"name":{"type":"string"}}}`,
			},
		},
		{
			name: "overlays apply in order; a target matching nothing warns",
			overlays: []string{
				overlayHead + "  - target: $.paths['/admin/reset']\n    remove: true\n",
				overlayHead + "  - target: $.paths['/admin/reset'].post\n    update: {summary: x}\n  - target: $..get.parameters[?(@.name == 'limit')].schema\n    update: {maximum: 100}\n",
			},
			tools: map[string]string{
				"list_pets":  `{"type":"object","properties":{"limit":{"type":"integer","maximum":100}}}`,
				"create_pet": `{"type":"object","properties":{"name":{"type":"string"}}}`,
			},
			problems: []string{`warning: OVERLAY2#/actions/0 (line 4): overlay action target "$.paths['/admin/reset'].post" matches nothing in base.yaml`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var files []string
			for _, o := range tc.overlays {
				files = append(files, writeOverlay(t, o))
			}
			d, err := Load(context.Background(), "testdata/overlay/base.yaml", LoadOptions{Overlays: files})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, tl := range d.Tools {
				got[tl.Name] = string(tl.InputSchema)
			}
			if diff := cmp.Diff(tc.tools, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			var probs []string
			for _, p := range d.Problems {
				s := p.String()
				for i := len(files) - 1; i >= 0; i-- {
					s = strings.ReplaceAll(s, files[i], "OVERLAY"+map[bool]string{true: "", false: "2"}[i == 0])
				}
				probs = append(probs, s)
			}
			if diff := cmp.Diff(tc.problems, probs); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverlayMalformed: a malformed overlay fails Load with an error
// naming the overlay file and the action.
func TestOverlayMalformed(t *testing.T) {
	tests := []struct{ name, overlay, want string }{
		{"no version", "info: {title: t, version: 1}\nactions: [{target: $, remove: true}]\n", `overlay: version missing; want 1.x (e.g. 1.0.0)`},
		{"wrong version", "overlay: 2.0.0\ninfo: {title: t, version: 1}\nactions: [{target: $, remove: true}]\n", `overlay: version "2.0.0"; want 1.x (e.g. 1.0.0)`},
		{"no info", "overlay: 1.0.0\nactions: [{target: $, remove: true}]\n", "info: required object with title and version"},
		{"no actions", "overlay: 1.0.0\ninfo: {title: t, version: 1}\nactions: []\n", "actions: required non-empty array"},
		{"no target", overlayHead + "  - update: {x: 1}\n", "actions[0] (line 4): target: required JSONPath string"},
		{"bad path", overlayHead + "  - target: $.info\n    update: {}\n  - target: paths\n    remove: true\n", `actions[1] (line 6): target "paths": column 0: expected '$'`},
		{"unclosed bracket", overlayHead + "  - target: $.paths['/a'\n    remove: true\n", `actions[0] (line 4): target "$.paths['/a'": column 12: unexpected token`},
		{"neither", overlayHead + "  - target: $.info\n    description: nothing\n", "actions[0] (line 4): needs update or remove: true"},
		{"remove not bool", overlayHead + "  - target: $.info\n    remove: yes please\n", "actions[0] (line 5): remove: must be true or false"},
		{"not yaml", "overlay: [\n", "yaml: line 1: did not find expected node content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeOverlay(t, tc.overlay)
			_, err := Load(context.Background(), "testdata/overlay/base.yaml", LoadOptions{Overlays: []string{p}, Lenient: true})
			want := "loading testdata/overlay/base.yaml: overlay " + p + ": " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("got %v\nwant %s", err, want)
			}
		})
	}
	_, err := Load(context.Background(), "testdata/overlay/base.yaml", LoadOptions{Overlays: []string{"testdata/overlay/nope.yaml"}})
	if err == nil || !strings.Contains(err.Error(), "overlay testdata/overlay/nope.yaml: open testdata/overlay/nope.yaml: no such file or directory") {
		t.Errorf("missing overlay file: got %v", err)
	}
}

// TestOverlayRepairsCorpus: the sample overlays in testdata/overlay make
// two corpus documents load strictly, with no problems.
func TestOverlayRepairsCorpus(t *testing.T) {
	corpustest.Require(t)
	tests := []struct {
		folder string
		tools  int
		check  string // a tool and a fragment of its input schema
		want   string
	}{
		{"square-connect-v2", 316, "upsert_catalog_object", `"allow_quantities":{"anyOf":[{"type":"string","description":"Whether a modifier-list setting is overridden for one item.","enum":["YES","NO","NOT_SET"]},{"type":"null"}]}`}, // nullable beside its $ref (S12)
		{"petstore-oas31", 6, "add_pet", `"petDetailsId":{"type":"integer"`},
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			d, err := Load(context.Background(), corpustest.Path(t, tc.folder), LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}, SchemaBudget: -1,
				Overlays: []string{filepath.Join("testdata", "overlay", tc.folder+".overlay.yaml")}})
			if err != nil {
				t.Fatalf("strict Load with overlay: %v", err)
			}
			// The overlay repairs what failed the load; square still has one
			// operation whose path parameter is not declared.
			var problems []string
			for _, p := range d.Problems {
				problems = append(problems, p.String())
			}
			var want []string
			if tc.folder == "square-connect-v2" {
				want = []string{`warning: api.json#/paths/~1v2~1vendors~1{vendor_id}/put [PUT /v2/vendors/{vendor_id}]: path parameter "vendor_id" is not declared; assuming a required string`}
			}
			if len(d.Tools) != tc.tools || !slices.Equal(problems, want) {
				t.Errorf("got %d tools, problems %q; want %d tools, %q", len(d.Tools), problems, tc.tools, want)
			}
			s := string(toolByName(t, d, tc.check).InputSchema)
			if !strings.Contains(s, tc.want) {
				t.Errorf("%s input schema lacks %s:\n%s", tc.check, tc.want, s)
			}
		})
	}
}

func TestJSONPath(t *testing.T) {
	tree, err := yamltree.Parse([]byte(`{"a":{"b":[{"k":"x","n":1},{"k":"y","n":2.0},{"k":"x","m":true}]},"c":{"b":5},"d e":{"b":6}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"$", `{"a":{"b":[{"k":"x","n":1},{"k":"y","n":2.0},{"k":"x","m":true}]},"c":{"b":5},"d e":{"b":6}}`},
		{"$.a.b[0].k", `"x"`},
		{"$.a.b[-1]", `{"k":"x","m":true}`},
		{"$['d e'].b", `6`},
		{`$["d e"]["b"]`, `6`},
		{"$.*.b", `[{"k":"x","n":1},{"k":"y","n":2.0},{"k":"x","m":true}] 5 6`},
		{"$.a.b[*].k", `"x" "y" "x"`},
		{"$..b", `[{"k":"x","n":1},{"k":"y","n":2.0},{"k":"x","m":true}] 5 6`},
		{"$..k", `"x" "y" "x"`},
		{"$.a.b[?(@.k == 'x')].k", `"x" "x"`},
		{"$.a.b[?@.k != 'x']", `{"k":"y","n":2.0}`},
		{"$.a.b[?(@.n == 2)]", `{"k":"y","n":2.0}`},
		{"$.a.b[?(@.m == true)]", `{"k":"x","m":true}`},
		{"$.a.b[?(@.m)]", `{"k":"x","m":true}`},
		{"$..[?(@.b == 5)]", `{"b":5}`},
		{"$.a.b[?(@.k == 'x' && @.n == 1)]", `{"k":"x","n":1}`},
		{"$.a.b[?@.k == 'y' || @.m]", `{"k":"y","n":2.0} {"k":"x","m":true}`},
		{"$.a.b[1:]", `{"k":"y","n":2.0} {"k":"x","m":true}`},
		{"$.nope", ``},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			p, err := jsonpath.NewPath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range p.Query(tree) {
				got = append(got, string(yamltree.EncodeJSON(n)))
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}
