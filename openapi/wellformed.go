package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"encoding/json/jsontext"
)

// wellFormed returns data, a JSON document, as kin-openapi can decode it
// on Go's default encoding/json (built on encoding/json/v2, which refuses
// both): an object member whose name repeats keeps its last value, as
// encoding/json's own implementation did (RFC 8259 §4 leaves repeated
// names to the reader; RFC 7493 §2.3 forbids them), and invalid UTF-8 in a
// string becomes U+FFFD. Each repair is a warning naming the file and the
// member's JSON pointer. data that is already well formed (RFC 7493) is
// returned as it is, with no warnings: the check is one validation pass.
//
// A document that is not JSON at all is returned as it is (the caller's
// decoder then reports the syntax error with its position).
//
// https://www.rfc-editor.org/rfc/rfc8259#section-4,
// https://www.rfc-editor.org/rfc/rfc7493#section-2.3
func wellFormed(data []byte, file string) ([]byte, []Problem) {
	if jsontext.Value(data).IsValid() {
		return data, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	w := jsonRepairer{file: file}
	var out bytes.Buffer
	out.Grow(len(data))
	if err := w.value(dec, &out, ""); err != nil {
		return data, nil
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return data, nil // trailing data: left to the decoder's error
	}
	return out.Bytes(), w.problems
}

// jsonRepairer rewrites one JSON value at a time, collecting the repairs.
type jsonRepairer struct {
	file     string
	problems []Problem
}

// value copies the next JSON value of dec to out, repaired; ptr is its
// RFC 6901 pointer. Nesting is bounded by jsontext's own depth limit
// (10,000), which it reports as an error.
func (w *jsonRepairer) value(dec *jsontext.Decoder, out *bytes.Buffer, ptr string) error {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		type member struct {
			name []byte // quoted, as it came
			raw  []byte
		}
		var members []member
		at := map[string]int{}
		for dec.PeekKind() != '}' {
			raw, err := dec.ReadValue()
			if err != nil {
				return err
			}
			// raw points into dec's buffer, which the member's value
			// reuses: the name is kept as a copy.
			raw = bytes.Clone(w.text(raw, ptr, "member name"))
			unquoted, err := jsontext.AppendUnquote(nil, raw)
			if err != nil {
				return err
			}
			name := string(unquoted)
			where := ptr + "/" + escapeToken(name) // its pointer
			var v bytes.Buffer
			if err := w.value(dec, &v, where); err != nil {
				return err
			}
			if i, dup := at[name]; dup {
				w.problems = append(w.problems, Problem{Severity: SeverityWarning, File: w.file, Pointer: where,
					Message: fmt.Sprintf("member %q appears more than once in this object; the last one is used", name)})
				members[i].raw = nil
			}
			at[name] = len(members)
			members = append(members, member{raw, v.Bytes()})
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		out.WriteByte('{')
		first := true
		for _, m := range members {
			if m.raw == nil {
				continue
			}
			if !first {
				out.WriteByte(',')
			}
			first = false
			out.Write(m.name)
			out.WriteByte(':')
			out.Write(m.raw)
		}
		out.WriteByte('}')
		return nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		out.WriteByte('[')
		for i := 0; dec.PeekKind() != ']'; i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := w.value(dec, out, fmt.Sprintf("%s/%d", ptr, i)); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		out.WriteByte(']')
		return nil
	case '"':
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		out.Write(w.text(raw, ptr, "string"))
		return nil
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		out.Write(v)
		return nil
	}
}

// text returns raw, a JSON string as it came, with each run of invalid
// UTF-8 replaced by U+FFFD, noting the repair. Invalid bytes stand only
// inside the quotes, as themselves (an escape is ASCII), so the result is
// the same string, valid.
func (w *jsonRepairer) text(raw []byte, ptr, what string) []byte {
	if utf8.Valid(raw) {
		return raw
	}
	w.problems = append(w.problems, Problem{Severity: SeverityWarning, File: w.file, Pointer: ptr,
		Message: "a " + what + " here is not valid UTF-8; each invalid sequence is read as U+FFFD"})
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}
