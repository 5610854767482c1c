package adapter

import (
	"math/bits"
	"sync"
)

// Large answers are read, compacted and written through byte buffers of
// their size. Allocated afresh for every call, a megabyte answer costs the
// garbage collector a cycle every few calls and the kernel fresh pages for
// each buffer; kept between calls, the buffers cost neither. Buffers of
// 64 KiB to 64 MiB are kept, in one pool per power of two; smaller ones
// are cheap to allocate and larger ones rare.
const (
	minPooledShift = 16 // 64 KiB
	maxPooledShift = 26 // 64 MiB
)

var bufferPools [maxPooledShift - minPooledShift + 1]sync.Pool

// getBuffer returns an empty buffer with room for at least n bytes. Its
// bytes beyond the length are whatever an earlier call left there: the
// caller only reads what it wrote.
func getBuffer(n int) []byte {
	if n < 1<<minPooledShift || n > 1<<maxPooledShift {
		return make([]byte, 0, n)
	}
	k := bits.Len(uint(n - 1)) // the power of two at or above n
	if p, ok := bufferPools[k-minPooledShift].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<k)
}

// putBuffer keeps b for a later getBuffer; nothing may use b afterwards.
func putBuffer(b []byte) {
	k := bits.Len(uint(cap(b))) - 1 // the power of two at or below cap(b)
	if k < minPooledShift || k > maxPooledShift {
		return
	}
	b = b[:0]
	bufferPools[k-minPooledShift].Put(&b)
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
