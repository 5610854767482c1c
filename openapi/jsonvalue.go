package openapi

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// parseJSON decodes one JSON value into the types encoding/json gives an
// any with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil), in one pass and without reflection. NewRequest decodes each
// argument once with it and shares the value between validation and
// serialization (Q4: numbers keep the client's literal).
func parseJSON(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errNotJSON
	}
	p := jsonParser{b: data}
	p.ws()
	return p.value()
}

var errNotJSON = errors.New("not valid JSON")

// jsonParser reads JSON that json.Valid has accepted; it still checks
// bounds so that it never panics.
type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	if p.i >= len(p.b) {
		return nil, errNotJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		m := map[string]any{}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return m, nil
		}
		for {
			p.ws()
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, errNotJSON
			}
			p.i++
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			m[k] = v
			p.ws()
			if p.i >= len(p.b) {
				return nil, errNotJSON
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				return m, nil
			}
			return nil, errNotJSON
		}
	case c == '[':
		p.i++
		l := []any{}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return l, nil
		}
		for {
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			p.ws()
			if p.i >= len(p.b) {
				return nil, errNotJSON
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				return l, nil
			}
			return nil, errNotJSON
		}
	case c == '"':
		return p.str()
	case c == 't':
		p.i += 4
		return true, nil
	case c == 'f':
		p.i += 5
		return false, nil
	case c == 'n':
		p.i += 4
		return nil, nil
	default:
		start := p.i
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				p.i++
				continue
			}
			break
		}
		if p.i == start {
			return nil, errNotJSON
		}
		return json.Number(p.b[start:p.i]), nil
	}
}

// str reads a string; strings without escapes are copied directly, others
// go through encoding/json (which also replaces invalid UTF-8).
func (p *jsonParser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", errNotJSON
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			p.i++
			raw := p.b[start:p.i]
			if !escaped && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errNotJSON
			}
			return s, nil
		}
		p.i++
	}
	return "", errNotJSON
}

// splitObject splits a JSON object into its members in the client's
// order, with each value's raw text and its decoded value.
func splitObject(data []byte) ([]arg, error) {
	p := jsonParser{b: data}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, errNotJSON
	}
	p.i++
	out := make([]arg, 0, 8)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		return out, nil
	}
	for {
		p.ws()
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, errNotJSON
		}
		p.i++
		p.ws()
		start := p.i
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, arg{key: k, raw: json.RawMessage(p.b[start:p.i]), val: v})
		p.ws()
		if p.i >= len(p.b) {
			return nil, errNotJSON
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			return out, nil
		}
		return nil, errNotJSON
	}
}

// objectRoot reports whether a serialized schema's root has "type":
// "object" and no "anyOf" (an output schema, R1), reading only the root's
// keys: decoding whole output schemas for this cost ~90 ms per load on
// Kubernetes.
func objectRoot(schema []byte) bool {
	p := jsonParser{b: schema}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	object := false
	for {
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			return object
		}
		k, err := p.str()
		if err != nil {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		start := p.i
		if !p.skip() {
			return false
		}
		switch k {
		case "anyOf":
			return false
		case "type":
			object = string(p.b[start:p.i]) == `"object"`
		}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
		}
	}
}

// skip moves past one JSON value without decoding it.
func (p *jsonParser) skip() bool {
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			if _, err := p.strRaw(); err != nil {
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
				p.i++
				return true
			}
		case ',', ' ', '\t', '\r', '\n', ':':
			if depth == 0 {
				return true
			}
		}
		p.i++
	}
	return depth == 0
}

// strRaw moves past a string without decoding it.
func (p *jsonParser) strRaw() (int, error) {
	start := p.i
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return start, nil
		}
		p.i++
	}
	return start, errNotJSON
}
