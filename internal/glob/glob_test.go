package glob

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "anything/at/all", true}, {"equities_*", "equities_quote", true},
		{"equities_*", "etfs_top", false}, {"?tf*", "etfs_top", true}, {"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false}, {"[a-z]*", "abc", false}, {"[a-z]*", "[a-z]x", true},
		{"Get*", "getUser", false}, {"", "", true}, {"", "x", false}, {"**", "x", true},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}
