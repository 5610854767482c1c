// Package clip shortens text for messages and logs without breaking a
// UTF-8 character.
package clip

import "unicode/utf8"

// String returns s when it has at most n bytes; otherwise its longest
// prefix of at most n bytes that ends on a character boundary, then "…".
func String(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
