package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnavailableRecordsTheSkip(t *testing.T) {
	t.Setenv("RESTMCP_REQUIRE_EXAMPLE", "")
	t.Run("skipped", func(t *testing.T) {
		Unavailable(t, "RESTMCP_REQUIRE_EXAMPLE", "an example service", "!!! no example service")
		t.Error("Unavailable returned instead of skipping")
	})
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	want := "!!! " + pkg + ": tests that need an example service were SKIPPED; bash .ci/run provides everything (or set RESTMCP_REQUIRE_EXAMPLE=1 to make a skip a failure)\n"
	if got := summary(); got != want {
		t.Errorf("summary:\n got %q\nwant %q", got, want)
	}
	mu.Lock()
	clear(skipped)
	mu.Unlock()
}
