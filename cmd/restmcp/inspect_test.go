package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
