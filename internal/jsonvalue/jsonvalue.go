// Package jsonvalue reads JSON in one pass, without reflection: values as
// encoding/json decodes them into an any with UseNumber, and objects and
// arrays split into their raw members.
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse decodes one JSON value into the types encoding/json gives an
// any with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil), in one pass and without reflection. NewRequest decodes each
// argument once with it and shares the value between validation and
// serialization (Q4: numbers keep the client's literal).
func Parse(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, ErrNotJSON
	}
	p := Parser{B: data}
	p.Space()
	return p.Value()
}

var ErrNotJSON = errors.New("not valid JSON")

// Parser reads JSON that json.Valid has accepted; it still checks
// bounds so that it never panics.
type Parser struct {
	B []byte // the JSON text
	I int    // the offset of the next byte to read
}

func (p *Parser) Space() {
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case ' ', '\t', '\r', '\n':
			p.I++
		default:
			return
		}
	}
}

func (p *Parser) Value() (any, error) {
	if p.I >= len(p.B) {
		return nil, ErrNotJSON
	}
	switch c := p.B[p.I]; {
	case c == '{':
		m := map[string]any{}
		err := p.Object(func(k string) error {
			v, err := p.Value()
			m[k] = v
			return err
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	case c == '[':
		p.I++
		l := []any{}
		p.Space()
		if p.I < len(p.B) && p.B[p.I] == ']' {
			p.I++
			return l, nil
		}
		for {
			p.Space()
			v, err := p.Value()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			p.Space()
			if p.I >= len(p.B) {
				return nil, ErrNotJSON
			}
			if p.B[p.I] == ',' {
				p.I++
				continue
			}
			if p.B[p.I] == ']' {
				p.I++
				return l, nil
			}
			return nil, ErrNotJSON
		}
	case c == '"':
		return p.Str()
	case c == 't':
		p.I += 4
		return true, nil
	case c == 'f':
		p.I += 5
		return false, nil
	case c == 'n':
		p.I += 4
		return nil, nil
	default:
		start := p.I
		for p.I < len(p.B) {
			switch p.B[p.I] {
			case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				p.I++
				continue
			}
			break
		}
		if p.I == start {
			return nil, ErrNotJSON
		}
		return json.Number(p.B[start:p.I]), nil
	}
}

// Str reads a string: one without escapes and in valid UTF-8 is copied
// directly, others are decoded by unquote, as encoding/json decodes them.
func (p *Parser) Str() (string, error) {
	if p.I >= len(p.B) || p.B[p.I] != '"' {
		return "", ErrNotJSON
	}
	start := p.I
	p.I++
	escaped := false
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case '\\':
			escaped = true
			p.I += 2
			continue
		case '"':
			p.I++
			raw := p.B[start:p.I]
			if !escaped && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			s, ok := unquote(raw[1 : len(raw)-1])
			if !ok {
				return "", ErrNotJSON
			}
			return s, nil
		}
		p.I++
	}
	return "", ErrNotJSON
}

// skip moves past one JSON value without decoding it.
func (p *Parser) Skip() bool {
	depth := 0
	for p.I < len(p.B) {
		switch c := p.B[p.I]; c {
		case '"':
			if _, err := p.StrRaw(); err != nil {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true // end of the enclosing object after a scalar
			}
			depth--
			if depth == 0 {
				p.I++
				return true
			}
		case ',', ' ', '\t', '\r', '\n', ':':
			if depth == 0 {
				return true
			}
		}
		p.I++
	}
	return depth == 0
}

// strRaw moves past a string without decoding it.
func (p *Parser) StrRaw() (int, error) {
	start := p.I
	p.I++
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case '\\':
			p.I += 2
			continue
		case '"':
			p.I++
			return start, nil
		}
		p.I++
	}
	return start, ErrNotJSON
}

// unquote decodes the inside of a JSON string (RFC 8259 §7) as
// encoding/json does: the escapes \" \\ \/ \b \f \n \r \t and \uXXXX
// (a UTF-16 surrogate pair as one rune, a lone surrogate as U+FFFD), and
// each byte of invalid UTF-8 as U+FFFD. ok is false for a control
// character, an unknown escape or a malformed \u.
func unquote(s []byte) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			r, n, ok := decodeEscape(s[i:])
			if !ok {
				return "", false
			}
			b = utf8.AppendRune(b, r)
			i += n
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b), true
}

// decodeEscape decodes the escape at the start of s (its backslash) as
// encoding/json does: \" \\ \/ \b \f \n \r \t and \uXXXX, a UTF-16
// surrogate pair of \u escapes as one rune and a lone surrogate as U+FFFD.
// n is the bytes it spans; ok is false for an unknown escape or a
// malformed \u.
func decodeEscape[T text](s T) (r rune, n int, ok bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return r, 6, true
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, 12, true
				}
			}
		}
		return utf8.RuneError, 6, true
	}
	return 0, 0, false
}

// hex4 reads the 4 hex digits of a \u escape.
func hex4[T text](s T) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// Member is one member of a JSON object: its decoded key and its raw
// value.
type Member struct {
	Key string
	Raw []byte
}

// Members splits a JSON object into its members without decoding the
// values. ok is false when data is not an object.
func Members(data []byte) ([]Member, bool) {
	p := Parser{B: data}
	var out []Member
	err := p.Object(func(k string) error {
		start := p.I
		if !p.Skip() {
			return ErrNotJSON
		}
		out = append(out, Member{Key: k, Raw: p.B[start:p.I]})
		return nil
	})
	p.Space()
	if err != nil || p.I != len(p.B) {
		return nil, false
	}
	return out, true
}

// Object reads the object that starts at the next non-space byte: for
// each member it reads the key and the colon and calls member with the
// key, the parser at the member's value, which member must read (Value,
// Skip, Str …); then a comma or the closing brace. It is the one object
// walk of the package and of its users (Value, Members, openapi's
// argument splitting). Anything else is ErrNotJSON, or member's error.
func (p *Parser) Object(member func(key string) error) error {
	return p.ObjectRaw(func(token []byte) error {
		k, err := (&Parser{B: token}).Str()
		if err != nil {
			return err
		}
		return member(k)
	})
}

// ObjectRaw is Object with each member's key as its token, quotes and
// escapes included, undecoded: for a caller that compares keys with the
// few it knows without making a string of each (adapter's JSON-RPC
// message reading).
func (p *Parser) ObjectRaw(member func(token []byte) error) error {
	if empty, err := p.open('{', '}'); empty || err != nil {
		return err
	}
	for {
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != '"' {
			return ErrNotJSON
		}
		start, err := p.StrRaw()
		if err != nil {
			return err
		}
		k := p.B[start:p.I]
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != ':' {
			return ErrNotJSON
		}
		p.I++
		p.Space()
		if err := member(k); err != nil {
			return err
		}
		if closed, err := p.next('}'); closed || err != nil {
			return err
		}
	}
}

// Array reads the array that starts at the next non-space byte: for each
// element it calls elem with the parser at the element, which elem must
// read (Value, Skip, Object …); then a comma or the closing bracket. It
// is the one array walk, as Object is the one object walk. Anything else
// is ErrNotJSON, or elem's error.
func (p *Parser) Array(elem func() error) error {
	if empty, err := p.open('[', ']'); empty || err != nil {
		return err
	}
	for {
		p.Space()
		if err := elem(); err != nil {
			return err
		}
		if closed, err := p.next(']'); closed || err != nil {
			return err
		}
	}
}

// open reads the opening byte of an object or array at the next non-space
// byte, and its closing byte when it is empty (empty reports that).
func (p *Parser) open(open, close byte) (empty bool, err error) {
	p.Space()
	if p.I >= len(p.B) || p.B[p.I] != open {
		return false, ErrNotJSON
	}
	p.I++
	p.Space()
	if p.I < len(p.B) && p.B[p.I] == close {
		p.I++
		return true, nil
	}
	return false, nil
}

// next reads what follows a member or element: a comma (another follows)
// or the closing byte (closed reports that).
func (p *Parser) next(close byte) (closed bool, err error) {
	p.Space()
	if p.I >= len(p.B) {
		return false, ErrNotJSON
	}
	switch p.B[p.I] {
	case ',':
		p.I++
		return false, nil
	case close:
		p.I++
		return true, nil
	}
	return false, ErrNotJSON
}

// DeeperThan reports whether b, JSON that json.Valid has accepted, nests
// objects and arrays deeper than max.
func DeeperThan(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			p := Parser{B: b, I: i}
			if _, err := p.StrRaw(); err != nil {
				return false
			}
			i = p.I - 1
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// Token is the string a JSON string token (quotes included) holds, decoded
// as encoding/json decodes it; "" for a token that is not a valid string.
func Token(tok []byte) string {
	s, _ := (&Parser{B: tok}).Str()
	return s
}

// Elements splits a JSON array into its elements without decoding
// them. ok is false when raw is not an array.
func Elements(raw []byte) ([][]byte, bool) {
	p := Parser{B: raw}
	var out [][]byte
	err := p.Array(func() error {
		start := p.I
		if !p.Skip() {
			return ErrNotJSON
		}
		out = append(out, p.B[start:p.I])
		return nil
	})
	p.Space()
	if err != nil || p.I != len(p.B) {
		return nil, false
	}
	return out, true
}

// WriteKey writes the start of an object's member to b: "," unless it is
// the first (i == 0), the key as a JSON string (WriteString) and ":". The
// caller writes the value.
func WriteKey(b *bytes.Buffer, i int, key string) {
	if i > 0 {
		b.WriteByte(',')
	}
	WriteString(b, key)
	b.WriteByte(':')
}

// WriteString writes s to b as a JSON string, as encoding/json would
// without HTML escaping: quotes, backslashes and control characters
// escaped, invalid UTF-8 as U+FFFD.
func WriteString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
		}
		b.WriteString(s[start:i])
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default: // invalid UTF-8 byte: U+FFFD, as encoding/json writes it
			b.WriteString("\uFFFD")
		}
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// LooksLikeObject reports whether data, after leading white space and a
// byte order mark, starts a JSON object: a cheap test for JSON against
// YAML, not a validation.
func LooksLikeObject(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(data) > 0 && data[0] == '{'
}
