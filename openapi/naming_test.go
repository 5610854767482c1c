package openapi

import (
	"context"
	"reflect"
	"strconv"
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

// TestAnnotations: the method's defaults (DELETE destructive and
// idempotent), x-mcp-annotations and x-restmcp-annotations (which wins),
// and Selection.Annotations over both; a defective extension is a problem
// in lenient mode (the operation keeps the method's hints) and an error in
// strict mode; a defective tool_annotations value or an unknown
// operationId is always an error.
func TestAnnotations(t *testing.T) {
	doc := func(ext string) []byte {
		return []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],"paths":{
			"/items":{"post":{"operationId":"searchItems",` + ext + `"responses":{"200":{"description":"ok"}}},
			          "delete":{"operationId":"deleteItems","responses":{"204":{"description":"gone"}}}},
			"/mail":{"post":{"operationId":"sendMail","responses":{"202":{"description":"queued"}}}}}}`)
	}
	type hints struct {
		Title                             string
		ReadOnly, Destructive, Idempotent bool
		OpenWorld                         string
	}
	load := func(ext string, lenient bool, config map[string]string) (map[string]hints, []Problem, error) {
		d, err := LoadData(context.Background(), doc(ext), "t.json", LoadOptions{Lenient: lenient, Select: Selection{Annotations: config}})
		if err != nil {
			return nil, nil, err
		}
		out := map[string]hints{}
		for _, tl := range d.Tools {
			h := hints{Title: tl.Title, ReadOnly: tl.ReadOnly, Destructive: tl.Destructive, Idempotent: tl.Idempotent, OpenWorld: "unset"}
			if tl.OpenWorld != nil {
				h.OpenWorld = strconv.FormatBool(*tl.OpenWorld)
			}
			out[tl.Name] = h
		}
		return out, d.Problems, nil
	}
	got, _, err := load(`"x-mcp-annotations":{"readOnlyHint":true,"title":"Search items","openWorldHint":false},"x-restmcp-annotations":{"idempotentHint":true},`, false,
		map[string]string{"sendMail": `!idempotent openWorld title="Send a mail"`})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hints{
		"search_items": {Title: "Search items", ReadOnly: true, Idempotent: true, OpenWorld: "false"},
		"delete_items": {Destructive: true, Idempotent: true, OpenWorld: "unset"},
		"send_mail":    {Title: "Send a mail", OpenWorld: "true"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hints:\n got %+v\nwant %+v", got, want)
	}
	// The operator's entry wins over the document's extension.
	got, _, _ = load(`"x-mcp-annotations":{"readOnlyHint":true},`, false, map[string]string{"searchItems": "!readOnly destructive"})
	if h := got["search_items"]; h.ReadOnly || !h.Destructive {
		t.Errorf("tool_annotations over x-mcp-annotations: %+v", h)
	}
	const bad = `"x-mcp-annotations":{"readOnlyHint":"yes"},`
	if _, _, err := load(bad, false, nil); err == nil || !strings.Contains(err.Error(), "x-mcp-annotations: readOnlyHint: must be true or false, got a string") {
		t.Errorf("strict, defective extension: %v", err)
	}
	got, problems, err := load(bad, true, nil)
	if err != nil || got["search_items"].ReadOnly || len(problems) != 1 ||
		problems[0].Message != "x-mcp-annotations: readOnlyHint: must be true or false, got a string; the extension is left out" {
		t.Errorf("lenient, defective extension: %v %+v %+v", err, got["search_items"], problems)
	}
	for _, c := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"searchItems": "readonly"}, `tool annotations for operationId "searchItems": unknown hint "readonly" (use readOnly, destructive, idempotent, openWorld, each with ! for false, and title="…")`},
		{map[string]string{"searchItems": `title="open`}, `tool annotations for operationId "searchItems": title: no closing quote`},
		{map[string]string{"nope": "readOnly"}, `tool annotations for operationId "nope": no operation has that operationId`},
	} {
		if _, _, err := load("", true, c.config); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s", c.config, err, c.want)
		}
	}
}
