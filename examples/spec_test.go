package examples

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// loadSpec decodes DemoSpec into generic JSON-shaped values.
func loadSpec(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(DemoSpec(), &doc); err != nil {
		t.Fatalf("DemoSpec is not valid YAML: %v", err)
	}
	return jsonShape(t, doc).(map[string]any)
}

// jsonShape round-trips v through encoding/json, so YAML ints and JSON
// float64s compare equal.
func jsonShape(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// at follows a path of map keys and slice indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %v is not a mapping", path, k)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q", path, k)
			}
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				t.Fatalf("at %v: no index %d", path, k)
			}
			v = s[k]
		}
	}
	return v
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func TestDemoSpecDocument(t *testing.T) {
	doc := loadSpec(t)
	checks := []struct {
		path []any
		want any
	}{
		{[]any{"openapi"}, "3.1.0"},
		{[]any{"info", "title"}, "Demo Finance Data API"},
		{[]any{"info", "version"}, "1.0.0"},
		{[]any{"servers", 0, "url"}, "https://api.finance.example/v1"},
		{[]any{"security"}, []any{map[string]any{"apiKey": []any{}}}},
		{[]any{"components", "securitySchemes", "apiKey", "type"}, "apiKey"},
		{[]any{"components", "securitySchemes", "apiKey", "in"}, "header"},
		{[]any{"components", "securitySchemes", "apiKey", "name"}, APIKeyHeader},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, at(t, doc, c.path...)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.path, diff)
		}
	}
}

func TestDemoSpecOperations(t *testing.T) {
	doc := loadSpec(t)
	got := map[string]string{}
	for path, item := range at(t, doc, "paths").(map[string]any) {
		for _, m := range methods {
			op, ok := item.(map[string]any)[m].(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			got[id] = strings.ToUpper(m) + " " + path
			for _, field := range []string{"summary", "description"} {
				if s, _ := op[field].(string); len(s) < 10 {
					t.Errorf("%s: %s missing or too short", id, field)
				}
			}
			if tags, _ := op["tags"].([]any); len(tags) != 1 {
				t.Errorf("%s: want exactly one tag, got %v", id, op["tags"])
			}
			var ok2xx bool
			for code, resp := range op["responses"].(map[string]any) {
				if strings.HasPrefix(code, "2") {
					ok2xx = true
					if _, ok := at(t, resp, "content", "application/json", "schema", "$ref").(string); !ok {
						t.Errorf("%s %s: response schema is not a $ref to a component", id, code)
					}
				}
			}
			if !ok2xx {
				t.Errorf("%s: no 2xx response", id)
			}
		}
	}
	want := map[string]string{
		"status.get":        "GET /status",
		"equities.profile":  "GET /equities/{symbol}/profile",
		"equities.quote":    "GET /equities/{symbol}/quote",
		"etfs.topHoldings":  "GET /etfs/{symbol}/holdings",
		"fx.rates":          "GET /fx/rates",
		"watchlists.create": "POST /watchlists",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}

	// The details the adapter's conventions are exercised with.
	paths := at(t, doc, "paths")
	if diff := cmp.Diff([]any{}, at(t, paths, "/status", "get", "security")); diff != "" {
		t.Errorf("status.get must be public (security: []):\n%s", diff)
	}
	limit := at(t, paths, "/etfs/{symbol}/holdings", "get", "parameters", 1)
	if diff := cmp.Diff(map[string]any{"type": "integer", "minimum": 1.0, "maximum": 50.0, "default": 10.0}, at(t, limit, "schema")); diff != "" {
		t.Errorf("limit schema (-want +got):\n%s", diff)
	}
	base := at(t, paths, "/fx/rates", "get", "parameters", 0)
	if at(t, base, "name") != "base" || at(t, base, "schema", "default") != "USD" {
		t.Errorf("base parameter: %v", base)
	}
	symbols := at(t, paths, "/fx/rates", "get", "parameters", 1)
	for k, want := range map[string]any{"name": "symbols", "in": "query", "style": "form", "explode": false} {
		if got := at(t, symbols, k); got != want {
			t.Errorf("symbols.%s = %v, want %v", k, got, want)
		}
	}
	if at(t, symbols, "schema", "type") != "array" || at(t, symbols, "schema", "items", "type") != "string" {
		t.Errorf("symbols schema: %v", at(t, symbols, "schema"))
	}
	create := at(t, paths, "/watchlists", "post")
	if at(t, create, "requestBody", "required") != true {
		t.Error("watchlists.create: requestBody must be required")
	}
	if _, ok := at(t, create, "responses").(map[string]any)["201"]; !ok {
		t.Error("watchlists.create: no 201 response")
	}
	input := at(t, doc, "components", "schemas", "WatchlistInput")
	if diff := cmp.Diff([]any{"name", "symbols"}, at(t, input, "required")); diff != "" {
		t.Errorf("WatchlistInput.required:\n%s", diff)
	}
}

// TestDemoSpecRefsResolve checks every $ref points at something in the
// document.
func TestDemoSpecRefsResolve(t *testing.T) {
	doc := loadSpec(t)
	var walk func(v any, where string)
	n := 0
	walk = func(v any, where string) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				n++
				if !strings.HasPrefix(ref, "#/") {
					t.Errorf("%s: external $ref %q", where, ref)
					return
				}
				var cur any = doc
				for _, p := range strings.Split(ref[2:], "/") {
					m, _ := cur.(map[string]any)
					if cur, ok = m[p]; !ok {
						t.Errorf("%s: $ref %q does not resolve", where, ref)
						return
					}
				}
			}
			for k, v := range x {
				walk(v, where+"/"+k)
			}
		case []any:
			for i, v := range x {
				walk(v, fmt.Sprintf("%s/%d", where, i))
			}
		}
	}
	walk(doc, "#")
	if n < 10 {
		t.Errorf("found only %d $refs", n)
	}
}

// TestDemoSpecExamplesMatchUpstream checks that each operation's documented
// success example is exactly what the demo upstream answers to the matching
// request, so the spec and the handler cannot drift apart.
func TestDemoSpecExamplesMatchUpstream(t *testing.T) {
	doc := loadSpec(t)
	h := NewDemoUpstream(nil)
	tests := []struct {
		path, method, code string
		target, body       string
	}{
		{"/status", "get", "200", "/v1/status", ""},
		{"/equities/{symbol}/profile", "get", "200", "/v1/equities/AAPL/profile", ""},
		{"/equities/{symbol}/quote", "get", "200", "/v1/equities/AAPL/quote", ""},
		{"/etfs/{symbol}/holdings", "get", "200", "/v1/etfs/SPY/holdings?limit=2", ""},
		{"/fx/rates", "get", "200", "/v1/fx/rates?symbols=EUR,GBP", ""},
		{"/watchlists", "post", "201", "/v1/watchlists", `{"name":"Tech leaders","symbols":["AAPL","MSFT","NVDA"]}`},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			covered[tt.path] = true
			example := at(t, doc, "paths", tt.path, tt.method, "responses", tt.code, "content", "application/json", "example")
			resp := do(t, h, strings.ToUpper(tt.method), tt.target, "k-123", "application/json", tt.body)
			body := readBody(t, resp)
			if code := fmt.Sprint(resp.StatusCode); code != tt.code {
				t.Fatalf("%s: status %s, want %s (%s)", tt.target, code, tt.code, body)
			}
			var got any
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(example, got); diff != "" {
				t.Errorf("spec example vs upstream %s (-spec +upstream):\n%s", tt.target, diff)
			}
		})
	}
	var paths []string
	for p := range at(t, doc, "paths").(map[string]any) {
		if !covered[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		t.Errorf("paths without an example check: %v", paths)
	}
}

// TestDemoSpecErrorExamplesMatchUpstream does the same for the shared error
// responses.
func TestDemoSpecErrorExamplesMatchUpstream(t *testing.T) {
	doc := loadSpec(t)
	h := NewDemoUpstream(nil)
	for name, target := range map[string]string{
		"BadRequest":   "/v1/etfs/SPY/holdings?limit=500",
		"Unauthorized": "/v1/fx/rates",
		"NotFound":     "/v1/equities/ZZZZ/quote",
	} {
		key := "k-123"
		if name == "Unauthorized" {
			key = ""
		}
		example := at(t, doc, "components", "responses", name, "content", "application/json", "example")
		var got any
		if err := json.Unmarshal([]byte(readBody(t, do(t, h, "GET", target, key, "", ""))), &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(example, got); diff != "" {
			t.Errorf("%s example vs upstream %s (-spec +upstream):\n%s", name, target, diff)
		}
	}
}
