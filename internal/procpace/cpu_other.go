//go:build !unix

package procpace

import "time"

// cpuTime cannot read the process's CPU here: the pacer changes nothing.
func cpuTime() (time.Duration, bool) { return 0, false }
