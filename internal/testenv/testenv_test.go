package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
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

// TestPoll: Poll looks every 10 ms until the condition holds, and gives up
// with the condition's last error past its deadline (on synctest's clock).
func TestPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		n := 0
		err := Poll(time.Second, func() error {
			if n++; n < 5 {
				return errors.New("not yet")
			}
			return nil
		})
		if err != nil || n != 5 || time.Since(start) != 40*time.Millisecond {
			t.Fatalf("Poll = %v after %d looks and %v; want nil after 5 and 40ms", err, n, time.Since(start))
		}
		start = time.Now()
		err = Poll(100*time.Millisecond, func() error { return errors.New("never") })
		if err == nil || err.Error() != "after 100ms: never" || time.Since(start) != 110*time.Millisecond {
			t.Fatalf("Poll = %v after %v; want the last error after 110ms", err, time.Since(start))
		}
	})
}
