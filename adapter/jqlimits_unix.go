//go:build unix

package adapter

import "syscall"

// setWorkerLimits sets a jq worker's kernel bounds: cpuSeconds of CPU
// (SIGXCPU then), maxMemory bytes of data (an allocation past it fails,
// and the worker with it). Where a bound cannot be set, the wall-time
// deadline and the stack bound still hold.
func setWorkerLimits(cpuSeconds int, maxMemory int64) {
	if cpuSeconds > 0 {
		_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpuSeconds), Max: uint64(cpuSeconds) + 1})
	}
	if maxMemory > 0 {
		_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: uint64(maxMemory), Max: uint64(maxMemory)})
	}
}
