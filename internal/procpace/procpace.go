// Package procpace sets GOMAXPROCS, the number of processors Go's
// scheduler runs goroutines on, to what the process's CPU use needs, up to
// Go's default.
//
// Why: with more processors than the work needs, Go's scheduler wakes an
// idle thread whenever a goroutine becomes ready (a request or an upstream
// answer arriving, a goroutine started), to look for work that the running
// thread will do itself; the woken thread finds nothing and sleeps again.
// A proxy's calls are short and its goroutines become ready several times
// per call, so at low concurrency most of its CPU went to those wake-ups:
// on a 2-core virtual machine a tools/call at concurrency 1 cost about 240
// µs of CPU with 2 processors and 145 µs with 1, and answered sooner
// (docs/operations.md#speed). Go's default (the CPUs the process may use,
// https://pkg.go.dev/runtime#GOMAXPROCS) stays the ceiling, reached as
// soon as the load needs it.
//
// Every Interval the pacer reads the CPU the process used (getrusage(2),
// user and system) and sets GOMAXPROCS to Needed of it: more processors at
// once when the load grows, fewer only after it has stayed lower for
// Settle intervals in a row. Setting GOMAXPROCS ends Go's own automatic
// updates (a container's CPU limit changed while running): the ceiling is
// Go's default at Start, and the last stop gives the updates back.
package procpace

import (
	"runtime"
	"sync"
	"time"
)

const (
	// Interval is how often the pacer looks at the CPU used.
	Interval = 100 * time.Millisecond
	// Busy is the share of each processor the pacer lets the process use
	// before it adds one.
	Busy = 0.85
	// Settle is how many intervals in a row the process must need fewer
	// processors before the pacer takes one away.
	Settle = 5
)

// Needed is the processors a process that used cpu seconds of CPU per
// second of time needs: ⌈cpu / Busy⌉, at least 1 and at most ceiling.
func Needed(cpu float64, ceiling int) int {
	n := 1
	for n < ceiling && cpu > Busy*float64(n) {
		n++
	}
	return n
}

// stepper decides each interval's GOMAXPROCS from the CPU used in it.
type stepper struct {
	ceiling, procs int
	lower          int // intervals in a row that needed fewer than procs
}

// step returns the GOMAXPROCS for the next interval, after one in which
// the process used cpu seconds per second.
func (s *stepper) step(cpu float64) int {
	n := Needed(cpu, s.ceiling)
	switch {
	case n > s.procs:
		s.procs, s.lower = n, 0
	case n < s.procs:
		s.lower++
		if s.lower >= Settle {
			s.procs, s.lower = n, 0
		}
	default:
		s.lower = 0
	}
	return s.procs
}

// pacer is the process's one pacer (GOMAXPROCS is the process's): the
// first Start runs it, the last stop ends it and gives GOMAXPROCS back to
// Go's default and its automatic updates.
var pacer struct {
	mu    sync.Mutex
	users int
	done  chan struct{}
	wg    sync.WaitGroup
}

// Start paces GOMAXPROCS from now until stop is called (see the package
// doc); ceiling is Go's default at the first Start. Where the process's
// CPU cannot be read (cpuTime fails), it changes nothing.
func Start() (stop func()) {
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	pacer.users++
	if pacer.users == 1 {
		if _, ok := cpuTime(); ok {
			pacer.done = make(chan struct{})
			pacer.wg.Add(1)
			go run(pacer.done, runtime.GOMAXPROCS(0))
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pacer.mu.Lock()
			defer pacer.mu.Unlock()
			pacer.users--
			if pacer.users == 0 && pacer.done != nil {
				close(pacer.done)
				pacer.wg.Wait()
				pacer.done = nil
				runtime.SetDefaultGOMAXPROCS()
			}
		})
	}
}

func run(done <-chan struct{}, ceiling int) {
	defer pacer.wg.Done()
	s := &stepper{ceiling: ceiling, procs: ceiling}
	t := time.NewTicker(Interval)
	defer t.Stop()
	lastCPU, _ := cpuTime()
	last := time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			c, ok := cpuTime()
			if !ok {
				continue
			}
			wall := now.Sub(last)
			if wall <= 0 {
				continue
			}
			used := float64(c-lastCPU) / float64(wall)
			lastCPU, last = c, now
			if n := s.step(used); n != runtime.GOMAXPROCS(0) {
				runtime.GOMAXPROCS(n)
			}
		}
	}
}
