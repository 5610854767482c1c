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
// user and system) and the share of calls that started while another was
// in progress (CallStarted, CallEnded), and sets GOMAXPROCS to Needed of
// them: more processors at once when the load grows, fewer only after it
// has stayed lower for Settle intervals in a row. Calls that overlap can
// run side by side, so while most do, a processor is added at Overlapped
// of each one's time instead of Busy: a second processor then shortens
// the queue of calls waiting for the first (at concurrency 8 on 2 cores,
// 12–15 % more calls a second), where calls that come one at a time
// cannot use it. Setting GOMAXPROCS ends Go's own automatic
// updates (a container's CPU limit changed while running): the ceiling is
// Go's default at Start, and the last stop gives the updates back.
package procpace

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Interval is how often the pacer looks at the CPU used.
	Interval = 100 * time.Millisecond
	// Busy is the share of each processor the pacer lets the process use
	// before it adds one.
	Busy = 0.85
	// Overlapped is Busy while calls overlap: while at least
	// OverlapShare of the calls that started in an interval started
	// while another call was in progress.
	Overlapped = 0.5
	// OverlapShare is the share of an interval's calls that must overlap
	// another for Overlapped to apply.
	OverlapShare = 0.5
	// Settle is how many intervals in a row the process must need fewer
	// processors before the pacer takes one away.
	Settle = 5
)

// Needed is the processors a process that used cpu seconds of CPU per
// second of time needs: ⌈cpu / Busy⌉, or ⌈cpu / Overlapped⌉ when
// overlapping (most of its calls overlapped another), at least 1 and at
// most ceiling.
func Needed(cpu float64, overlapping bool, ceiling int) int {
	busy := Busy
	if overlapping {
		busy = Overlapped
	}
	n := 1
	for n < ceiling && cpu > busy*float64(n) {
		n++
	}
	return n
}

// calls counts the calls CallStarted and CallEnded report.
var calls struct {
	inProgress  atomic.Int64
	started     atomic.Int64 // since the process started
	overlapping atomic.Int64 // of started, those that began while another was in progress
}

// CallStarted records that a call (a tools/call) began; CallEnded must
// follow when it ends. The pacer reads, each interval, the share of calls
// that began while another was in progress. Three atomic operations, with
// or without a pacer running.
func CallStarted() {
	if calls.inProgress.Add(1) > 1 {
		calls.overlapping.Add(1)
	}
	calls.started.Add(1)
}

// CallEnded records that a call CallStarted reported has ended.
func CallEnded() { calls.inProgress.Add(-1) }

// CallCounts is what CallStarted and CallEnded have recorded since the
// process started: the calls started, of those the ones that began while
// another was in progress, and the calls in progress now.
func CallCounts() (started, overlapping, inProgress int64) {
	return calls.started.Load(), calls.overlapping.Load(), calls.inProgress.Load()
}

// overlapped tells whether an interval in which started calls began, of
// which overlapping while another was in progress, counts as overlapping:
// at least OverlapShare of them.
func overlapped(started, overlapping int64) bool {
	return started > 0 && float64(overlapping) >= OverlapShare*float64(started)
}

// stepper decides each interval's GOMAXPROCS from the CPU used in it.
type stepper struct {
	ceiling, procs int
	lower          int // intervals in a row that needed fewer than procs
}

// step returns the GOMAXPROCS for the next interval, after one in which
// the process used cpu seconds per second, its calls overlapping or not.
func (s *stepper) step(cpu float64, overlapping bool) int {
	n := Needed(cpu, overlapping, s.ceiling)
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
	t := time.NewTicker(Interval)
	defer t.Stop()
	cpu, _ := cpuTime()
	started, overlapping, _ := CallCounts()
	w := newWatch(ceiling, time.Now(), cpu, started, overlapping)
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			cpu, ok := cpuTime()
			if !ok {
				continue
			}
			started, overlapping, _ := CallCounts()
			if n, ok := w.observe(now, cpu, started, overlapping); ok && n != runtime.GOMAXPROCS(0) {
				runtime.GOMAXPROCS(n)
			}
		}
	}
}

// watch turns the pacer's readings (the time, the process's CPU so far,
// CallCounts' started and overlapping) into GOMAXPROCS, one interval at a
// time.
type watch struct {
	s                    stepper
	last                 time.Time
	cpu                  time.Duration
	started, overlapping int64
}

func newWatch(ceiling int, now time.Time, cpu time.Duration, started, overlapping int64) *watch {
	return &watch{s: stepper{ceiling: ceiling, procs: ceiling}, last: now, cpu: cpu, started: started, overlapping: overlapping}
}

// observe takes the readings at now and returns the GOMAXPROCS for the
// next interval; ok is false (nothing read) when now is not after the
// last reading.
func (w *watch) observe(now time.Time, cpu time.Duration, started, overlapping int64) (procs int, ok bool) {
	wall := now.Sub(w.last)
	if wall <= 0 {
		return 0, false
	}
	used := float64(cpu-w.cpu) / float64(wall)
	o := overlapped(started-w.started, overlapping-w.overlapping)
	w.last, w.cpu, w.started, w.overlapping = now, cpu, started, overlapping
	return w.s.step(used, o), true
}
