// Package rawnet reads and writes TCP connections with raw system calls
// (read(2), write(2) through syscall.RawSyscall) on the connection's own
// non-blocking socket, still parked in Go's network poller when a call
// would block.
//
// Why: a Go program's plain socket I/O brackets every read and write with
// the scheduler's syscall bookkeeping (entersyscall, exitsyscall), and a
// syscall entered while every P is idle wakes the runtime's monitor thread,
// which then polls every 20 µs until it sees no work for a while. A proxy
// at a few thousand calls a second crosses from idle to busy at almost
// every call, so the monitor never rests: on a 2-core virtual machine that
// was 12 % of restmcp's CPU per tools/call (docs/operations.md#speed).
// A non-blocking socket's read or write returns at once (data, EAGAIN or
// an error), so it needs none of that bookkeeping: it is the same system
// call on the same descriptor, and deadlines, Close and the poller work as
// for the wrapped connection.
//
// Only Read and Write change; every other method (deadlines, CloseWrite,
// SyscallConn, ReadFrom's sendfile and splice) is the wrapped
// *net.TCPConn's. Where the package has no raw path (not Linux), Conn and
// Listener return what they are given.
package rawnet

import (
	"context"
	"net"
)

// Listener returns ln with each accepted TCP connection wrapped by Conn.
func Listener(ln net.Listener) net.Listener {
	if !supported {
		return ln
	}
	return listener{ln}
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Conn(c), nil
}

// DialFunc is the dialing function of net.Dialer.DialContext,
// http.Transport.DialContext and redis.Options.Dialer.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer returns dial with each connection it makes wrapped by Conn: TCP
// connections read and write raw, and TLS, Unix-socket or other
// connections are returned as dial made them, as are its errors.
func Dialer(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Conn(c), nil
	}
}
