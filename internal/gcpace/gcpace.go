// Package gcpace keeps the garbage collector's heap goal at least a fixed
// headroom above the live heap.
//
// Go's collector (GOGC=100) starts a cycle when the heap has grown by as
// much as is live (plus stacks and globals), and never below 4 MB. A proxy
// keeps little alive (a few MB of tool table) and allocates per call (about
// 15 KB a tools/call), so with Go's default it collects every few hundred
// calls: about 30 cycles a second at 6,000 calls a second, a fifth of
// restmcp's CPU per call on a 2-core machine (docs/operations.md#speed).
// Letting the heap grow by headroom bytes between cycles instead makes
// cycles as rare as headroom / allocation rate, for at most headroom more
// resident memory. A heap larger than headroom keeps Go's own pacing.
//
// The pacer works by setting GOGC (debug.SetGCPercent) after every
// collection, from the live heap that collection found
// (https://go.dev/doc/gc-guide#GOGC: the goal is live heap + (live heap +
// GC roots) × GOGC/100).
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minBase is the smallest base Percent divides by: Go's heap minimum (4 MB
// at GOGC=100) grows with GOGC, so a smaller base would make the goal that
// minimum rather than base + headroom.
const minBase = 4 << 20

// Percent is the GOGC that sets the next heap goal to base + headroom, or
// Go's own base + base when that is more: max(100, ⌈100 × headroom /
// base⌉), base being the live heap plus the GC roots (stacks and globals)
// in bytes, taken as at least 4 MiB.
func Percent(base, headroom uint64) int {
	base = max(base, minBase)
	if headroom <= base {
		return 100
	}
	return int((100*headroom + base - 1) / base)
}

// pacer is the process's one pacer: GOGC is the process's, so however many
// servers call Start (tests run several in one process), one pacer sets
// it, with the largest headroom asked for, and the last Stop restores
// what it was.
var pacer struct {
	mu        sync.Mutex
	headrooms map[*int]uint64 // each Start's headroom, by its token
	prev      int             // GOGC before the first Start
	gen       int             // bumped by each first Start: an old sentinel's finalizer stops
	samples   []metrics.Sample
}

// Start paces the collector with headroom bytes (see the package doc)
// until stop is called, which restores GOGC once every Start has been
// stopped. It takes effect from the next collection on.
func Start(headroom uint64) (stop func()) {
	token := new(int)
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	if pacer.headrooms == nil {
		pacer.headrooms = map[*int]uint64{}
		pacer.prev = gogc()
		pacer.gen++
		pacer.samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
		arm(&sentinel{gen: pacer.gen})
	}
	pacer.headrooms[token] = headroom
	var once sync.Once
	return func() {
		once.Do(func() {
			pacer.mu.Lock()
			defer pacer.mu.Unlock()
			delete(pacer.headrooms, token)
			if len(pacer.headrooms) == 0 {
				pacer.headrooms = nil
				debug.SetGCPercent(pacer.prev)
			}
		})
	}
}

// gogc is the collector's GOGC now.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// sentinel is an object nothing refers to, whose finalizer runs once per
// collection and sets it again: the pacer's hook after each cycle.
type sentinel struct {
	gen int
	_   [16]byte // not a tiny object, which could share a block and outlive its cycle
}

func arm(s *sentinel) { runtime.SetFinalizer(s, afterGC) }

// afterGC sets GOGC from the collection just finished, then waits for the
// next; it stops when the pacer has been stopped (or restarted since s was
// armed).
func afterGC(s *sentinel) {
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	if pacer.headrooms == nil || s.gen != pacer.gen {
		return
	}
	var headroom uint64
	for _, h := range pacer.headrooms {
		headroom = max(headroom, h)
	}
	metrics.Read(pacer.samples)
	var base uint64
	for _, m := range pacer.samples {
		if m.Value.Kind() == metrics.KindUint64 {
			base += m.Value.Uint64()
		}
	}
	debug.SetGCPercent(Percent(base, headroom))
	arm(s)
}
