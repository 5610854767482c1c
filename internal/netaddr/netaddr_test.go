package netaddr

import "testing"

func TestGroup(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7":                        "192.0.2.7",
		"::ffff:192.0.2.7":                 "192.0.2.7",
		"2001:db8:1:2::1":                  "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff:ffff:ffff": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":                  "2001:db8:1:3::/64",
		"::1":                              "::/64",
		"":                                 "",
		"not-an-address":                   "not-an-address",
	} {
		if got := Group(addr); got != want {
			t.Errorf("Group(%q) = %q, want %q", addr, got, want)
		}
	}
}
