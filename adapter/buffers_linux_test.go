//go:build linux

package adapter

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestBufferPoolMapped: a pooled buffer is mapped outside the Go heap;
// given up by two cycles without use, it keeps its mapping with its pages
// given back to the kernel (it reads zeros), and is the next one its class
// hands out.
func TestBufferPoolMapped(t *testing.T) {
	var c bufferClass
	const size = 96 << 10
	b := c.alloc(size)
	if len(b) != 0 || cap(b) != size || !c.mapped[unsafe.SliceData(b)] {
		t.Fatalf("alloc: len %d cap %d mapped %v, want 0, %d, true", len(b), cap(b), c.mapped[unsafe.SliceData(b)], size)
	}
	b = append(b, bytes.Repeat([]byte("restmcp!"), size/8)...)
	if cap(b) != size {
		t.Fatalf("filling the buffer moved it: cap %d", cap(b))
	}
	c.put(b)
	c.age()
	if got := c.get(); unsafe.SliceData(got) != unsafe.SliceData(b) || !bytes.Equal(got[:size], b[:size]) {
		t.Fatal("one cycle: the buffer or its bytes were given up")
	}
	c.put(b)
	c.age()
	c.age()
	if len(c.fresh)+len(c.old) != 0 || len(c.idle) != 1 {
		t.Fatalf("two cycles: fresh %d old %d idle %d, want 0, 0, 1", len(c.fresh), len(c.old), len(c.idle))
	}
	got := c.get()
	if unsafe.SliceData(got) != unsafe.SliceData(b) || cap(got) != size {
		t.Fatal("the idle mapping was not handed out again")
	}
	if !bytes.Equal(got[:size], make([]byte, size)) {
		t.Error("an idle buffer kept its pages: it does not read zeros")
	}
	if c.get() != nil {
		t.Error("a buffer handed out twice")
	}
}
