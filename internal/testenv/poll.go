package testenv

import (
	"fmt"
	"testing"
	"time"
)

// pollEvery is how often Poll and Eventually look again.
const pollEvery = 10 * time.Millisecond

// Poll waits for cond to hold, looking every 10 ms, for at most within:
// a test that waits for something another goroutine or process does (an
// event written, a stream open, a process gone) waits on that, not for a
// time it guesses. It returns nil as soon as cond returns nil, else
// cond's last error, naming how long it waited.
func Poll(within time.Duration, cond func() error) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", within, err)
		}
		<-tick.C
	}
}

// Eventually is Poll for a condition without an error of its own: it
// fails tb, saying what it waited for, when cond does not hold within.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	if err := Poll(within, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("still waiting for %s", what)
	}); err != nil {
		tb.Fatal(err)
	}
}
