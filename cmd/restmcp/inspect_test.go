package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestToolsCommand runs `restmcp tools` with a selection and a name
// override and checks the table and the report.
func TestToolsCommand(t *testing.T) {
	var stdout, stderr strings.Builder
	args := []string{"tools", "--spec", "../../adapter/testdata/petstore.yaml",
		"--exclude-methods", "delete", "--exclude-operations", "getStatus",
		"--tool-names", "getPetPhoto=get_pet", "--report-max-tools", "3"}
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	var table []string
	for _, l := range lines {
		if l == "" {
			break
		}
		f := strings.Fields(l)
		table = append(table, strings.Join(f[:3], " "))
	}
	want := []string{
		"NAME METHOD PATH",
		"list_pets GET /pets",
		"create_pet POST /pets",
		"get_pet_2 GET /pets/{petId}",
		"get_pet GET /pets/{petId}/photo",
	}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("tool table (-want +got):\n%s", diff)
	}
	for _, w := range []string{
		"\ntools: 4\n",
		"tools/list bytes: ",
		"longest names: create_pet (10) get_pet_2 (9) list_pets (9) get_pet (7)\n",
		"collisions: 1\n  get_pet_2 (wanted get_pet): GET /pets/{petId} (getPet)\n",
		"warning: 4 tools is more than 3",
	} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, stdout.String())
		}
	}
}

func TestToolsCommandBadOverride(t *testing.T) {
	var stdout, stderr strings.Builder
	args := []string{"tools", "--spec", "../../adapter/testdata/petstore.yaml", "--tool-names", "getPet=pets,listPets=pets"}
	err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `tool name "pets" is given to both GET /pets (listPets) and GET /pets/{petId} (getPet)`) {
		t.Errorf("run error = %v, want the duplicate override named", err)
	}
}

// TestServerVariablesSetting: server_variables picks a server URL variable
// (the tool table shows the URL); a value outside the enum fails with the
// allowed values.
func TestServerVariablesSetting(t *testing.T) {
	const spec = "../../openapi/testdata/C20-servers/openapi.yaml"
	for _, tt := range []struct{ vars, want string }{{"", "https://eu.api.example.test/v2"}, {"region=us", "https://us.api.example.test/v2"}} {
		var stdout, stderr strings.Builder
		args := []string{"tools", "--spec", spec}
		if tt.vars != "" {
			args = append(args, "--server-variables", tt.vars)
		}
		if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatalf("run %v: %v\n%s", args, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "list_things") || !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("server_variables %q: output lacks list_things at %s:\n%s", tt.vars, tt.want, stdout.String())
		}
	}
	var stdout, stderr strings.Builder
	env := map[string]string{"RESTMCP_SERVER_VARIABLES": "region=mars"}
	err := run(context.Background(), []string{"tools", "--spec", spec}, func(k string) string { return env[k] }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `server variable "region": value "mars" is not allowed; allowed values: eu, us`) {
		t.Errorf("region=mars: %v, want the allowed values named", err)
	}
}

// TestRelativeServersNeedNoUpstream: tools and validate list a document
// with a relative server URL without an upstream; serve refuses it with one
// line that names the setting.
func TestRelativeServersNeedNoUpstream(t *testing.T) {
	const spec = "../../openapi/testdata/C20-servers/openapi-relative.yaml"
	for _, cmd := range []string{"tools", "validate"} {
		var stdout, stderr strings.Builder
		if err := run(context.Background(), []string{cmd, "--spec", spec}, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Errorf("%s: %v\n%s%s", cmd, err, stdout.String(), stderr.String())
		}
		if strings.Contains(stdout.String()+stderr.String(), "configure the upstream base URL") {
			t.Errorf("%s still reports the relative server per operation:\n%s%s", cmd, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	env := map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_ADDR": "127.0.0.1:0"}
	err := run(context.Background(), nil, func(k string) string { return env[k] }, &stdout, &stderr)
	want := `loading ` + spec + `: the document's server URL "/api/v1" is relative: set the upstream base URL with --upstream or RESTMCP_UPSTREAM (upstream in the config file)`
	if err == nil || err.Error() != want {
		t.Errorf("serve: %v\nwant %s", err, want)
	}
}

// TestClientsCommand: restmcp clients prints correct configurations for
// each client, named after the API's title, with public_url
// (testdata/clients.golden), and the OAuth MCP URL for Claude and ChatGPT
// connectors with --oauth (testdata/clients_oauth.golden).
func TestClientsCommand(t *testing.T) {
	for golden, extra := range map[string][]string{"testdata/clients.golden": nil, "testdata/clients_oauth.golden": {"--oauth"}} {
		var stdout, stderr strings.Builder
		args := append([]string{"clients", "--spec", "testdata/plans_api.yaml", "--public-url", "https://mcp.example.com/mcp"}, extra...)
		if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
			t.Errorf("clients %v (-%s +got):\n%s", extra, golden, diff)
		}
	}
	if got := clientName("Plans test API"); got != "plans-test-api" {
		t.Errorf("clientName = %q", got)
	}
	for title, want := range map[string]string{"": "restmcp", "GitHub v3 REST API": "github-v3-rest-api", "  FDIC Bank Data API (Beta)  ": "fdic-bank-data-api-beta"} {
		if got := clientName(title); got != want {
			t.Errorf("clientName(%q) = %q, want %q", title, got, want)
		}
	}
}

// TestOutputSchemasFitTheListBudget: GitHub's tools/list is 1,301,438
// bytes with output schemas, more than output_schemas_max_list_bytes (1
// MiB by default): they are left out, the list is 684,162 bytes with every
// input schema whole, and the log says so; with -1 they stay.
func TestOutputSchemasFitTheListBudget(t *testing.T) {
	spec := corpustest.Path(t, "github-rest-v1.1.3")
	for _, tc := range []struct {
		extra            []string
		listBytes, warns string
	}{
		{nil, "tools/list is 684162 bytes", `list_bytes_with=1301438 list_bytes_without=684162 output_schemas_max_list_bytes=1048576`},
		{[]string{"--output-schemas-max-list-bytes", "-1"}, "tools/list is 1301438 bytes", ""},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"tools", "--spec", spec}, tc.extra...)
		if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", tc.extra, err)
		}
		if !strings.Contains(stdout.String(), tc.listBytes) {
			t.Errorf("%v: the report lacks %q:\n%s", tc.extra, tc.listBytes, stdout.String()[max(0, stdout.Len()-600):])
		}
		dropped := strings.Contains(stderr.String(), "tools are listed without outputSchema")
		if (tc.warns != "") != dropped || tc.warns != "" && !strings.Contains(stderr.String(), tc.warns) {
			t.Errorf("%v: stderr:\n%s", tc.extra, stderr.String())
		}
	}
}

// TestToolNameStyleSetting: tool_name_style kebab names every tool in
// kebab-case.
func TestToolNameStyleSetting(t *testing.T) {
	var stdout, stderr strings.Builder
	args := []string{"tools", "--spec", "testdata/plans_api.yaml", "--tool-name-style", "kebab"}
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var names []string
	for _, line := range strings.Split(stdout.String(), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 2 && (f[1] == "GET" || f[1] == "POST") {
			names = append(names, f[0])
		}
	}
	if want := []string{"admin-stats", "etfs-top-holdings", "always-fails", "get-quote"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", names, want)
	}
}
