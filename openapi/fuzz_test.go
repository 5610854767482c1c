package openapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"listUsers", "users/list", "get:status", "获取用户", "créerFacture", "", " ", "___", "a.b-c d",
		"ServiceAccountsManagementController_updateServiceAccountAuthorityGroupMembership", "\x00\xff", "v2/reports/daily-summary.csv"} {
		f.Add(s, "GET", "/users/{id}", 64)
		f.Add(s, "delete", "/", 12)
	}
	f.Fuzz(func(t *testing.T, opID, method, path string, max int) {
		if method == "" || strings.TrimSpace(method) == "" {
			method = "GET"
		}
		if max < minNameLength || max > 64 {
			max = 64
		}
		name := ToolName(opID, method, path, max)
		if !isToolName(name, max) {
			t.Fatalf("ToolName(%q, %q, %q, %d) = %q: not a valid name", opID, method, path, max, name)
		}
		if again := ToolName(opID, method, path, max); again != name {
			t.Fatalf("not deterministic: %q then %q", name, again)
		}
		taken := map[string]bool{name: true}
		if n2 := uniqueName(name, taken, max); !isToolName(n2, max) || n2 == name {
			t.Fatalf("uniqueName(%q) = %q", name, n2)
		}
	})
}

// FuzzPathParams checks that a path value can never change the request's
// path structure, host or query: it is always one encoded segment.
func FuzzPathParams(f *testing.F) {
	for _, s := range []string{"u1", "a/b", "..", ".", "", "%2F", "?x=1", "#frag", "a b", "../../admin", "x\r\ny", "é", "@evil.test"} {
		f.Add(s)
	}
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /users/{id}/items:
    get:
      operationId: getItems
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: OK}}
`), "", LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	tool := d.Tools[0]
	f.Fuzz(func(t *testing.T, v string) {
		args, _ := json.Marshal(map[string]string{"id": v})
		req, err := tool.NewRequest(context.Background(), args, "")
		if err != nil {
			var ae *ArgumentError
			if v == "" || v == "." || v == ".." || !json.Valid(args) {
				return
			}
			if !asArgumentError(err, &ae) {
				t.Fatalf("NewRequest(%q): unexpected error %v", v, err)
			}
			return
		}
		if v == "" || v == "." || v == ".." {
			t.Fatalf("NewRequest(%q) accepted a forbidden value", v)
		}
		u := req.URL
		if u.Host != "upstream.test" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("value %q changed the URL: %s", v, u)
		}
		p := u.EscapedPath()
		if !strings.HasPrefix(p, "/v1/users/") || !strings.HasSuffix(p, "/items") {
			t.Fatalf("value %q broke the path: %s", v, p)
		}
		seg := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/users/"), "/items")
		if strings.Contains(seg, "/") {
			t.Fatalf("value %q produced more than one segment: %s", v, p)
		}
		var sent map[string]string // the value as the JSON arguments carry it
		if err := json.Unmarshal(args, &sent); err != nil {
			t.Fatal(err)
		}
		got, err := url.PathUnescape(seg)
		if err != nil || got != sent["id"] {
			t.Fatalf("segment %q decodes to %q, want %q", seg, got, sent["id"])
		}
	})
}

func asArgumentError(err error, target **ArgumentError) bool {
	ae, ok := err.(*ArgumentError)
	if ok {
		*target = ae
	}
	return ok
}
