package jsonvalue

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Append appends the JSON encoding of v to dst, byte for byte what
// json.Marshal(v) gives (HTML characters escaped, object keys sorted),
// without reflection for the types Parse produces: map[string]any, []any,
// string, json.Number, bool and nil, json.RawMessage (compacted, as
// Marshal does) and Compact (as it is). Any other type is encoded by json.Marshal. The error is
// json.Marshal's, for a value it refuses (an invalid json.Number, say);
// dst is then returned unchanged.
func Append(dst []byte, v any) ([]byte, error) {
	out, err := appendValue(dst, v)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return AppendString(dst, x, true), nil
	case json.Number:
		if x == "" {
			return append(dst, '0'), nil // as Marshal writes it
		}
		if !validNumber(string(x)) {
			break // json.Marshal names the error
		}
		return append(dst, x...), nil
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, strings.Compare)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k, true)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case Compact:
		if x == "" {
			return append(dst, "null"...), nil
		}
		return append(dst, x...), nil // valid compact JSON already
	case json.RawMessage:
		if x == nil {
			return append(dst, "null"...), nil
		}
		if !json.Valid(x) {
			break
		}
		b := bytes.NewBuffer(dst)
		if err := json.Compact(b, x); err != nil {
			break
		}
		// Compact leaves <, > and & as they are; Marshal escapes them.
		return escapeHTMLFrom(b.Bytes(), len(dst)), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// escapeHTMLFrom escapes <, >, & and U+2028/U+2029 in the compact JSON
// b[from:] as json.Marshal does for a RawMessage (they only occur inside
// strings there, where the escapes mean the same).
func escapeHTMLFrom(b []byte, from int) []byte {
	tail := b[from:]
	if !bytes.ContainsAny(tail, "<>&\u2028\u2029") {
		return b
	}
	out := append([]byte(nil), b[:from]...)
	for i := 0; i < len(tail); {
		c := tail[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			i++
		case c == 0xE2 && i+2 < len(tail) && tail[i+1] == 0x80 && tail[i+2]&^1 == 0xA8:
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[tail[i+2]&0xF])
			i += 3
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json writes
// it (Go's encode.go appendString): control characters escaped (\b, \f,
// \n, \r, \t by name, the rest as \u00XX), each byte of invalid UTF-8 as U+FFFD (Go 1.27's encoding/json, on json/v2; it was \ufffd before),
// U+2028 and U+2029 escaped, and <, > and & escaped when escapeHTML.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	dst = AppendStringContent(dst, s, escapeHTML)
	return append(dst, '"')
}

// AppendStringContent is AppendString without the quotes. A string cut
// where a rune starts (utf8.RuneStart), piece by piece, gives the same
// bytes as the whole: each rune, or each byte of invalid UTF-8, is
// written on its own.
func AppendStringContent(dst []byte, s string, escapeHTML bool) []byte {
	if escapeHTML {
		return AppendEscapedHTML(dst, s)
	}
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// validNumber reports whether s is a JSON number (RFC 8259 §6).
func validNumber(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	digits := func() int {
		n := 0
		for n < len(s) && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		s = s[n:]
		return n
	}
	switch {
	case s == "":
		return false
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		digits()
	default:
		return false
	}
	if s != "" && s[0] == '.' {
		s = s[1:]
		if digits() == 0 {
			return false
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return s == ""
}

// escKind classifies a byte for AppendEscapedHTML: 0 kept as it is, 1 a
// two-byte escape (escChar), 2 \u00XX, 3 the start or part of a
// multi-byte sequence.
var escKind, escChar = func() (k, e [256]byte) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			k[c] = 3
		case c == '"' || c == '\\':
			k[c], e[c] = 1, byte(c)
		case c == '\b':
			k[c], e[c] = 1, 'b'
		case c == '\f':
			k[c], e[c] = 1, 'f'
		case c == '\n':
			k[c], e[c] = 1, 'n'
		case c == '\r':
			k[c], e[c] = 1, 'r'
		case c == '\t':
			k[c], e[c] = 1, 't'
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			k[c] = 2
		}
	}
	return k, e
}()

// AppendEscapedHTML is AppendStringContent with HTML escaping, for text
// held in a string or in bytes (invalid UTF-8 written as \ufffd either
// way), written byte by byte: JSON text as a string has an escape every few bytes (each
// quote), where copying the runs between them one append at a time costs
// about twice as much. It goes piece by piece, each piece as long as its
// worst case (6 output bytes per input byte, and 6 more) fits in dst's
// capacity, so that the loop over a piece's bytes never checks for room;
// the pieces shrink as the room does. dst grows only when the room left is
// under 12 bytes, and then by what the rest is likely to need (its length
// and an eighth), not by its worst case: a caller that sized dst for the
// escaped text and a few bytes more (an answer's buffer) gets it back
// unmoved, where reserving six times the text made every answer of a few
// KB allocate and copy a buffer of six times its text.
func AppendEscapedHTML[T text](dst []byte, s T) []byte {
	n, i := len(dst), 0
	for i < len(s) {
		piece := min(escapeChunk, len(s)-i, (cap(dst)-n-6)/6)
		if piece <= 0 {
			rest := len(s) - i
			dst = slices.Grow(dst[:n], rest+rest/8+12)
			continue
		}
		n, i = escapeHTMLChunk(dst[:cap(dst)], n, s, i, i+piece)
	}
	return dst[:n]
}

// escapeChunk is the most bytes of a string AppendEscapedHTML and
// AppendStringContentWithin escape between checks for room.
const escapeChunk = 4096

// AppendStringContentWithin is AppendStringContent with HTML escaping for
// as much of s (a string or bytes) as fits in dst's capacity: it never
// grows dst. It returns dst with what it wrote and how many bytes of s that
// was, always a whole number of runes; fewer than len(s) means dst is
// nearly full (less than 6 bytes of room per byte of a next piece).
// Written in pieces into a buffer that is emptied in between, s gives the
// same bytes as the whole.
func AppendStringContentWithin[T text](dst []byte, s T) ([]byte, int) {
	n, i := len(dst), 0
	for i < len(s) {
		piece := min(escapeChunk, len(s)-i, (cap(dst)-n-6)/6)
		if piece <= 0 {
			break
		}
		n, i = escapeHTMLChunk(dst[:cap(dst)], n, s, i, i+piece)
	}
	return dst[:n], i
}

// escapeHTMLChunk escapes the runes of s that start in s[i:end] into d
// from d[n], and returns where it stopped in d and s. d has room for 6
// bytes per byte of s[i:end] and 6 more.
func escapeHTMLChunk[T text](d []byte, n int, s T, i, end int) (int, int) {
	for i < end {
		c := s[i]
		switch escKind[c] {
		case 0:
			d[n] = c
			n++
			i++
		case 1:
			d[n], d[n+1] = '\\', escChar[c]
			n += 2
			i++
		case 2:
			d[n], d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]
			n += 6
			i++
		default:
			r, size := utf8.DecodeRune([]byte(s[i:min(i+utf8.UTFMax, len(s))])) // no copy for bytes; 4 on the stack for a string
			switch {
			case r == utf8.RuneError && size == 1:
				n += copy(d[n:], "\uFFFD")
			case r == '\u2028' || r == '\u2029':
				d[n], d[n+1], d[n+2], d[n+3], d[n+4], d[n+5] = '\\', 'u', '2', '0', '2', hexDigits[r&0xF]
				n += 6
			default:
				n += copy(d[n:], s[i:i+size])
			}
			i += size
		}
	}
	return n, i
}

// AppendMember returns a new slice: obj, a JSON object (trailing space
// allowed), with the member key: value added at its end; value is JSON
// already, key is written as AppendString writes it (no HTML escaping).
// The caller has checked that obj is an object without that key.
func AppendMember(obj []byte, key string, value []byte) []byte {
	trimmed := bytes.TrimRight(obj, " \t\r\n")
	out := make([]byte, 0, len(trimmed)+len(key)+len(value)+4)
	out = append(out, trimmed[:len(trimmed)-1]...)
	if len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0 {
		out = append(out, ',')
	}
	out = AppendString(out, key, false)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}
