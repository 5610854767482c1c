package rawnet

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

const supported = true

// maxRW caps one read(2) or write(2), as package internal/poll does.
const maxRW = 1 << 30

// Conn returns c with its Read and Write made as raw system calls when c is
// a *net.TCPConn whose descriptor is reachable (SyscallConn); otherwise c.
func Conn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	r := &conn{TCPConn: tc, rc: rc}
	r.rfn = r.read
	r.wfn = r.write
	return r
}

// conn is a *net.TCPConn whose Read and Write call read(2) and write(2)
// raw. Reads are serialized by rmu and writes by wmu (the buffer and result
// of the call in progress live in the struct, so that a call allocates
// nothing); a Read and a Write may run at once.
type conn struct {
	*net.TCPConn
	rc syscall.RawConn

	rmu  sync.Mutex
	rbuf []byte
	rn   int
	rerr syscall.Errno
	rfn  func(fd uintptr) bool

	wmu  sync.Mutex
	wbuf []byte
	wn   int
	werr syscall.Errno
	wfn  func(fd uintptr) bool
}

// read is one read(2) into c.rbuf: done unless the socket has nothing yet
// (EAGAIN), when RawConn.Read parks the goroutine in the poller and calls
// it again.
func (c *conn) read(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rbuf[0])), uintptr(len(c.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerr = int(n), e
		return true
	}
}

// write writes c.wbuf[c.wn:] with as many write(2) calls as it takes,
// waiting in the poller whenever the socket's buffer is full.
func (c *conn) write(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		b := c.wbuf[c.wn:]
		if len(b) > maxRW {
			b = b[:maxRW]
		}
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			if n == 0 {
				c.werr = syscall.EIO // write(2) of a socket never answers 0 without an error
				return true
			}
			c.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// Read is net.Conn's Read: the bytes read, io.EOF when the peer has closed
// its side, or a *net.OpError (Op "read") as *net.TCPConn's Read returns,
// wrapping os.ErrDeadlineExceeded, net.ErrClosed or the system call's
// *os.SyscallError.
func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	c.rmu.Lock()
	c.rbuf, c.rn, c.rerr = p, 0, 0
	err := c.rc.Read(c.rfn)
	n, errno := c.rn, c.rerr
	c.rbuf = nil
	c.rmu.Unlock()
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write is net.Conn's Write: all of p, or the bytes written before a
// *net.OpError (Op "write") as *net.TCPConn's Write returns.
func (c *conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	c.wbuf, c.wn, c.werr = p, 0, 0
	err := c.rc.Write(c.wfn)
	n, errno := c.wn, c.werr
	c.wbuf = nil
	c.wmu.Unlock()
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// opError is err as net's own Read and Write report it: RawConn's errors
// come wrapped for its "raw-read" or "raw-write", so their cause is
// unwrapped first.
func (c *conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
