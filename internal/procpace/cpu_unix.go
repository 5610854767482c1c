//go:build unix

package procpace

import (
	"syscall"
	"time"
)

// cpuTime is the CPU the process has used, user and system
// (getrusage(2) RUSAGE_SELF).
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
