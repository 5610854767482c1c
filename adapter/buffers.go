package adapter

import (
	"math/bits"
	"sync"
)

// Large answers are read, compacted and written through byte buffers of
// their size. Allocated afresh for every call, a megabyte answer costs the
// garbage collector a cycle every few calls and the kernel fresh pages for
// each buffer; kept between calls, the buffers cost neither. Buffers of
// 64 KiB to 64 MiB are kept, in pools of two sizes for each power of two
// (2^k and 1.5·2^k bytes), so that a buffer is at most a third larger than
// asked; smaller ones are cheap to allocate and larger ones rare.
const (
	minPooledShift = 16 // 64 KiB
	maxPooledShift = 26 // 64 MiB
)

var bufferPools [2*(maxPooledShift-minPooledShift) + 1]sync.Pool // the last holds 64 MiB

// classSize is the size of the buffers in bufferPools[i]: 2^k for even i,
// 1.5·2^k for odd i, with k = minPooledShift + i/2.
func classSize(i int) int {
	size := 1 << (minPooledShift + i/2)
	if i%2 == 1 {
		size += size / 2
	}
	return size
}

// getBuffer returns an empty buffer with room for at least n bytes. Its
// bytes beyond the length are whatever an earlier call left there: the
// caller only reads what it wrote.
func getBuffer(n int) []byte {
	if n < 1<<minPooledShift || n > 1<<maxPooledShift {
		return make([]byte, 0, n)
	}
	i := 0 // n is 64 KiB
	if n > 1<<minPooledShift {
		k := bits.Len(uint(n-1)) - 1 // 2^k < n ≤ 2^(k+1)
		i = 2*(k-minPooledShift) + 1 // 1.5·2^k
		if n > classSize(i) {
			i++ // 2^(k+1)
		}
	}
	if p, ok := bufferPools[i].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, classSize(i))
}

// putBuffer keeps b for a later getBuffer, in the largest class its
// capacity covers; nothing may use b afterwards.
func putBuffer(b []byte) {
	c := cap(b)
	if c < 1<<minPooledShift {
		return
	}
	k := bits.Len(uint(c)) - 1 // 2^k ≤ c < 2^(k+1)
	i := 2 * (k - minPooledShift)
	if c >= classSize(i+1) {
		i++
	}
	if i >= len(bufferPools) {
		return
	}
	b = b[:0]
	bufferPools[i].Put(&b)
}

// callBuffers are the pooled buffers of one fast-path tools/call: the
// upstream body and its compacted object, which the result's text and
// structuredContent share. serveFast gives them back once the result is
// written; a call answered any other way (the go-sdk's handler, which may
// hold a result longer) has none, and its buffers are left to the garbage
// collector.
type callBuffers struct {
	held [][]byte
}

// get returns a buffer for at least n bytes: from the pools when cb is
// not nil (it is given back at release), otherwise allocated.
func (cb *callBuffers) get(n int) []byte {
	if cb == nil {
		return make([]byte, 0, n)
	}
	b := getBuffer(n)
	cb.held = append(cb.held, b)
	return b
}

// release gives the call's buffers back to the pools. Nothing of the
// call's result may be used afterwards.
func (cb *callBuffers) release() {
	for _, b := range cb.held {
		putBuffer(b)
	}
	cb.held = nil
}
