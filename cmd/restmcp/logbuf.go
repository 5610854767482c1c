package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushEvery is the longest a log record waits in the buffer: what a
// crash can lose, and how late a record shows up in the log.
const logFlushEvery = 500 * time.Millisecond

// logBuffer batches the log's writes (the access log writes a record per
// request): records go to a 64 KiB buffer written out when it fills, every
// logFlushEvery, and on Close, so a busy replica makes a few write(2) per
// second instead of one per request. Records keep their order; one write
// never interleaves with another.
type logBuffer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// newLogBuffer buffers w until Close.
func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				_ = b.Flush()
			}
		}
	}()
	return b
}

// Write implements io.Writer.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *logBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close stops the periodic flush and writes out the rest; later writes
// still go through the buffer, so call it last.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}
