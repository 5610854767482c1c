package yamltree

import (
	"bytes"
	"fmt"
	"strconv"
)

// JSON writes a character outside the Basic Multilingual Plane as a
// surrogate pair of escapes ("\ud83d\udc4d" is 👍, RFC 8259 §7), and vendors
// do (Twilio's document is full of them). YAML has no such pairs: a
// double-quoted "\ud83d" is an invalid character to yaml.v3, so a JSON
// document read as YAML fails with "found invalid Unicode character escape
// code". Parse therefore first rewrites each pair as YAML's own 8-digit
// escape ("\U0001F44D"), and a lone surrogate as "\uFFFD", the replacement
// character encoding/json decodes it to.

// rewriteSurrogates returns a JSON document with every surrogate escape
// rewritten as above; data itself when it has none or is YAML. It reads escapes as JSON does: a
// backslash always takes the next character with it, so "\\ud83d" is a
// backslash and text.
func rewriteSurrogates(data []byte) []byte {
	// Only a JSON document: in YAML's plain and single-quoted scalars a
	// backslash is text.
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return data
	}
	if !bytes.Contains(data, []byte(`\ud`)) && !bytes.Contains(data, []byte(`\uD`)) {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '\\' || i+1 >= len(data) {
			out = append(out, c)
			continue
		}
		if data[i+1] != 'u' {
			out = append(out, c, data[i+1])
			i++
			continue
		}
		hi, ok := hex4(data, i+2)
		if !ok || hi < 0xD800 || hi > 0xDFFF {
			out = append(out, c)
			continue // the 'u' and its digits are copied as they come
		}
		if lo, ok := hex4(data, i+8); ok && hi <= 0xDBFF && data[i+6] == '\\' && data[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
			r := 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
			out = fmt.Appendf(out, `\U%08X`, r)
			i += 11
			continue
		}
		out = append(out, `\uFFFD`...)
		i += 5
	}
	return out
}

// hex4 reads four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 16)
	return rune(v), err == nil
}
