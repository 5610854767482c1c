package gcpace

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base, headroom uint64
		want           int
	}{
		{0, 32 * mib, 800},           // base taken as 4 MiB
		{3 * mib, 32 * mib, 800},     // likewise
		{4 * mib, 32 * mib, 800},     // goal 36 MiB
		{5 * mib, 32 * mib, 640},     // goal 37 MiB
		{6 * mib, 32 * mib, 534},     // ⌈533.3⌉: the goal never below base + headroom
		{32 * mib, 32 * mib, 100},    // Go's own goal is as large
		{100 * mib, 32 * mib, 100},   // and larger
		{4 * mib, 0, 100},            // no headroom: Go's pacing
		{4*mib + 1, 4 * mib, 100},    // headroom under base
		{1 << 40, 1<<40 + 1, 101},    // no overflow at large sizes
		{4 * mib, 4*mib + 1, 101},    // rounded up
		{4 * mib, 1 << 40, 26214400}, // a terabyte of headroom
	} {
		if got := Percent(c.base, c.headroom); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.base, c.headroom, got, c.want)
		}
	}
}

func read(names ...string) []uint64 {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	out := make([]uint64, len(s))
	for i := range s {
		out[i] = s[i].Value.Uint64()
	}
	return out
}

// waitGOGC waits (up to 10 s) for the finalizer of the last collection to
// have set GOGC to want.
func waitGOGC(t *testing.T, want int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if gogc() == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GOGC = %d after the collection, want %d", gogc(), want)
}

// TestPacing: after each collection the heap goal is the live heap plus
// the headroom (64 MiB here, well above this test's live heap), several
// Starts share one pacer with the largest headroom, and the last stop
// gives GOGC back, which later collections leave alone.
func TestPacing(t *testing.T) {
	const headroom = 64 << 20
	if g := gogc(); g != 100 {
		t.Fatalf("GOGC = %d before the test, want 100", g)
	}
	stop1 := Start(16 << 20)
	stop2 := Start(headroom)
	for cycle := 0; cycle < 3; cycle++ { // the finalizer sets itself again each time
		runtime.GC()
		m := read("/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes")
		base := m[0] + m[1] + m[2]
		waitGOGC(t, Percent(base, headroom))
		goal := read("/gc/heap/goal:bytes")[0]
		if goal < headroom || goal > m[0]+headroom+(1<<20) {
			t.Fatalf("cycle %d: heap goal %d with %d live; want the live heap plus %d, within 1 MiB", cycle, goal, m[0], headroom)
		}
	}
	stop2()
	stop2() // a second stop of the same Start changes nothing
	runtime.GC()
	m := read("/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes")
	waitGOGC(t, Percent(m[0]+m[1]+m[2], 16<<20))
	stop1()
	if g := gogc(); g != 100 {
		t.Fatalf("GOGC = %d after the last stop, want 100", g)
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond) // a finalizer still queued would run now
	if g := gogc(); g != 100 {
		t.Fatalf("GOGC = %d after collections with the pacer stopped, want 100", g)
	}
}
