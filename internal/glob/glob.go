// Package glob is the one glob dialect restmcp matches tool and operation
// names with, wherever a setting or a plan lists them (include_operations
// and exclude_operations, a plan's tools), and tags in a plan's "tag:"
// patterns: "*" matches any run of characters (including none), "?"
// exactly one byte, and every other character itself. There are no
// character classes or escapes, so a pattern never fails to parse.
package glob

// Match reports whether name matches pattern, case-sensitively.
func Match(pattern, name string) bool {
	// Iterative wildcard matching with backtracking to the last "*".
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == name[n]):
			p++
			n++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
