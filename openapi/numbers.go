package openapi

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Number bounds (docs/security.md H26). JSON puts no limit on a number's
// digits or exponent, and JSON Schema compares numbers exactly: the type
// check ("integer" means no fraction, 2020-12 §6.1.1), minimum, multipleOf,
// enum, const and uniqueItems all read a literal as an exact rational. Read
// that way, 1e999999 is a number of a million digits: sixteen of them in a
// 247-byte body cost seconds of CPU. So before any check, every number in
// the arguments must have at most maxNumberDigits digits before its
// exponent and an exponent of at most maxNumberExponent in magnitude; a
// number past either bound is refused as invalid arguments, naming it and
// where it is, and nothing is expanded. The bounds hold every float64
// (about 1e±308, 17 significant digits) and every integer up to 10^400, far
// past any real API's values, and keep one exact check under a few
// microseconds, so a 1 MiB body of numbers costs well under a CPU-second
// (BenchmarkHostileInput).
const (
	maxNumberDigits   = 400
	maxNumberExponent = 400
)

// numberProblem returns why the JSON number literal lit is refused, or ""
// when it is within the bounds. lit is a valid JSON number
// (https://www.rfc-editor.org/rfc/rfc8259#section-6). It reads lit once
// and allocates only for a refusal.
func numberProblem(lit string) string {
	digits, i := 0, 0
	for ; i < len(lit); i++ {
		c := lit[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if digits > maxNumberDigits {
		return "number " + shortNumber(lit) + " has " + strconv.Itoa(digits) + " digits; at most " + strconv.Itoa(maxNumberDigits) + " are accepted"
	}
	if i == len(lit) {
		return ""
	}
	exp := strings.TrimLeft(strings.TrimLeft(lit[i+1:], "+-"), "0")
	if len(exp) > 3 || (exp != "" && atoiSmall(exp) > maxNumberExponent) {
		return "number " + shortNumber(lit) + " has an exponent beyond ±" + strconv.Itoa(maxNumberExponent) + "; restmcp does not expand such numbers"
	}
	return ""
}

// atoiSmall reads up to three ASCII digits.
func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// shortNumber quotes a number literal for a message: whole up to 40
// bytes, else its first and last 16 bytes around "…" (literals are ASCII).
func shortNumber(lit string) string {
	if len(lit) <= 40 {
		return lit
	}
	return lit[:16] + "…" + lit[len(lit)-16:]
}

// checkNumbers returns a *validationError for the first number inside v,
// one argument's decoded value, that numberProblem refuses (arrays in
// order, objects in their members' sorted order, so the same value always
// names the same number), with its path inside the argument
// ("items[2].amount"). A value without such a number is read once; the
// path of a refused one is found by reading again only the containers on
// the way to it.
func checkNumbers(v any) error {
	if !hasBadNumber(v) {
		return nil
	}
	root, path := v, []string(nil)
	for {
		switch x := v.(type) {
		case json.Number:
			return &validationError{path: instancePath(root, path), reason: numberProblem(string(x))}
		case []any:
			for i, e := range x {
				if hasBadNumber(e) {
					path, v = append(path, strconv.Itoa(i)), e
					break
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if hasBadNumber(x[k]) {
					path, v = append(path, k), x[k]
					break
				}
			}
		}
	}
}

// hasBadNumber reports whether v holds a number that numberProblem refuses.
func hasBadNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return numberProblem(string(x)) != ""
	case []any:
		for _, e := range x {
			if hasBadNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasBadNumber(e) {
				return true
			}
		}
	}
	return false
}
