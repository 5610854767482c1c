package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/testenv"
)

const brokenSpec = "../../openapi/testdata/lenient/unresolved-ref/spec.yaml"

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr strings.Builder
	err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidateCommand checks `restmcp validate`: its output and whether it
// fails (exit status 1 in main).
func TestValidateCommand(t *testing.T) {
	noMatch := writeFile(t, "nomatch.yaml", "overlay: 1.0.0\ninfo: {title: t, version: 1}\nactions:\n  - target: $.paths['/nope']\n    remove: true\n")
	fix := writeFile(t, "fix.yaml", `overlay: 1.0.0
info: {title: fix, version: 1}
actions:
  - target: $.components
    update:
      parameters:
        Missing: {name: q, in: query, schema: {type: string}}
      requestBodies:
        Gone: {content: {application/json: {schema: {type: object}}}}
      responses:
        Nope: {description: ok}
  - target: $.components.schemas
    update:
      Kind: {type: string, enum: [a, b]}
`)
	misspelt := writeFile(t, "strin.yaml", "openapi: 3.0.3\ninfo: {title: T, version: \"1\"}\nservers: [{url: \"http://x.test\"}]\npaths:\n  /a:\n    get:\n      operationId: getA\n      parameters: [{name: q, in: query, schema: {type: strin}}]\n      responses: {\"200\": {description: ok}}\n")
	notOpenAPI := writeFile(t, "hello.yaml", "hello: world\n")
	badOverlay := writeFile(t, "bad.yaml", "overlay: 1.0.0\ninfo: {title: t, version: 1}\nactions:\n  - target: $.info\n    update: {}\n  - target: info\n    remove: true\n")
	tests := []struct {
		name    string
		args    []string
		stdout  string
		wantErr string // "" for success; errUsage errors print their report to stdout
	}{
		{
			name:   "clean document",
			args:   []string{"validate", "--spec", "../../adapter/testdata/petstore.yaml"},
			stdout: "ok: \"Pet store\" version 1.0.0, 6 tools, 0 warning(s)\n",
		},
		{
			name: "broken document: every problem, then a summary; strict even with --lenient",
			args: []string{"validate", "--spec", brokenSpec, "--lenient"},
			stdout: brokenSpec + ` does not load as published: loading ` + brokenSpec + `: failed to resolve "Kind" in fragment in URI: "#/components/schemas/Kind": map key "Kind" not found
error: spec.yaml#/paths/~1orders~1{id}/parameters/0 (line 10): $ref "#/components/parameters/Missing": spec.yaml has no /components/parameters/Missing; parameter dropped
error: spec.yaml#/paths/~1orders~1{id}/put/requestBody (line 19) [PUT /orders/{id}]: $ref "#/components/requestBodies/Gone": spec.yaml has no /components/requestBodies/Gone; request body dropped
error: spec.yaml#/paths/~1orders~1{id}/put/responses/200 (line 22) [PUT /orders/{id}]: $ref "#/components/responses/Nope": spec.yaml has no /components/responses/Nope; response replaced by one without content
error: spec.yaml#/components/schemas/Order/properties/kind (line 40): $ref "#/components/schemas/Kind": spec.yaml has no /components/schemas/Kind; replaced by an empty (permissive) schema
4 error(s), 0 warning(s); lenient mode (serve's default) would serve 2 tools
`,
			wantErr: "validate " + brokenSpec + ": 4 error(s), 0 warning(s); lenient mode (serve's default) would serve 2 tools: usage",
		},
		{
			name:   "an overlay repairs it",
			args:   []string{"validate", "--spec", brokenSpec, "--overlay", fix},
			stdout: "ok: \"Unresolved refs\" version 1, 2 tools, 0 warning(s)\n",
		},
		{
			name: "overlay warnings are shown and exit 0",
			args: []string{"validate", "--spec", brokenSpec, "--overlay", fix, "--overlay", noMatch},
			stdout: "warning: " + noMatch + `#/actions/0 (line 4): overlay action target "$.paths['/nope']" matches nothing in spec.yaml` + "\n" +
				"ok: \"Unresolved refs\" version 1, 2 tools, 1 warning(s)\n",
		},
		{
			name: "a schema keyword that does not compile: every call of the tool would be refused",
			args: []string{"validate", "--spec", misspelt},
			stdout: `error: strin.yaml [GET /a]: tool get_a: argument "q": its schema does not compile (at '/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'), so every call of the tool would be refused` + "\n" +
				`"T" version 1: 1 error(s), 0 warning(s): 1 tools would refuse every call` + "\n",
			wantErr: "validate " + misspelt + ": 1 error(s), 0 warning(s): 1 tools would refuse every call: usage",
		},
		{
			name:    "not an OpenAPI document",
			args:    []string{"validate", "--spec", notOpenAPI},
			stdout:  notOpenAPI + ` does not load as published: loading ` + notOpenAPI + `: not an OpenAPI document: it has no top-level "openapi" (3.x) or "swagger" (2.0) member (its members: "hello")` + "\n0 error(s), 0 warning(s); lenient mode cannot load it either\n",
			wantErr: "validate " + notOpenAPI + ": 0 error(s), 0 warning(s); lenient mode cannot load it either: usage",
		},
		{
			name:    "malformed overlay",
			args:    []string{"validate", "--spec", brokenSpec, "--overlay", badOverlay},
			wantErr: "loading " + brokenSpec + ": overlay " + badOverlay + `: actions[1] (line 6): target "info": column 0: expected '$'`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, tc.args...)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("run error = %v\nwant %s", err, tc.wantErr)
			}
			if strings.HasSuffix(tc.wantErr, ": usage") && !errors.Is(err, errUsage) {
				t.Errorf("error %v does not match errUsage: main would print it again", err)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.stdout)
			}
		})
	}
}

// TestToolsCommandLenient: `restmcp tools` loads like serve, leniently by
// default; --lenient=false refuses the broken document.
func TestToolsCommandLenient(t *testing.T) {
	stdout, stderr, err := runCmd(t, "tools", "--spec", brokenSpec)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "create_order") || !strings.Contains(stdout, "put_order") {
		t.Errorf("tool table lacks the two tools:\n%s", stdout)
	}
	if n := strings.Count(stderr, "level=WARN msg=\"openapi document problem\""); n != 4 {
		t.Errorf("got %d problem warnings, want 4:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, `pointer=/components/schemas/Order/properties/kind line=40`) {
		t.Errorf("warnings do not name the pointer and line:\n%s", stderr)
	}
	_, _, err = runCmd(t, "tools", "--spec", brokenSpec, "--lenient=false")
	if err == nil || !strings.Contains(err.Error(), "4 problem(s) in "+brokenSpec) {
		t.Errorf("strict tools: got %v, want the load error listing 4 problems", err)
	}
}

// TestValidateRefRoot checks --ref-root: a document whose shared files sit
// beside its folder loads only when the ref root is their common parent.
func TestValidateRefRoot(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"spec/api.yaml": `openapi: 3.0.3
info: {title: Split, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "../common/thing.yaml"}
`,
		"common/thing.yaml": "type: object\nproperties:\n  id: {type: string}\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := filepath.Join(root, "spec", "api.yaml")

	stdout, _, err := runCmd(t, "validate", "--spec", spec)
	want := `$ref "../common/thing.yaml": points outside the spec root ` + filepath.Join(root, "spec")
	if err == nil || !strings.Contains(stdout, want) {
		t.Errorf("without --ref-root: err %v, stdout:\n%s\nwant an error and %q", err, stdout, want)
	}

	stdout, _, err = runCmd(t, "validate", "--spec", spec, "--ref-root", root)
	if wantOut := "ok: \"Split\" version 1, 1 tools, 0 warning(s)\n"; err != nil || stdout != wantOut {
		t.Errorf("with --ref-root: err %v, stdout %q; want nil, %q", err, stdout, wantOut)
	}
}

// TestValidateCountsWhatItPrints: every problem goes through the problem
// list and is printed once; the summary counts exactly what was printed
// (fdic-bankfind: 16 warnings, once logged outside the list and counted 0).
func TestValidateCountsWhatItPrints(t *testing.T) {
	spec := filepath.Join("..", "..", "..", "shared", "corpus", "fdic-bankfind-multifile", "swagger.yaml")
	if _, err := os.Stat(spec); err != nil {
		testenv.Unavailable(t, "RESTMCP_REQUIRE_CORPUS", "the corpus", "!!! SKIPPING: corpus not found ("+err.Error()+"); set RESTMCP_REQUIRE_CORPUS=1 to fail instead")
	}
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"validate", "--spec", spec, "--upstream", "http://upstream.test"}, func(string) string { return "" }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	warnings := 0
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "warning: ") {
			warnings++
		}
	}
	if last := lines[len(lines)-1]; warnings != 16 || last != `ok: "FDIC Bank Data API (Beta)" version 0.1.0, 8 tools, 16 warning(s)` {
		t.Errorf("%d warning lines, summary %q; want 16 and a summary that counts them", warnings, last)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr:\n%s\nwant nothing (every problem is on stdout once)", stderr.String())
	}
}
