package openapi

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateLenient = flag.Bool("update-lenient", false, "rewrite testdata/lenient/corpus/*.golden from the current output")

// lenientCorpus is what lenient mode serves for each corpus document that
// kin-openapi refuses as published: tools, and problems by severity.
var lenientCorpus = map[string]struct{ tools, warnings, errors int }{
	"petstore-oas31":                {6, 1, 1},
	"fire-business-bundled-oas31":   {63, 0, 3},
	"fire-business-multifile-oas31": {63, 105, 4},
	"square-connect-v2":             {316, 1, 5}, // the warning: PUT /v2/vendors/{vendor_id} does not declare vendor_id
	"digitalocean-multifile":        {657, 3, 8},
}

// slowLenient are the broken documents whose strict and lenient loads
// take several seconds each; TestCorpusAll skips them under -race.
var slowLenient = map[string]bool{"digitalocean-multifile": true, "square-connect-v2": true}

// checkLenientCorpus is called by TestCorpusAll for each knownBroken
// document with its lenient Document and the strict *LoadError: the tool
// count and the problems (one per skipped or repaired item, with file,
// JSON pointer and line) must match lenientCorpus and
// testdata/lenient/corpus/<folder>.golden exactly, and the strict error
// must list the same problems. -update-lenient rewrites the golden files.
func checkLenientCorpus(t *testing.T, folder string, d *Document, le *LoadError) {
	t.Helper()
	want, ok := lenientCorpus[folder]
	if !ok {
		t.Fatalf("%s: no lenientCorpus entry", folder)
	}
	var got []string
	w, e := 0, 0
	for _, pr := range d.Problems {
		got = append(got, pr.String())
		if pr.Severity == SeverityWarning {
			w++
		} else {
			e++
		}
	}
	if len(d.Tools) != want.tools || w != want.warnings || e != want.errors {
		t.Errorf("lenient: got %d tools, %d warnings, %d errors; want %d, %d, %d", len(d.Tools), w, e, want.tools, want.warnings, want.errors)
	}
	golden := filepath.Join("testdata", "lenient", "corpus", folder+".golden")
	if *updateLenient {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-lenient to create it)", err)
	}
	if diff := cmp.Diff(strings.Split(strings.TrimSpace(string(data)), "\n"), got); diff != "" {
		t.Errorf("lenient problems (-want +got):\n%s", diff)
	}
	if le != nil {
		if diff := cmp.Diff(d.Problems, le.Problems); diff != "" {
			t.Errorf("strict problems differ from lenient ones (-lenient +strict):\n%s", diff)
		}
	}
}
