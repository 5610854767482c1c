package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestAPIs loads an apis list from the config file, with per-API settings
// that replace the top-level ones for that API alone, and a named --spec
// and --upstream from the command line.
func TestAPIs(t *testing.T) {
	path := writeFile(t, "restmcp.yaml", `
default_security: header:X-Api-Key
include_methods: [get, post]
apis:
  - name: checkout
    spec: checkout.json
    upstream: http://127.0.0.1:9001/v72
    tool_names: {"post-payments": pay}
  - name: transfers
    spec: transfers.json
    default_security: basic
    server_variables: {environment: test}
`)
	c, err := Load([]string{"--config", path, "--spec", "balance=bp.json", "--upstream", "balance=http://127.0.0.1:9003", "--upstream", "transfers=http://127.0.0.1:9002/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec != "" || c.Upstream != "" {
		t.Errorf("Spec %q, Upstream %q; want both empty", c.Spec, c.Upstream)
	}
	type view struct {
		Name, Spec, Upstream, DefaultSecurity string
		IncludeMethods                        []string
		ToolNames, ServerVariables            map[string]string
	}
	var got []view
	for i, a := range c.APIs {
		f := c.ForAPI(i)
		got = append(got, view{a.Name, f.Spec, f.Upstream, f.DefaultSecurity, f.IncludeMethods, f.ToolNames, f.ServerVariables})
	}
	want := []view{
		{"checkout", "checkout.json", "http://127.0.0.1:9001/v72", "header:X-Api-Key", []string{"get", "post"}, map[string]string{"post-payments": "pay"}, nil},
		{"transfers", "transfers.json", "http://127.0.0.1:9002/", "basic", []string{"get", "post"}, nil, map[string]string{"environment": "test"}},
		{"balance", "bp.json", "http://127.0.0.1:9003", "header:X-Api-Key", []string{"get", "post"}, nil, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("APIs:\n got %+v\nwant %+v", got, want)
	}
	if f := c.ForAPI(0); f.APIs != nil {
		t.Errorf("ForAPI keeps the apis list: %v", f.APIs)
	}

	// A single unnamed --spec keeps working as before.
	c, err = Load([]string{"--spec", "https://example.com/openapi.json?v=2", "--upstream", "http://127.0.0.1:1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec != "https://example.com/openapi.json?v=2" || c.Upstream != "http://127.0.0.1:1" || c.APIs != nil {
		t.Errorf("single spec: Spec %q Upstream %q APIs %v", c.Spec, c.Upstream, c.APIs)
	}
}

func TestAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       []string
	}{
		{name: "mixed named and unnamed", args: []string{"--spec", "a=a.json", "--spec", "b.json"},
			want: []string{`--spec: name every document (--spec NAME=PATH) when serving several; "b.json" has no name`}},
		{name: "two unnamed", args: []string{"--spec", "a.json", "--spec", "b.json"},
			want: []string{"--spec is given 2 times without names; serve several documents as --spec NAME=PATH each"}},
		{name: "one name the prefix of another", args: []string{"--spec", "a_b=ab.json", "--spec", "a=a.json", "--spec", "a_bc=abc.json"},
			want: []string{`apis[1].name: "a_b" (apis[0]) begins with "a" (apis[1]) and _: their tools' names would share the prefix a_, so a plan pattern such as a_* would grant both APIs' tools; rename one`,
				`apis[2].name: "a_bc" (apis[2]) begins with "a" (apis[1]) and _: their tools' names would share the prefix a_, so a plan pattern such as a_* would grant both APIs' tools; rename one`}},
		{name: "one name twice", args: []string{"--spec", "a=x.json", "--spec", "a=y.json", "--spec", "b=b.json"},
			want: []string{`--spec a=…: the API "a" is given twice (x.json and y.json); give each API one document`}},
		{name: "two upstreams for one name", args: []string{"--spec", "a=a.json", "--upstream", "a=http://127.0.0.1:1", "--upstream", "a=http://127.0.0.1:2"},
			want: []string{`--upstream a=…: the API "a" is given two upstreams (http://127.0.0.1:1 and http://127.0.0.1:2); give each API one`}},
		{name: "upstream for no API", args: []string{"--spec", "a=a.json", "--upstream", "b=http://x"},
			want: []string{`--upstream b=…: no API is named "b" (APIs: a)`}},
		{name: "unnamed upstream beside apis", args: []string{"--spec", "a=a.json", "--upstream", "http://127.0.0.1:1"},
			want: []string{"upstream: is set beside apis: give each API its own upstream (apis[i].upstream, or --upstream NAME=URL)"}},
		{name: "file errors", file: `
spec: one.json
apis:
  - name: Checkout
    spec: a.json
  - name: b
    upstream: ftp://x
    colour: red
  - name: c
    spec: c.json
    upstream: 127.0.0.1:9
  - name: c
    spec: d.json
    include_methods: [fetch]
`, want: []string{
			`line 8: apis[1]: unknown key "colour" (an API takes name, spec, upstream, overlay, ref_root, server_variables, upstream_hosts, include_tags, exclude_tags, include_operations, exclude_operations, include_methods, exclude_methods, default_security, credential_parameters, tool_names, tool_annotations)`,
		}},
		{name: "file values", file: `
spec: one.json
apis:
  - name: Checkout
    spec: a.json
  - name: b
  - name: c
    spec: c.json
    upstream: 127.0.0.1:9
  - name: c
    spec: d.json
    include_methods: [fetch]
`, want: []string{
			`spec: is set beside apis (Checkout, b, c, c): serve one document with spec, or several with apis, each with its own spec`,
			`apis[0].name: "Checkout" must be 1 to 24 characters of a-z, 0-9 and _, starting with a letter and not ending with _`,
			`apis[1].spec: is required (a file path or an http(s) URL)`,
			`apis[2] (c): upstream: has no scheme: add http:// or https://, e.g. "http://127.0.0.1:9"`,
			`apis[3].name: "c" is also the name of apis[2]; API names must differ`,
			`apis[3] (c): include_methods: unknown HTTP method "fetch" (use get, put, post, delete, options, head, patch or trace)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append(args, "--config", writeFile(t, "c.yaml", tc.file))
			}
			_, err := Load(args, nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
