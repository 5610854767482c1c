//go:build !unix

package adapter

// setWorkerLimits sets no kernel bound where there is no setrlimit(2): the
// wall-time deadline and the stack bound still hold.
func setWorkerLimits(cpuSeconds int, maxMemory int64) {}
