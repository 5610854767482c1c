//go:build linux

package adapter

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// jqMemoryPoll is how often a jq worker's resident memory is read.
const jqMemoryPoll = 2 * time.Millisecond

// watchMemory stops the jq worker pid when its resident memory passes max
// bytes, reading /proc/<pid>/statm every jqMemoryPoll until stop is
// closed; the flag it returns says whether it did. RLIMIT_DATA alone does
// not bound a Go worker: the runtime reserves its heap arenas PROT_NONE and
// maps them writable in place, which Linux charges against the limit as
// nothing new (a 600 MB string passed a 512 MiB limit). The resident
// memory can pass max by what the worker writes in one poll interval.
func watchMemory(p *os.Process, max int64, stop <-chan struct{}) *atomic.Bool {
	over := new(atomic.Bool)
	if max <= 0 {
		return over
	}
	path := "/proc/" + strconv.Itoa(p.Pid) + "/statm"
	page := int64(os.Getpagesize())
	go func() {
		t := time.NewTicker(jqMemoryPoll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return // the worker has ended
			}
			f := bytes.Fields(b)
			if len(f) < 2 {
				return
			}
			pages, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err == nil && pages*page > max {
				over.Store(true)
				_ = p.Kill()
				return
			}
		}
	}()
	return over
}
