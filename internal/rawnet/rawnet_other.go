//go:build !linux

package rawnet

import "net"

const supported = false

// Conn returns c: this system has no raw path.
func Conn(c net.Conn) net.Conn { return c }
