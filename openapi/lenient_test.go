package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLenient loads one fixture per class of defect in lenient mode and
// checks the tools served, their input schemas and the exact problems;
// then loads it strictly and checks that the load fails with a
// *LoadError listing the same problems.
func TestLenient(t *testing.T) {
	const (
		W = SeverityWarning
		E = SeverityError
	)
	tests := []struct {
		name     string
		tools    map[string]string // tool name → input schema
		problems []Problem
	}{
		{
			name:  "node-types",
			tools: map[string]string{"list_pets": `{"type":"object","properties":{}}`},
			problems: []Problem{
				{W, "spec.yaml", "/tags/0/description", 8, "", `description is a $ref ("texts.yaml#/pets"), not a string; the referenced text was inlined`},
				{E, "spec.yaml", "/tags/1/description", 11, "", "description is an object, not a string; dropped"},
				{E, "spec.yaml", "/paths/~1pets/get/summary", 19, "GET /pets", "summary is an array, not a string; dropped"},
			},
		},
		{
			name: "unresolved-ref",
			tools: map[string]string{
				"create_order": `{"type":"object","properties":{"kind":{"description":"The order kind."},"qty":{"type":"integer"}}}`,
				"put_order":    `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`,
			},
			problems: []Problem{
				{E, "spec.yaml", "/paths/~1orders~1{id}/parameters/0", 10, "", `$ref "#/components/parameters/Missing": spec.yaml has no /components/parameters/Missing; parameter dropped`},
				{E, "spec.yaml", "/paths/~1orders~1{id}/put/requestBody", 19, "PUT /orders/{id}", `$ref "#/components/requestBodies/Gone": spec.yaml has no /components/requestBodies/Gone; request body dropped`},
				{E, "spec.yaml", "/paths/~1orders~1{id}/put/responses/200", 22, "PUT /orders/{id}", `$ref "#/components/responses/Nope": spec.yaml has no /components/responses/Nope; response replaced by one without content`},
				{E, "spec.yaml", "/components/schemas/Order/properties/kind", 40, "", `$ref "#/components/schemas/Kind": spec.yaml has no /components/schemas/Kind; replaced by an empty (permissive) schema`},
			},
		},
		{
			name: "missing-file",
			tools: map[string]string{
				"post_a": `{"type":"object","properties":{"id":{"type":"string"}}}`,
				"get_b":  `{"type":"object","properties":{}}`,
			},
			problems: []Problem{
				{E, "spec.yaml", "/paths/~1b/get/responses/200/content/application~1json/schema", 19, "GET /b", `$ref "sub/nothere.yaml": file sub/nothere.yaml does not exist; replaced by an empty (permissive) schema`},
				{W, "sub/a.yaml", "/post/requestBody/content/application~1json/schema", 7, "", `$ref "#/components/schemas/Thing" does not resolve in sub/a.yaml but does in the root document; rewritten to "../spec.yaml#/components/schemas/Thing"`},
			},
		},
		{
			name: "oas31",
			tools: map[string]string{
				"add_pet": `{"type":"object","properties":{"details":{},"detailsId":{"type":"integer"},"owner":{"type":"object","properties":{"name":{"type":"string"}}}}}`,
			},
			problems: []Problem{
				{E, "spec.yaml", "/components/schemas/Pet/properties/details", 25, "", `$ref has no value (in YAML an unquoted "#" starts a comment: quote the reference); replaced by an empty (permissive) schema`},
				{W, "spec.yaml", "/components/schemas/Pet/properties/detailsId", 27, "", `$ref "/schemas/details#details_id" goes through the OAS 3.1 $id "/schemas/details", which the loader does not resolve; rewritten to "#/components/schemas/Details/properties/id"`},
				{E, "spec.yaml", "/components/schemas/Pet/properties/owner/properties/$ref", 31, "", `"properties" holds a "$ref" entry ("#/components/schemas/Owner") instead of property schemas; read as allOf: [{$ref: "#/components/schemas/Owner"}]`},
			},
		},
		{
			name: "swagger2",
			tools: map[string]string{
				"add_item": `{"type":"object","properties":{"body":{"type":"object","properties":{"owner":{},"name":{"type":"string"}}}}}`,
			},
			problems: []Problem{
				{E, "spec.yaml", "/paths/~1items/post/parameters/0", 12, "POST /items", `$ref "#/parameters/Trace": spec.yaml has no /parameters/Trace; parameter dropped`},
				{E, "spec.yaml", "/definitions/Item/properties/owner", 25, "", `$ref "#/definitions/Owner": spec.yaml has no /definitions/Owner; replaced by an empty (permissive) schema`},
			},
		},
		{
			name:  "loader-error",
			tools: map[string]string{"get_a": `{"type":"object","properties":{}}`},
			problems: []Problem{
				{E, "spec.yaml", "/paths/~1a/get/operationId", 10, "GET /a", "the loader refuses this node (cannot construct !!seq into string); dropped"},
				{E, "spec.yaml", "/paths/~1a/get/deprecated", 11, "GET /a", "the loader refuses this node (cannot construct !!str `sometimes` into bool); dropped"},
			},
		},
		{
			name: "operation-ref",
			tools: map[string]string{
				"list_things":  `{"type":"object","properties":{"limit":{"type":"integer"}}}`,
				"create_thing": `{"type":"object","properties":{"name":{"type":"string"}}}`,
			},
			problems: []Problem{
				{W, "spec.yaml", "/paths", 10, "", "2 operation(s) are given as $refs, which OpenAPI does not allow and the loader ignores (first: GET /things); inlined"},
			},
		},
		{
			name:  "operation",
			tools: map[string]string{"get_b": `{"type":"object","properties":{}}`},
			problems: []Problem{
				{E, "spec.yaml", "/paths/~1a/get", 0, "GET /a", "x-restmcp-cost: must be a non-negative whole number, got lots; operation dropped"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join("testdata", "lenient", tc.name, "spec.yaml")
			var logs bytes.Buffer
			d, err := Load(context.Background(), p, LoadOptions{Lenient: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatalf("lenient Load: %v", err)
			}
			got := map[string]string{}
			for _, tl := range d.Tools {
				got[tl.Name] = string(tl.InputSchema)
			}
			if diff := cmp.Diff(tc.tools, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, d.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			// One warning log line per problem, naming file and pointer,
			// then a summary.
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != len(tc.problems)+1 || !strings.Contains(lines[len(lines)-1], fmt.Sprintf("problems=%d tools=%d", len(tc.problems), len(tc.tools))) {
				t.Errorf("got %d log lines, want %d and a summary:\n%s", len(lines), len(tc.problems)+1, logs.String())
			}
			for i, l := range lines {
				if i < len(tc.problems) && (!strings.Contains(l, "level=WARN") || !strings.Contains(l, "pointer="+tc.problems[i].Pointer)) {
					t.Errorf("log line %d = %s; want a WARN naming pointer %s", i, l, tc.problems[i].Pointer)
				}
			}

			_, err = Load(context.Background(), p, LoadOptions{})
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("strict Load: got %v, want a *LoadError", err)
			}
			if diff := cmp.Diff(tc.problems, le.Problems); diff != "" {
				t.Errorf("strict problems (-want +got):\n%s", diff)
			}
			for _, pr := range tc.problems {
				if !strings.Contains(err.Error(), pr.String()) {
					t.Errorf("strict error does not list %q:\n%v", pr.String(), err)
				}
			}
		})
	}
}

// TestLenientCleanDocument: a document that loads has no problems, in
// either mode.
func TestLenientCleanDocument(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		d, err := Load(context.Background(), "testdata/C04-name-collision/openapi.yaml", LoadOptions{Lenient: lenient})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Problems) != 0 {
			t.Errorf("lenient=%v: problems %v", lenient, d.Problems)
		}
	}
}

// TestLenientRefOutsideRoot: a $ref leaving the spec folder (C02) fails the
// load in both modes, with strict mode's error, and the target is never
// read.
func TestLenientRefOutsideRoot(t *testing.T) {
	spec := []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /a:
    get:
      operationId: getA
      parameters:
        - $ref: "../../secret.yaml#/p"
      responses:
        "200": {description: ok}
`)
	for _, lenient := range []bool{false, true} {
		read := 0
		opts := LoadOptions{Lenient: lenient, ReadFromURI: func(context.Context, *url.URL) ([]byte, error) { read++; return nil, errors.New("read") }}
		d, err := LoadData(context.Background(), spec, "testdata/lenient/spec.yaml", opts)
		var le *LoadError
		var re *RefError
		want := `loading testdata/lenient/spec.yaml: error resolving reference "../../secret.yaml#/p": $ref "../../secret.yaml": points outside the spec root ` + mustAbs(t, "testdata/lenient") + " (" + mustAbs(t, "secret.yaml") + ")"
		if d != nil || !errors.As(err, &le) || !errors.As(err, &re) || err.Error() != want || read != 0 {
			t.Errorf("lenient=%v: Load = %v, %v (%d reads); want a *LoadError with %s and no read", lenient, d, err, read, want)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestLenientHTTP: a document fetched over http(s) keeps its relative
// external refs (fetched by the loader under the document's URL folder)
// while its broken local refs are dropped.
func TestLenientHTTP(t *testing.T) {
	files := map[string]string{
		"/api/spec.yaml": `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /a:
    post:
      operationId: postA
      requestBody:
        content:
          application/json:
            schema: {$ref: "schemas.yaml#/Thing"}
      responses:
        "200": {description: ok}
components:
  schemas:
    Broken: {$ref: "#/components/schemas/Nothing"}
`,
		"/api/schemas.yaml": "Thing:\n  type: object\n  properties:\n    id: {type: string}\n",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	d, err := Load(context.Background(), srv.URL+"/api/spec.yaml", LoadOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 1 || string(d.Tools[0].InputSchema) != `{"type":"object","properties":{"id":{"type":"string"}}}` {
		t.Errorf("tools: %+v", d.Tools)
	}
	want := []Problem{{SeverityError, srv.URL + "/api/spec.yaml", "/components/schemas/Broken", 16, "",
		`$ref "#/components/schemas/Nothing": ` + srv.URL + `/api/spec.yaml has no /components/schemas/Nothing; replaced by an empty (permissive) schema`}}
	if diff := cmp.Diff(want, d.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestLenientAllOperationsFail: when every operation fails to build, the
// cause is a setting (here: a relative server URL and no Upstream), so
// lenient mode fails like strict mode instead of serving no tools.
func TestLenientAllOperationsFail(t *testing.T) {
	spec := []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: /v1}]
components: {schemas: {A: {$ref: "#/components/schemas/Nope"}}}
paths:
  /a:
    get:
      operationId: getA
      responses: {"200": {description: ok}}
`)
	_, err := LoadData(context.Background(), spec, "testdata/lenient/spec.yaml", LoadOptions{Lenient: true})
	var le *LoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), `GET /a (#/paths/~1a/get): server URL "/v1" is relative; configure the upstream base URL`) {
		t.Fatalf("got %v, want a *LoadError naming the operation and the cause", err)
	}
	want := []Problem{{SeverityError, "spec.yaml", "/components/schemas/A", 4, "",
		`$ref "#/components/schemas/Nope": spec.yaml has no /components/schemas/Nope; replaced by an empty (permissive) schema`}}
	if diff := cmp.Diff(want, le.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	d, err := LoadData(context.Background(), spec, "testdata/lenient/spec.yaml", LoadOptions{Lenient: true, Upstream: "http://upstream.test"})
	if err != nil || len(d.Tools) != 1 {
		t.Fatalf("with Upstream: %v", err)
	}
}
