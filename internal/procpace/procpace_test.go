package procpace

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestNeeded(t *testing.T) {
	for _, c := range []struct {
		cpu     float64
		ceiling int
		want    int
	}{
		{0, 2, 1},
		{0.85, 2, 1},  // one processor 85 % busy: still enough
		{0.851, 2, 2}, // past it: one more
		{5, 2, 2},     // never above the ceiling
		{1.7, 4, 2},
		{1.71, 4, 3},
		{3.9, 4, 4},
		{0.5, 1, 1},
		{2, 0, 1}, // at least one
	} {
		if got := Needed(c.cpu, c.ceiling); got != c.want {
			t.Errorf("Needed(%v, %d) = %d, want %d", c.cpu, c.ceiling, got, c.want)
		}
	}
}

// TestStep: more processors at once, fewer only after Settle intervals in
// a row that need fewer; an interval that needs as many starts the count
// again.
func TestStep(t *testing.T) {
	s := &stepper{ceiling: 4, procs: 4}
	var got []int
	for _, cpu := range []float64{
		0.2, 0.2, 0.2, 0.2, 0.2, // five intervals needing 1: down to 1 at the fifth
		2.0,                // needs 3: up at once
		0.1, 0.1, 0.1, 0.1, // four needing 1
		2.0,                          // needs 3 again: the count starts over
		1.0, 1.0, 1.0, 1.0, 1.0, 9.0, // five needing 2, then the ceiling
	} {
		got = append(got, s.step(cpu))
	}
	want := []int{4, 4, 4, 4, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 4}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("interval %d: got %v, want %v", i, got, want)
		}
	}
}

// waitProcs waits up to 10 s for GOMAXPROCS to be want.
func waitProcs(t *testing.T, want int, what string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if runtime.GOMAXPROCS(0) == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: GOMAXPROCS = %d, want %d", what, runtime.GOMAXPROCS(0), want)
}

// TestPacing: an idle process comes down to one processor, a busy one goes
// back up to the ceiling, a second Start shares the pacer, and the last
// stop restores Go's default.
func TestPacing(t *testing.T) {
	ceiling := runtime.GOMAXPROCS(0)
	if ceiling < 2 {
		t.Skip("one CPU: nothing to pace") // the machines this project runs on have 2 or more
	}
	stop1 := Start()
	stop2 := Start()
	waitProcs(t, 1, "idle")
	var halt atomic.Bool
	done := make(chan struct{})
	for range ceiling {
		go func() {
			defer func() { done <- struct{}{} }()
			for !halt.Load() {
			}
		}()
	}
	waitProcs(t, ceiling, "busy on every processor")
	halt.Store(true)
	for range ceiling {
		<-done
	}
	stop1()
	stop1() // a second stop of the same Start changes nothing
	waitProcs(t, 1, "idle again, one Start still running")
	stop2()
	if got := runtime.GOMAXPROCS(0); got != ceiling {
		t.Fatalf("GOMAXPROCS = %d after the last stop, want Go's default %d", got, ceiling)
	}
}
