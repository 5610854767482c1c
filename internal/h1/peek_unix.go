//go:build unix

package h1

import (
	"net"
	"syscall"
)

// open tells whether the server has not closed nc (nor sent anything
// unasked): one non-blocking peek (recv(2) with MSG_PEEK|MSG_DONTWAIT).
func open(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK // nothing to read: still open
		return true
	})
	return err == nil && alive
}
