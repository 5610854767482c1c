// Package netaddr groups client addresses the one way restmcp counts them
// wherever a limit is per address (anonymous callers' plans, session caps,
// OAuth registration and sign-in): an IPv4 address alone, an IPv6 address
// by its /64, the block one subscriber is usually given (RFC 6177 §2,
// https://www.rfc-editor.org/rfc/rfc6177#section-2), so that one host
// cannot pass a per-address limit by changing the low 64 bits.
package netaddr

import "net"

// Group is the group addr counts in: an IPv4 address (an IPv4-mapped IPv6
// address too) as its dotted form, an IPv6 address as its /64 in CIDR
// notation ("2001:db8:1:2::/64"), and anything that is not an IP address
// (a Unix socket's "@", "") unchanged.
func Group(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
