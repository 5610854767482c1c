package adapter

import (
	"sync"
	"testing"
)

// TestBufferPool: buffers put back are taken again, last first, by any
// goroutine; keepIdle of them stay in the idle list, counted in the
// budget exactly, and the rest, or one the budget has no room for, go to
// the sync.Pool.
func TestBufferPool(t *testing.T) {
	budget := &idleBudget{limit: 10 << 10}
	p := &bufferPool{budget: budget}
	if b := p.get(); b != nil {
		t.Fatalf("empty pool: got a buffer of %d bytes", cap(*b))
	}
	newBuf := func(n int) *[]byte { b := make([]byte, n); return &b }

	// One buffer, put back and taken from goroutines one after the other
	// (as calls one at a time): always the same buffer.
	first := newBuf(1 << 10)
	p.put(first)
	for i := range 100 {
		var wg sync.WaitGroup
		wg.Go(func() {
			b := p.get()
			if b != first {
				t.Errorf("call %d: got another buffer than the one put back", i)
			}
			p.put(b)
		})
		wg.Wait()
	}
	if got := budget.used.Load(); got != 1<<10 {
		t.Fatalf("budget used %d, want %d", got, 1<<10)
	}

	// keepIdle in the list; the fourth goes to the sync.Pool.
	bufs := []*[]byte{newBuf(1 << 10), newBuf(1 << 10), newBuf(1 << 10)}
	for _, b := range bufs {
		p.put(b)
	}
	if len(p.idle) != keepIdle || budget.used.Load() != keepIdle<<10 {
		t.Fatalf("after 4 puts: %d idle, %d bytes used; want %d, %d", len(p.idle), budget.used.Load(), keepIdle, keepIdle<<10)
	}
	for i := keepIdle - 1; i >= 0; i-- {
		want := []*[]byte{first, bufs[0], bufs[1]}[i]
		if b := p.get(); b != want {
			t.Fatalf("get %d: not the buffer put back %d-th", keepIdle-i, i+1)
		}
	}
	if budget.used.Load() != 0 || len(p.idle) != 0 {
		t.Fatalf("all taken: %d bytes used, %d idle", budget.used.Load(), len(p.idle))
	}

	// A buffer larger than the budget's room is not kept in the list.
	p.put(newBuf(8 << 10))
	p.put(newBuf(4 << 10)) // 12 KiB > 10 KiB
	if len(p.idle) != 1 || budget.used.Load() != 8<<10 {
		t.Fatalf("over the budget: %d idle, %d bytes used; want 1, %d", len(p.idle), budget.used.Load(), 8<<10)
	}
}

// TestResultBuffers: getResultBuffer gives an empty buffer of at least the
// size asked for; putResultBuffer keeps the array the result was encoded
// into (grown past the buffer's own, say), emptied, and drops one past
// largeResultBytes, which the collector takes back.
func TestResultBuffers(t *testing.T) {
	b := getResultBuffer(3000)
	if len(*b) != 0 || cap(*b) < 3000 {
		t.Fatalf("getResultBuffer(3000): len %d, cap %d", len(*b), cap(*b))
	}
	grown := append(make([]byte, 0, 5000), "result"...)
	putResultBuffer(b, grown)
	if len(*b) != 0 || cap(*b) != 5000 || &(*b)[:1][0] != &grown[0] {
		t.Fatalf("put back: len %d, cap %d, want the encoded array emptied (cap 5000)", len(*b), cap(*b))
	}
	big := &[]byte{}
	putResultBuffer(big, make([]byte, 0, largeResultBytes+1))
	if cap(*big) != 0 {
		t.Fatalf("a buffer of %d bytes was kept", cap(*big))
	}
}
