// Package corpustest finds the third-party OpenAPI corpus that tests read
// from ../shared/corpus beside the repository.
package corpustest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/testenv"
)

// Dir returns the corpus folder, ../shared/corpus beside the repository
// root, whichever package's test asks.
func Dir() string {
	_, file, _, _ := runtime.Caller(0) // <root>/internal/corpustest/corpus.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
}

// Require skips tb, loudly, when the corpus is absent; with
// RESTMCP_REQUIRE_CORPUS=1 (CI) it fails instead.
func Require(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(Dir(), "README.md")); err != nil {
		testenv.Unavailable(tb, "RESTMCP_REQUIRE_CORPUS", "the corpus",
			fmt.Sprintf("!!! SKIPPING: OpenAPI corpus not found at %s (%v); real-document tests did NOT run; set RESTMCP_REQUIRE_CORPUS=1 to make this a failure", Dir(), err))
	}
}

// Entries reads the corpus README's table: folder → entry file. It calls
// Require first.
func Entries(tb testing.TB) map[string]string {
	tb.Helper()
	Require(tb)
	f, err := os.Open(filepath.Join(Dir(), "README.md"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "|")
		if len(cols) < 4 {
			continue
		}
		folder, entry := strings.TrimSpace(cols[1]), strings.Fields(strings.TrimSpace(cols[2]))
		if folder == "" || folder == "folder" || strings.HasPrefix(folder, "-") || len(entry) == 0 {
			continue
		}
		m[folder] = entry[0]
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Path returns the entry file of corpus folder, failing tb when the README
// does not list it.
func Path(tb testing.TB, folder string) string {
	tb.Helper()
	e, ok := Entries(tb)[folder]
	if !ok {
		tb.Fatalf("corpus folder %s not in %s", folder, filepath.Join(Dir(), "README.md"))
	}
	return filepath.Join(Dir(), folder, e)
}
