//go:build !linux

package adapter

// mapBuffer is nil outside Linux (where madvise(2) is not in package
// syscall on every system): pooled buffers are then
// allocated on the Go heap.
func mapBuffer(int) []byte { return nil }

// dropPages does nothing: mapBuffer maps nothing here.
func dropPages([]byte) {}
