// Package loopback decides whether a host name or address is this
// machine's: the one rule restmcp applies wherever loopback is special (the
// Origin check, OAuth redirect URIs, client configurations).
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host, a URL's or a Host header's host without its
// port (an IPv6 address with or without its brackets), is "localhost" (any
// case) or a loopback IP address: 127.0.0.0/8 or ::1. A name that only
// looks like one ("127.example.com", "localhost.example") is not.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
