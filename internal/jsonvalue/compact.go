package jsonvalue

import (
	"errors"
	"unicode/utf8"
)

// Compact is JSON text as AppendCompact writes it: valid, without
// insignificant white space, its strings escaped as json.Marshal escapes
// them. It encodes as itself (MarshalJSON), so a result holding it is
// encoded without a tree, by encoding/json and by Append alike.
type Compact []byte

// MarshalJSON returns c itself; a nil Compact is null.
func (c Compact) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return c, nil
}

// maxCompactDepth is the deepest nesting AppendCompact accepts, the bound
// encoding/json's json.Valid (and so Parse) sets.
const maxCompactDepth = 10000

// ErrTooDeep is AppendCompact's error for text nested deeper than
// encoding/json accepts (10,000 arrays and objects).
var ErrTooDeep = errors.New("JSON nested more than 10000 levels deep")

// AppendCompact appends src, one JSON value (RFC 8259), to dst in one pass
// and without a tree: white space between tokens dropped, and each string
// written as json.Marshal writes the string Parse decodes from it (escapes
// normalised, <, >, & and U+2028/U+2029 escaped, each byte of invalid
// UTF-8 as U+FFFD). Object members keep the document's order, duplicates
// included; numbers keep their literal. So, for an object whose keys are
// sorted and distinct, the result is byte for byte Append(Parse(src)),
// and in general Parse of the result equals Parse(src).
//
// The cost is linear in len(src), with one allocation for each 64 levels
// of nesting beyond the first 64. The error is ErrNotJSON for text that
// json.Valid rejects and ErrTooDeep past 10,000 levels; dst is then
// returned unchanged.
func AppendCompact(dst, src []byte) ([]byte, error) {
	out, err := appendCompact(dst, src)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendCompact(dst, src []byte) ([]byte, error) {
	var small [64]byte
	stack := small[:0] // '{' or '[' for each open container
	i := skipSpace(src, 0)
	for {
		// A value starts at src[i].
		if i >= len(src) {
			return nil, ErrNotJSON
		}
		var ok bool
		switch c := src[i]; c {
		case '{', '[':
			if len(stack) == maxCompactDepth {
				return nil, ErrTooDeep
			}
			dst = append(dst, c)
			i = skipSpace(src, i+1)
			if i < len(src) && src[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				dst = append(dst, c+2)
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if dst, i, ok = appendKey(dst, src, i); !ok {
					return nil, ErrNotJSON
				}
			}
			continue
		case '"':
			if dst, i, ok = appendStringToken(dst, src, i); !ok {
				return nil, ErrNotJSON
			}
		case 't':
			if dst, i, ok = appendLiteral(dst, src, i, "true"); !ok {
				return nil, ErrNotJSON
			}
		case 'f':
			if dst, i, ok = appendLiteral(dst, src, i, "false"); !ok {
				return nil, ErrNotJSON
			}
		case 'n':
			if dst, i, ok = appendLiteral(dst, src, i, "null"); !ok {
				return nil, ErrNotJSON
			}
		default:
			end := scanNumber(src, i)
			if end < 0 {
				return nil, ErrNotJSON
			}
			dst = append(dst, src[i:end]...)
			i = end
		}
		// After a value: the end of the text, or a comma or the close of
		// each container the value ends.
		for {
			i = skipSpace(src, i)
			if len(stack) == 0 {
				if i != len(src) {
					return nil, ErrNotJSON
				}
				return dst, nil
			}
			if i >= len(src) {
				return nil, ErrNotJSON
			}
			top := stack[len(stack)-1]
			if src[i] == top+2 {
				dst = append(dst, top+2)
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if src[i] != ',' {
				return nil, ErrNotJSON
			}
			dst = append(dst, ',')
			i = skipSpace(src, i+1)
			if top == '{' {
				if dst, i, ok = appendKey(dst, src, i); !ok {
					return nil, ErrNotJSON
				}
			}
			break
		}
	}
}

// appendKey appends an object member's key and its colon, leaving i at
// the member's value.
func appendKey(dst, src []byte, i int) ([]byte, int, bool) {
	if i >= len(src) || src[i] != '"' {
		return dst, i, false
	}
	dst, i, ok := appendStringToken(dst, src, i)
	if !ok {
		return dst, i, false
	}
	i = skipSpace(src, i)
	if i >= len(src) || src[i] != ':' {
		return dst, i, false
	}
	return append(dst, ':'), skipSpace(src, i+1), true
}

func skipSpace(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

func appendLiteral(dst, src []byte, i int, lit string) ([]byte, int, bool) {
	if len(src)-i < len(lit) || string(src[i:i+len(lit)]) != lit {
		return dst, i, false
	}
	return append(dst, lit...), i + len(lit), true
}

// scanNumber returns the end of the number at src[i] (RFC 8259 §6), or -1.
func scanNumber(src []byte, i int) int {
	if i < len(src) && src[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(src) && '0' <= src[i] && src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i >= len(src):
		return -1
	case src[i] == '0':
		i++
	case '1' <= src[i] && src[i] <= '9':
		digits()
	default:
		return -1
	}
	if i < len(src) && src[i] == '.' {
		i++
		if digits() == 0 {
			return -1
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1
		}
	}
	return i
}

// appendStringToken appends the string token at src[i] (its opening
// quote) as json.Marshal writes its decoded value, and returns the offset
// after its closing quote. A string with nothing to change, the common
// case, is copied as one slice.
func appendStringToken(dst, src []byte, i int) ([]byte, int, bool) {
	start := i
	i++
	for i < len(src) {
		for i < len(src) && plain[src[i]] { // inline: most strings are short
			i++
		}
		if i >= len(src) {
			break
		}
		c := src[i]
		if c < utf8.RuneSelf {
			if c == '"' {
				return append(dst, src[start:i+1]...), i + 1, true
			}
			break // an escape, a control character or an HTML character
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			break
		}
		i += size
	}
	dst = append(dst, src[start:i]...)
	return appendStringRest(dst, src, i)
}

// appendStringRest writes the rest of a string token from src[i] on, rune
// by rune, as AppendString(unquote(token), true) would, and its closing
// quote. Escapes decode as unquote decodes them (decodeEscape).
func appendStringRest(dst, src []byte, i int) ([]byte, int, bool) {
	for i < len(src) {
		if n := plainPrefix(src[i:]); n > 0 {
			dst = append(dst, src[i:i+n]...)
			if i += n; i >= len(src) {
				break
			}
		}
		c := src[i]
		switch {
		case c == '"':
			return append(dst, '"'), i + 1, true
		case c == '\\':
			r, n, ok := decodeEscape(src[i:])
			if !ok {
				return dst, i, false
			}
			dst = appendRune(dst, r)
			i += n
		case c < 0x20:
			return dst, i, false
		case c < utf8.RuneSelf:
			dst = appendRune(dst, rune(c))
			i++
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError) // as unquote decodes it; AppendString keeps U+FFFD
			} else if r == '\u2028' || r == '\u2029' {
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			} else {
				dst = append(dst, src[i:i+size]...)
			}
			i += size
		}
	}
	return dst, i, false
}

// appendRune writes one decoded rune of a string as AppendString writes
// it with HTML escaping (escKind and escChar, appendEscapedHTML's tables).
func appendRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		switch c := byte(r); escKind[c] {
		case 0:
			return append(dst, c)
		case 1:
			return append(dst, '\\', escChar[c])
		default:
			return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	if r == '\u2028' || r == '\u2029' {
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}
