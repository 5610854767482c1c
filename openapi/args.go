package openapi

import (
	"encoding/json"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// splitObject splits a JSON object into its members in the client's
// order, with each value's raw text and its decoded value.
func splitObject(data []byte) ([]arg, error) {
	p := jsonvalue.Parser{B: data}
	out := make([]arg, 0, 8)
	err := p.Object(func(k string) error {
		start := p.I
		v, err := p.Value()
		if err != nil {
			return err
		}
		out = append(out, arg{key: k, raw: json.RawMessage(p.B[start:p.I]), val: v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
