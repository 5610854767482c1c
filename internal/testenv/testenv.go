// Package testenv is for tests that need something outside the repository
// (a Redis server or Cluster, the third-party corpus, the Node clients,
// Chromium): Unavailable skips such a test loudly, or fails it when the
// matching RESTMCP_REQUIRE_* variable is 1 (.ci/run sets them all), and
// Main ends the package's run with one summary line naming what was
// skipped. go test shows a passing package's output only with -v, so the
// line also goes to the terminal (/dev/tty) when there is one.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	skipped = map[string]string{} // what → its RESTMCP_REQUIRE_* variable
)

// Unavailable skips tb with msg because what (e.g. "Redis") is missing,
// or fails it when the environment variable require is 1.
func Unavailable(tb testing.TB, require, what, msg string) {
	tb.Helper()
	if os.Getenv(require) == "1" {
		tb.Fatal(msg + " (" + require + "=1)")
	}
	mu.Lock()
	skipped[what] = require
	mu.Unlock()
	tb.Skip(msg)
}

// Main runs the package's tests, writes the summary of what was skipped,
// and exits with the tests' code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if line := summary(); line != "" {
		fmt.Fprint(os.Stderr, line)
		if !testing.Verbose() {
			if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
				_, _ = tty.WriteString(line)
				_ = tty.Close()
			}
		}
	}
	os.Exit(code)
}

// summary is the line naming what was skipped, or "".
func summary() string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	var whats, vars []string
	for w, v := range skipped {
		whats = append(whats, w)
		vars = append(vars, v+"=1")
	}
	slices.Sort(whats)
	slices.Sort(vars)
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	return fmt.Sprintf("!!! %s: tests that need %s were SKIPPED; bash .ci/run provides everything (or set %s to make a skip a failure)\n",
		pkg, strings.Join(whats, ", "), strings.Join(slices.Compact(vars), " "))
}
