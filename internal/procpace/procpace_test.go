package procpace

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestNeeded(t *testing.T) {
	for _, c := range []struct {
		cpu         float64
		overlapping bool
		ceiling     int
		want        int
	}{
		{0, false, 2, 1},
		{0.85, false, 2, 1},  // one processor 85 % busy: still enough
		{0.851, false, 2, 2}, // past it: one more
		{5, false, 2, 2},     // never above the ceiling
		{1.7, false, 4, 2},
		{1.71, false, 4, 3},
		{3.9, false, 4, 4},
		{0.5, false, 1, 1},
		{2, false, 0, 1}, // at least one
		// Calls that overlap: a processor more at half of each one's time.
		{0.5, true, 2, 1},
		{0.501, true, 2, 2},
		{0.85, true, 2, 2},
		{1.2, true, 4, 3},
		{1.51, true, 4, 4},
		{3, true, 2, 2},
		{0.4, true, 4, 1},
	} {
		if got := Needed(c.cpu, c.overlapping, c.ceiling); got != c.want {
			t.Errorf("Needed(%v, %v, %d) = %d, want %d", c.cpu, c.overlapping, c.ceiling, got, c.want)
		}
	}
}

func TestOverlapped(t *testing.T) {
	for _, c := range []struct {
		started, overlapping int64
		want                 bool
	}{
		{0, 0, false}, // no calls
		{1, 0, false},
		{100, 49, false},
		{100, 50, true}, // half: overlapping
		{100, 100, true},
		{1000, 999, true},
	} {
		if got := overlapped(c.started, c.overlapping); got != c.want {
			t.Errorf("overlapped(%d, %d) = %v, want %v", c.started, c.overlapping, got, c.want)
		}
	}
}

// TestCallCounts: a call that starts while another is in progress counts
// as overlapping, one that starts alone does not, and the count in
// progress comes back to where it was.
func TestCallCounts(t *testing.T) {
	s0, o0, p0 := CallCounts()
	CallStarted() // alone
	CallStarted() // while the first is in progress
	CallStarted() // while two are
	CallEnded()
	CallEnded()
	if s, o, p := CallCounts(); s-s0 != 3 || o-o0 != 2 || p-p0 != 1 {
		t.Fatalf("after 3 starts and 2 ends: %d started, %d overlapping, %d in progress; want 3, 2, 1", s-s0, o-o0, p-p0)
	}
	CallEnded()
	CallStarted() // alone again
	CallEnded()
	if s, o, p := CallCounts(); s-s0 != 4 || o-o0 != 2 || p-p0 != 0 {
		t.Fatalf("at the end: %d started, %d overlapping, %d in progress; want 4, 2, 0", s-s0, o-o0, p-p0)
	}
}

// TestStep: more processors at once, fewer only after Settle intervals in
// a row that need fewer; an interval that needs as many starts the count
// again. Overlapping calls add a processor sooner, and keep it.
func TestStep(t *testing.T) {
	s := &stepper{ceiling: 4, procs: 4}
	var got []int
	for _, in := range []struct {
		cpu float64
		ov  bool
	}{
		{0.2, false}, {0.2, false}, {0.2, false}, {0.2, false}, {0.2, false}, // five intervals needing 1: down to 1 at the fifth
		{2.0, false},                                           // needs 3: up at once
		{0.1, false}, {0.1, false}, {0.1, false}, {0.1, false}, // four needing 1
		{2.0, false},                                                         // needs 3 again: the count starts over
		{1.0, false}, {1.0, false}, {1.0, false}, {1.0, false}, {1.0, false}, // five needing 2
		{9.0, false},                                                    // the ceiling
		{0.7, true}, {0.7, true}, {0.7, true}, {0.7, true}, {0.7, true}, // overlapping at 0.7: five needing 2
		{0.7, false}, {0.7, false}, {0.7, false}, {0.7, false}, // the same CPU, one call at a time: four needing 1
		{0.7, true},                                                          // overlapping again: the count starts over
		{0.7, false}, {0.7, false}, {0.7, false}, {0.7, false}, {0.7, false}, // five needing 1
		{0.7, true}, // up at once
	} {
		got = append(got, s.step(in.cpu, in.ov))
	}
	want := []int{4, 4, 4, 4, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 4,
		4, 4, 4, 4, 2,
		2, 2, 2, 2, 2,
		2, 2, 2, 2, 1,
		2}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("interval %d: got %v, want %v", i, got, want)
		}
	}
}

// TestWatch: the pacer's readings become each interval's CPU per second
// and overlap: 70 ms of CPU in 100 ms, with most calls overlapping, needs
// two processors; the same CPU with calls one at a time needs one (after
// Settle intervals); a reading at the same instant is skipped.
func TestWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newWatch(4, t0, time.Second, 500, 400)
	var got []int
	at := func(ms int, cpu time.Duration, started, overlapping int64) {
		t.Helper()
		n, ok := w.observe(t0.Add(time.Duration(ms)*time.Millisecond), cpu, started, overlapping)
		if !ok {
			got = append(got, -1)
			return
		}
		got = append(got, n)
	}
	cpu := time.Second
	started, overlapping := int64(500), int64(400)
	for i := 1; i <= 5; i++ { // 70 ms of CPU per 100 ms, 80 calls of which 60 overlapped: 2 after five
		cpu += 70 * time.Millisecond
		started, overlapping = started+80, overlapping+60
		at(100*i, cpu, started, overlapping)
	}
	at(500, cpu, started, overlapping) // the same instant again: skipped
	for i := 6; i <= 10; i++ {         // the same CPU, 80 calls of which 10 overlapped: 1 after five
		cpu += 70 * time.Millisecond
		started, overlapping = started+80, overlapping+10
		at(100*i, cpu, started, overlapping)
	}
	cpu += 56 * time.Millisecond // 56 ms in 100 ms, 40 of 80 overlapping: 2 at once
	started, overlapping = started+80, overlapping+40
	at(1100, cpu, started, overlapping)
	cpu += 250 * time.Millisecond // 250 ms in 200 ms, no calls: 2 (1.25 / 0.85)
	at(1300, cpu, started, overlapping)
	want := []int{4, 4, 4, 4, 2, -1, 2, 2, 2, 2, 1, 2, 2}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reading %d: got %v, want %v", i, got, want)
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
