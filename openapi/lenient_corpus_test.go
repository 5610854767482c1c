package openapi

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateLenient = flag.Bool("update-lenient", false, "rewrite testdata/lenient/corpus/*.golden from the current output")

// TestCorpusLenient loads the five corpus documents that kin-openapi
// refuses as published in lenient mode: each serves an exact number of
// tools, and the problems (one per skipped or repaired item, with file,
// JSON pointer and line) match testdata/lenient/corpus/<folder>.golden
// exactly. Strict mode fails on each with a *LoadError listing the same
// problems.
func TestCorpusLenient(t *testing.T) {
	requireCorpus(t)
	tests := []struct {
		folder           string
		tools            int
		warnings, errors int
	}{
		{"petstore-oas31", 6, 1, 1},
		{"fire-business-bundled-oas31", 63, 0, 3},
		{"fire-business-multifile-oas31", 63, 105, 4},
		{"square-connect-v2", 316, 0, 5},
		{"digitalocean-multifile", 658, 3, 7},
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			p := corpusPath(t, tc.folder)
			opts := LoadOptions{Upstream: "http://upstream.test", RefRoot: filepath.Join(corpusDir, tc.folder), Lenient: true}
			d, err := Load(context.Background(), p, opts)
			if err != nil {
				t.Fatalf("lenient Load: %v", err)
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
			if len(d.Tools) != tc.tools || w != tc.warnings || e != tc.errors {
				t.Errorf("got %d tools, %d warnings, %d errors; want %d, %d, %d", len(d.Tools), w, e, tc.tools, tc.warnings, tc.errors)
			}
			golden := filepath.Join("testdata", "lenient", "corpus", tc.folder+".golden")
			if *updateLenient {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-lenient to create it)", err)
			}
			if diff := cmp.Diff(strings.Split(strings.TrimSpace(string(want)), "\n"), got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}

			opts.Lenient = false
			_, err = Load(context.Background(), p, opts)
			le, ok := err.(*LoadError)
			if !ok {
				t.Fatalf("strict Load: got %v, want a *LoadError", err)
			}
			if len(le.Problems) != len(d.Problems) {
				t.Errorf("strict: %d problems, lenient %d", len(le.Problems), len(d.Problems))
			}
		})
	}
}
