//go:build !unix

package h1

import "net"

// open reports false where there is no non-blocking peek: a connection
// that would be probed is closed and the request sent on a fresh one.
func open(net.Conn) bool { return false }
