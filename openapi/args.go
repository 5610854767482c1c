package openapi

import (
	"encoding/json"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// splitObject splits a JSON object into its members in the client's
// order, with each value's raw text and its decoded value.
func splitObject(data []byte) ([]arg, error) {
	p := jsonvalue.Parser{B: data}
	p.Space()
	if p.I >= len(p.B) || p.B[p.I] != '{' {
		return nil, jsonvalue.ErrNotJSON
	}
	p.I++
	out := make([]arg, 0, 8)
	p.Space()
	if p.I < len(p.B) && p.B[p.I] == '}' {
		return out, nil
	}
	for {
		p.Space()
		k, err := p.Str()
		if err != nil {
			return nil, err
		}
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != ':' {
			return nil, jsonvalue.ErrNotJSON
		}
		p.I++
		p.Space()
		start := p.I
		v, err := p.Value()
		if err != nil {
			return nil, err
		}
		out = append(out, arg{key: k, raw: json.RawMessage(p.B[start:p.I]), val: v})
		p.Space()
		if p.I >= len(p.B) {
			return nil, jsonvalue.ErrNotJSON
		}
		if p.B[p.I] == ',' {
			p.I++
			continue
		}
		if p.B[p.I] == '}' {
			return out, nil
		}
		return nil, jsonvalue.ErrNotJSON
	}
}

// objectRoot reports whether a serialized schema's root has "type":
// "object" and no "anyOf" (an output schema, R1), reading only the root's
// keys: decoding whole output schemas for this cost ~90 ms per load on
// Kubernetes.
func objectRoot(schema []byte) bool {
	members, ok := jsonvalue.Members(schema)
	if !ok {
		return false
	}
	object := false
	for _, m := range members {
		switch m.Key {
		case "anyOf":
			return false
		case "type":
			object = string(m.Raw) == `"object"`
		}
	}
	return object
}
