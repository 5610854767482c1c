//go:build linux

package adapter

import "syscall"

// mapBuffer returns n bytes of anonymous memory mapped outside the Go heap
// (mmap(2), MAP_PRIVATE|MAP_ANONYMOUS), or nil when the kernel refuses.
func mapBuffer(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

// dropPages gives the pages of a mapped buffer back to the kernel
// (madvise(2), MADV_DONTNEED) and keeps the mapping: its next use reads
// zeros and takes fresh pages.
func dropPages(b []byte) { _ = syscall.Madvise(b[:cap(b)], syscall.MADV_DONTNEED) }
