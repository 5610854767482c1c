package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// selectSpec has tags, an operation without operationId, a collision
// family (listUsers / list-users) and an x-mcp-name extension.
const selectSpec = `openapi: 3.0.3
info: {title: select, version: 1.0.0}
servers: [{url: 'http://upstream.test/v1'}]
paths:
  /admin/users:
    get: {operationId: adminListUsers, tags: [admin], responses: {'200': {description: OK}}}
    delete: {operationId: adminPurge, tags: [Admin, danger], responses: {'204': {description: Gone}}}
  /pets:
    get: {operationId: listPets, tags: [pets], responses: {'200': {description: OK}}}
    post: {operationId: createPet, tags: [pets], responses: {'201': {description: Created}}}
  /pets/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: getPet, tags: [pets], x-mcp-name: fetch_pet, responses: {'200': {description: OK}}}
    delete: {operationId: deletePet, tags: [pets, danger], responses: {'204': {description: Gone}}}
  /status:
    get: {responses: {'200': {description: OK}}}
  /users:
    get: {operationId: listUsers, tags: [users], responses: {'200': {description: OK}}}
  /v2/users:
    get: {operationId: list-users, tags: [users], responses: {'200': {description: OK}}}
`

func loadSelect(t *testing.T, spec string, opts LoadOptions) (*Document, error) {
	t.Helper()
	return LoadData(context.Background(), []byte(spec), "", opts)
}

func TestSelection(t *testing.T) {
	tests := []struct {
		name string
		sel  Selection
		max  int
		want []string
	}{
		{name: "zero value keeps all; x-mcp-name applies",
			want: []string{"admin_list_users", "admin_purge", "list_pets", "create_pet", "fetch_pet", "delete_pet", "get_status", "list_users", "list_users_2"}},
		{name: "include tag, case-insensitive",
			sel:  Selection{IncludeTags: []string{"ADMIN"}},
			want: []string{"admin_list_users", "admin_purge"}},
		{name: "exclude tag",
			sel:  Selection{ExcludeTags: []string{"danger", "admin"}},
			want: []string{"list_pets", "create_pet", "fetch_pet", "get_status", "list_users", "list_users_2"}},
		{name: "include operations by operationId glob",
			sel:  Selection{IncludeOperations: []string{"*Pet*"}},
			want: []string{"list_pets", "create_pet", "fetch_pet", "delete_pet"}},
		{name: "operation glob matches the generated name of an operation without operationId",
			sel:  Selection{IncludeOperations: []string{"get_sta?us"}},
			want: []string{"get_status"}},
		{name: "exclude operations",
			sel:  Selection{ExcludeOperations: []string{"admin*", "list*"}},
			want: []string{"create_pet", "fetch_pet", "delete_pet", "get_status"}},
		{name: "include methods",
			sel:  Selection{IncludeMethods: []string{"get"}},
			want: []string{"admin_list_users", "list_pets", "fetch_pet", "get_status", "list_users", "list_users_2"}},
		{name: "exclude methods",
			sel:  Selection{ExcludeMethods: []string{"DELETE", "post"}},
			want: []string{"admin_list_users", "list_pets", "fetch_pet", "get_status", "list_users", "list_users_2"}},
		{name: "dimensions are ANDed",
			sel:  Selection{IncludeTags: []string{"pets"}, IncludeMethods: []string{"GET"}, ExcludeOperations: []string{"getPet"}},
			want: []string{"list_pets"}},
		{name: "excluded operations consume no name",
			sel:  Selection{ExcludeOperations: []string{"listUsers"}},
			want: []string{"admin_list_users", "admin_purge", "list_pets", "create_pet", "fetch_pet", "delete_pet", "get_status", "list_users"}},
		{name: "config name wins over x-mcp-name",
			sel:  Selection{IncludeTags: []string{"pets"}, Names: map[string]string{"getPet": "pet"}},
			want: []string{"list_pets", "create_pet", "pet", "delete_pet"}},
		{name: "override takes its name first; generated names collide around it",
			sel:  Selection{IncludeTags: []string{"users", "pets"}, Names: map[string]string{"createPet": "list_users", "deletePet": "list_pets"}},
			want: []string{"list_pets_2", "list_users", "fetch_pet", "list_pets", "list_users_2", "list_users_3"}},
		{name: "override on an excluded operation is ignored",
			sel:  Selection{IncludeTags: []string{"users"}, Names: map[string]string{"getPet": "list_users"}},
			want: []string{"list_users", "list_users_2"}},
		{name: "override may be as long as MaxNameLength",
			sel:  Selection{IncludeOperations: []string{"listPets"}, Names: map[string]string{"listPets": "abcdefghij_klmnopqrst"}},
			max:  21,
			want: []string{"abcdefghij_klmnopqrst"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := loadSelect(t, selectSpec, LoadOptions{Select: tt.sel, MaxNameLength: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toolNames(d)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSelectionDeterministic: the same selection gives the same names on
// every load, and a second load with the same options logs the same
// renames, each naming the operation that kept the name.
func TestSelectionDeterministic(t *testing.T) {
	sel := Selection{Names: map[string]string{"createPet": "list_users"}}
	var logs bytes.Buffer
	a, err := loadSelect(t, selectSpec, LoadOptions{Select: sel, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, err := loadSelect(t, selectSpec, LoadOptions{Select: sel})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(toolNames(a), toolNames(b)); diff != "" {
			t.Fatalf("load %d differs (-first +this):\n%s", i+2, diff)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["level"] == "WARN" {
			got = append(got, m["operation_id"].(string)+" -> "+m["tool"].(string)+" (kept by "+m["kept_by"].(string)+")")
		}
	}
	want := []string{
		"listUsers -> list_users_2 (kept by POST /pets (createPet))",
		"list-users -> list_users_3 (kept by POST /pets (createPet))",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rename warnings (-want +got):\n%s", diff)
	}
}

// selectSpec with a defective x-mcp-name: the one of getPet also on
// listPets, not a valid tool name, not a string.
var (
	dupExt    = strings.Replace(selectSpec, "get: {operationId: listPets,", "get: {operationId: listPets, x-mcp-name: fetch_pet,", 1)
	badExt    = strings.Replace(selectSpec, "x-mcp-name: fetch_pet", "x-mcp-name: 'fetch.pet'", 1)
	nonString = strings.Replace(selectSpec, "x-mcp-name: fetch_pet", "x-mcp-name: 7", 1)
)

func TestSelectionErrors(t *testing.T) {
	tests := []struct {
		name string
		spec string
		sel  Selection
		max  int
		want []string // substrings of the error
	}{
		{name: "duplicate config names name both operations", spec: selectSpec,
			sel:  Selection{Names: map[string]string{"listPets": "pets", "createPet": "pets"}},
			want: []string{`tool name "pets" is given to both GET /pets (listPets) and POST /pets (createPet)`}},
		{name: "config name equal to an x-mcp-name", spec: selectSpec,
			sel:  Selection{Names: map[string]string{"listPets": "fetch_pet"}},
			want: []string{`tool name "fetch_pet" is given to both GET /pets (listPets) and GET /pets/{id} (getPet)`}},
		{name: "duplicate x-mcp-name", spec: dupExt,
			want: []string{`tool name "fetch_pet" is given to both GET /pets (listPets) and GET /pets/{id} (getPet)`}},
		{name: "invalid config name", spec: selectSpec,
			sel:  Selection{Names: map[string]string{"listPets": "list pets"}},
			want: []string{`GET /pets (listPets): tool name override "list pets" must match ^[a-zA-Z0-9_-]{1,64}$`}},
		{name: "config name too long for MaxNameLength", spec: selectSpec, max: 12,
			sel:  Selection{Names: map[string]string{"listPets": "list_all_pets"}},
			want: []string{`"list_all_pets" must match ^[a-zA-Z0-9_-]{1,12}$`}},
		{name: "empty config name", spec: selectSpec,
			sel:  Selection{Names: map[string]string{"listPets": ""}},
			want: []string{`tool name override "" must match`}},
		{name: "invalid x-mcp-name", spec: badExt,
			want: []string{`GET /pets/{id} (getPet): x-mcp-name "fetch.pet" must match`}},
		{name: "x-mcp-name not a string", spec: nonString,
			want: []string{`GET /pets/{id} (getPet) (#/paths/~1pets~1{id}/get/x-mcp-name): x-mcp-name: must be a string, got 7`}},
		{name: "unknown operationId in names", spec: selectSpec,
			sel:  Selection{Names: map[string]string{"listPet": "pets", "nope": "x"}},
			want: []string{`operationId "listPet": no operation has that operationId`, `operationId "nope"`}},
		{name: "bad selection entries, all reported", spec: selectSpec,
			sel:  Selection{IncludeMethods: []string{"FETCH"}, ExcludeOperations: []string{" "}},
			want: []string{`include methods: unknown HTTP method "FETCH"`, `exclude operations: empty pattern`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadSelect(t, tt.spec, LoadOptions{Select: tt.sel, MaxNameLength: tt.max})
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "anything/at all", true},
		{"list*", "listUsers", true},
		{"list*", "ListUsers", false},
		{"*Users", "listUsers", true},
		{"*Pet*", "getPetPhoto", true},
		{"get?ser", "getUser", true},
		{"get?ser", "getUsers", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"repos/*/issues", "repos/o/r/issues", true},
		{"[ab]", "[ab]", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := MatchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestDescriptionCombinesSummaryAndDescription(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: d, version: 1.0.0}
servers: [{url: 'http://upstream.test'}]
paths:
  /a:
    get: {operationId: both, summary: List things, description: "Returns every thing.\nPaged.", responses: {'200': {description: OK}}}
  /b:
    get: {operationId: same, summary: Same text, description: ' Same text ', responses: {'200': {description: OK}}}
  /c:
    get: {operationId: descOnly, description: Only a description., responses: {'200': {description: OK}}}
  /d:
    get: {operationId: neither, responses: {'200': {description: OK}}}
`
	d, err := loadSelect(t, spec, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, title, desc string }{
		{"both", "List things", "List things\n\nReturns every thing.\nPaged."},
		{"same", "Same text", "Same text"},
		{"desc_only", "", "Only a description."},
		{"neither", "", "GET /d"},
	}
	for _, tt := range tests {
		tl := toolByName(t, d, tt.tool)
		if tl.Title != tt.title || tl.Description != tt.desc {
			t.Errorf("%s: title, description = %q, %q; want %q, %q", tt.tool, tl.Title, tl.Description, tt.title, tt.desc)
		}
	}
}

// TestLenientDropTakesNoName: an operation dropped in lenient mode (here
// for an invalid x-restmcp-cost) takes no name, like an excluded one.
func TestLenientDropTakesNoName(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: l, version: 1.0.0}
servers: [{url: 'http://upstream.test'}]
paths:
  /a:
    get: {operationId: listUsers, x-restmcp-cost: -1, responses: {'200': {description: OK}}}
  /b:
    get: {operationId: list-users, responses: {'200': {description: OK}}}
  /c:
    get: {operationId: getThing, x-mcp-name: list_things, x-restmcp-cost: -1, responses: {'200': {description: OK}}}
  /d:
    get: {operationId: listThings, responses: {'200': {description: OK}}}
`
	if _, err := loadSelect(t, spec, LoadOptions{}); err == nil {
		t.Fatal("strict load succeeded, want the cost error")
	}
	d, err := loadSelect(t, spec, LoadOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"list_users", "list_things"}, toolNames(d)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if r := d.Report(ReportOptions{}); len(r.Collisions) != 0 {
		t.Errorf("collisions = %v, want none", r.Collisions)
	}
}

// TestLenientExtensionNames checks that lenient mode serves an operation
// whose x-mcp-name is defective under its generated name, with one problem
// naming the defect, while config overrides keep their priority.
func TestLenientExtensionNames(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		sel      Selection
		tools    []string
		problems []string
	}{
		{name: "duplicate x-mcp-name: the first in N6 order keeps it", spec: dupExt,
			tools:    []string{"admin_list_users", "admin_purge", "fetch_pet", "create_pet", "get_pet", "delete_pet", "get_status", "list_users", "list_users_2"},
			problems: []string{`error: <data>#/paths/~1pets~1{id}/get/x-mcp-name [GET /pets/{id}]: tool name "fetch_pet" is given to both GET /pets (listPets) and GET /pets/{id} (getPet); the generated name get_pet is used instead`}},
		{name: "invalid x-mcp-name", spec: badExt,
			tools:    []string{"admin_list_users", "admin_purge", "list_pets", "create_pet", "get_pet", "delete_pet", "get_status", "list_users", "list_users_2"},
			problems: []string{`error: <data>#/paths/~1pets~1{id}/get/x-mcp-name [GET /pets/{id}]: GET /pets/{id} (getPet): x-mcp-name "fetch.pet" must match ^[a-zA-Z0-9_-]{1,64}$; the generated name get_pet is used instead`}},
		{name: "x-mcp-name not a string", spec: nonString,
			tools:    []string{"admin_list_users", "admin_purge", "list_pets", "create_pet", "get_pet", "delete_pet", "get_status", "list_users", "list_users_2"},
			problems: []string{`error: <data>#/paths/~1pets~1{id}/get/x-mcp-name [GET /pets/{id}]: GET /pets/{id} (getPet) (#/paths/~1pets~1{id}/get/x-mcp-name): x-mcp-name: must be a string, got 7; the generated name get_pet is used instead`}},
		{name: "config name wins over an equal x-mcp-name", spec: selectSpec,
			sel:      Selection{Names: map[string]string{"deletePet": "fetch_pet"}},
			tools:    []string{"admin_list_users", "admin_purge", "list_pets", "create_pet", "get_pet", "fetch_pet", "get_status", "list_users", "list_users_2"},
			problems: []string{`error: <data>#/paths/~1pets~1{id}/get/x-mcp-name [GET /pets/{id}]: tool name "fetch_pet" is given to both GET /pets/{id} (getPet) and DELETE /pets/{id} (deletePet); the generated name get_pet is used instead`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := loadSelect(t, tt.spec, LoadOptions{Select: tt.sel, Lenient: true})
			if err != nil {
				t.Fatalf("lenient Load: %v", err)
			}
			var tools, problems []string
			for _, tl := range d.Tools {
				tools = append(tools, tl.Name)
			}
			for _, p := range d.Problems {
				problems = append(problems, p.String())
			}
			if diff := cmp.Diff(tt.tools, tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}

	// A config override's own defect stays an error in lenient mode: it is
	// the operator's setting, not the vendor's document.
	_, err := loadSelect(t, selectSpec, LoadOptions{Lenient: true, Select: Selection{Names: map[string]string{"listPets": "list pets"}}})
	if want := `GET /pets (listPets): tool name override "list pets" must match ^[a-zA-Z0-9_-]{1,64}$`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("lenient Load with an invalid config name: %v, want an error containing %q", err, want)
	}
}
