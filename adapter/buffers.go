package adapter

import (
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
)

// Large answers are read, compacted and written through byte buffers of
// their size. Allocated afresh for every call, a megabyte answer costs the
// garbage collector a cycle every few calls and the kernel fresh pages for
// each buffer; kept between calls, the buffers cost neither. Buffers of
// 64 KiB to 64 MiB are kept, in pools of two sizes for each power of two
// (2^k and 1.5·2^k bytes), so that a buffer is at most a third larger than
// asked; smaller ones are cheap to allocate and larger ones rare.
//
// On Linux the pooled buffers live outside the Go heap, in memory mapped
// from the kernel (mapBuffer; elsewhere they are on the heap). On the heap,
// kept buffers would count as live data, and the garbage collector lets
// the heap grow to twice the live data before it runs: a process that
// keeps a megabyte buffer would hold a second megabyte of garbage. Outside
// it, a megabyte answer costs the process about its own size in memory. A
// mapped buffer is never unmapped, so no slice of it can ever point at
// memory the process no longer has; a class that gives a mapped buffer up
// gives its pages back to the kernel and keeps the mapping for later. So
// the process's virtual size keeps the most buffers of each size ever in
// use at once (its resident size does not).
const (
	minPooledShift = 16 // 64 KiB
	maxPooledShift = 26 // 64 MiB
)

var bufferPools [2*(maxPooledShift-minPooledShift) + 1]bufferClass // the last holds 64 MiB

// bufferClass keeps the buffers of one size. It is one stack shared by
// every processor, not a sync.Pool, which keeps a buffer per processor: a
// call that moves between processors would then hold two of each of its
// megabyte buffers. As a sync.Pool does, it gives back to the garbage
// collector what a whole collection cycle left unused: buffers put back
// since the last cycle are fresh, a cycle makes them old, and the next
// drops the old ones not taken meanwhile.
type bufferClass struct {
	mu         sync.Mutex
	fresh, old [][]byte
	// idle are mapped buffers given up by age, their pages given back to
	// the kernel; mapped holds the first byte of each mapped buffer of
	// the class, idle or not.
	idle   [][]byte
	mapped map[*byte]bool
}

func (c *bufferClass) get() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range []*[][]byte{&c.fresh, &c.old, &c.idle} {
		if n := len(*l); n > 0 {
			b := (*l)[n-1]
			(*l)[n-1] = nil
			*l = (*l)[:n-1]
			return b
		}
	}
	return nil
}

func (c *bufferClass) put(b []byte) {
	c.mu.Lock()
	c.fresh = append(c.fresh, b)
	c.mu.Unlock()
}

// alloc returns a new buffer of size bytes for the class: mapped when the
// kernel maps it, otherwise on the heap.
func (c *bufferClass) alloc(size int) []byte {
	b := mapBuffer(size)
	if b == nil {
		return make([]byte, 0, size)
	}
	c.mu.Lock()
	if c.mapped == nil {
		c.mapped = make(map[*byte]bool)
	}
	c.mapped[unsafe.SliceData(b)] = true
	c.mu.Unlock()
	return b[:0]
}

// age is one garbage collection cycle passing: the old buffers go (a
// mapped one to idle, its pages given back), the fresh become old.
func (c *bufferClass) age() {
	c.mu.Lock()
	for _, b := range c.old {
		if c.mapped[unsafe.SliceData(b)] {
			dropPages(b)
			c.idle = append(c.idle, b)
		}
	}
	c.old, c.fresh = c.fresh, nil
	c.mu.Unlock()
}

// gcSentinel is an object nothing keeps, so that each garbage collection
// cycle finds it unreachable and runs its cleanup (large enough not to
// share a tiny-allocator block with other objects).
type gcSentinel struct{ _ [64]byte }

func init() { ageAtNextGC() }

// ageAtNextGC ages every buffer class at the next garbage collection
// cycle, and again at each one after it.
func ageAtNextGC() {
	runtime.AddCleanup(new(gcSentinel), func(struct{}) {
		for i := range bufferPools {
			bufferPools[i].age()
		}
		ageAtNextGC()
	}, struct{}{})
}

// classSize is the size of the buffers in bufferPools[i]: 2^k for even i,
// 1.5·2^k for odd i, with k = minPooledShift + i/2.
func classSize(i int) int {
	size := 1 << (minPooledShift + i/2)
	if i%2 == 1 {
		size += size / 2
	}
	return size
}

// classOf is the index of the smallest class whose buffers hold n bytes,
// and false when n is outside the pooled sizes.
func classOf(n int) (int, bool) {
	if n < 1<<minPooledShift || n > 1<<maxPooledShift {
		return 0, false
	}
	i := 0 // n is 64 KiB
	if n > 1<<minPooledShift {
		k := bits.Len(uint(n-1)) - 1 // 2^k < n ≤ 2^(k+1)
		i = 2*(k-minPooledShift) + 1 // 1.5·2^k
		if n > classSize(i) {
			i++ // 2^(k+1)
		}
	}
	return i, true
}

// getBuffer returns an empty buffer with room for at least n bytes: of
// its class's size (or a little more, for one given back after growing),
// or of n bytes outside the pooled sizes. Its bytes beyond the length are
// whatever an earlier call left there: the caller only reads what it
// wrote.
func getBuffer(n int) []byte {
	i, pooled := classOf(n)
	if !pooled {
		return make([]byte, 0, n)
	}
	if b := bufferPools[i].get(); b != nil {
		return b[:0]
	}
	return bufferPools[i].alloc(classSize(i))
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
	bufferPools[i].put(b[:0])
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
