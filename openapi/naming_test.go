package openapi

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestNameStyles: N1 under each tool_name_style; N3 to N7 apply to all.
func TestNameStyles(t *testing.T) {
	for _, tc := range []struct{ opID, snake, kebab, asIs string }{
		{"etfs.topHoldings", "etfs_top_holdings", "etfs-top-holdings", "etfs_topHoldings"},
		{"get-accounts", "get_accounts", "get-accounts", "get-accounts"},
		{"recipientsByName", "recipients_by_name", "recipients-by-name", "recipientsByName"},
		{"2fa.verify", "op_2_fa_verify", "op_2-fa-verify", "op_2fa_verify"},
	} {
		for style, want := range map[string]string{NameSnake: tc.snake, NameKebab: tc.kebab, NameAsIs: tc.asIs, "": tc.snake} {
			if got := StyledToolName(tc.opID, "GET", "/x", 64, style); got != want {
				t.Errorf("StyledToolName(%q, %q) = %q, want %q", tc.opID, style, got, want)
			}
		}
	}
}

// TestStrictArguments: the input schema's root is closed, and a call with
// an argument the operation does not take is refused.
func TestStrictArguments(t *testing.T) {
	doc, err := LoadData(context.Background(), []byte(`openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: http://upstream.test}]
paths:
  /x:
    get:
      operationId: getX
      parameters: [{name: q, in: query, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /empty:
    get:
      operationId: getEmpty
      responses: {"200": {description: ok}}
`), "", LoadOptions{StrictArguments: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range doc.Tools {
		got[tl.Name] = string(tl.InputSchema)
	}
	want := map[string]string{
		"get_x":     `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`,
		"get_empty": `{"type":"object","properties":{},"additionalProperties":false}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s input schema:\n got %s\nwant %s", name, got[name], w)
		}
	}
	for _, tl := range doc.Tools {
		if tl.Name != "get_x" {
			continue
		}
		if _, err := tl.NewRequest(context.Background(), []byte(`{"q":"a"}`), ""); err != nil {
			t.Errorf("known argument: %v", err)
		}
		if _, err := tl.NewRequest(context.Background(), []byte(`{"q":"a","extra":1}`), ""); err == nil || err.Error() != "invalid arguments: extra: unknown argument" {
			t.Errorf("an unknown argument: %v", err)
		}
	}
}

// TestNamesStayAcrossReloads: N6 across reloads (LoadOptions.Served). Two
// operations want list_users; the second gets list_users_2. Reloaded
// without the first, the second keeps list_users_2 and list_users is given
// to no one (a new operation that wants it gets list_users_3); reloaded
// with the first back, each has its old name. A first load names from
// scratch.
func TestNamesStayAcrossReloads(t *testing.T) {
	doc := func(ops ...string) []byte {
		all := map[string]string{
			"a": `"/a":{"get":{"operationId":"list-users","responses":{"200":{"description":"ok"}}}}`,
			"b": `"/b":{"get":{"operationId":"list_users","responses":{"200":{"description":"ok"}}}}`,
			"c": `"/c":{"get":{"operationId":"listUsers","responses":{"200":{"description":"ok"}}}}`,
		}
		var paths []string
		for _, o := range ops {
			paths = append(paths, all[o])
		}
		return []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],"paths":{` + strings.Join(paths, ",") + `}}`)
	}
	load := func(served map[string]string, ops ...string) (*Document, []string) {
		t.Helper()
		d, err := LoadData(context.Background(), doc(ops...), "", LoadOptions{Served: served})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range d.Tools {
			names = append(names, tl.PathTemplate+"="+tl.Name)
		}
		return d, names
	}
	first, got := load(nil, "a", "b")
	if want := []string{"/a=list_users", "/b=list_users_2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first load: %q, want %q", got, want)
	}
	served := ServedNames(nil, first)
	second, got := load(served, "b", "c")
	if want := []string{"/b=list_users_2", "/c=list_users_3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("reloaded without /a, with /c: %q, want %q", got, want)
	}
	served = ServedNames(served, second)
	if _, got := load(served, "a", "b", "c"); !reflect.DeepEqual(got, []string{"/a=list_users", "/b=list_users_2", "/c=list_users_3"}) {
		t.Errorf("reloaded with /a back: %q", got)
	}
	if _, got := load(nil, "b", "c"); !reflect.DeepEqual(got, []string{"/b=list_users", "/c=list_users_2"}) {
		t.Errorf("a first load of /b and /c: %q", got)
	}
}
