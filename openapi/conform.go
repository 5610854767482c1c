package openapi

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
)

// shape is an output schema as ConformStructured reads it: the keywords an
// R8 output schema keeps (type, properties, items, additionalProperties,
// anyOf, $ref into $defs). Anything else only describes.
type shape struct {
	typ   string // "" when the schema has no type
	props map[string]*shape
	items *shape
	addl  *shape
	anyOf []*shape
	ref   string // "#/$defs/<name>"
}

// outputShape parses t's output schema once; nil when it has none or it is
// not JSON.
type outputShape struct {
	once sync.Once
	root *shape
	defs map[string]*shape
}

// ConformStructured returns v, an upstream JSON object decoded with
// UseNumber, made to validate against the tool's outputSchema (R8, by
// construction): every value below the root whose type the schema does not
// allow is replaced by null, which an R8 output schema allows everywhere
// below the root. Members the schema does not name are kept (an R8 schema
// never sets additionalProperties false). v is not changed; a tool without
// an output schema returns v as is.
func (t *Tool) ConformStructured(v map[string]any) map[string]any {
	if v == nil || len(t.OutputSchema) == 0 {
		return v
	}
	var sh *shape
	var defs map[string]*shape
	if o := t.outShape; o != nil {
		o.once.Do(func() { o.root, o.defs = parseShape(t.OutputSchema) })
		sh, defs = o.root, o.defs
	} else {
		sh, defs = parseShape(t.OutputSchema) // a Tool not made by Load
	}
	if sh == nil {
		return v
	}
	out, _ := conformValue(v, sh, defs, 0).(map[string]any)
	return out
}

// maxConformDepth bounds the walk (a $ref cycle meets data of any depth).
const maxConformDepth = 64

func conformValue(v any, sh *shape, defs map[string]*shape, depth int) any {
	if sh == nil || depth > maxConformDepth {
		return v
	}
	if sh.ref != "" {
		return conformValue(v, defs[strings.TrimPrefix(sh.ref, "#/$defs/")], defs, depth+1)
	}
	if !typeMatches(sh.typ, v) {
		return nil
	}
	if len(sh.anyOf) > 0 {
		for _, b := range sh.anyOf {
			if b.accepts(v, defs, depth) {
				return conformValue(v, b, defs, depth+1)
			}
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if p, ok := sh.props[k]; ok {
				out[k] = conformValue(e, p, defs, depth+1)
			} else {
				out[k] = conformValue(e, sh.addl, defs, depth+1)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = conformValue(e, sh.items, defs, depth+1)
		}
		return out
	}
	return v
}

// accepts reports whether v's own type fits sh (children are conformed
// afterwards, so only the top level matters here).
func (sh *shape) accepts(v any, defs map[string]*shape, depth int) bool {
	if depth > maxConformDepth {
		return true
	}
	if sh.ref != "" {
		d := defs[strings.TrimPrefix(sh.ref, "#/$defs/")]
		return d == nil || d.accepts(v, defs, depth+1)
	}
	if !typeMatches(sh.typ, v) {
		return false
	}
	if len(sh.anyOf) > 0 {
		for _, b := range sh.anyOf {
			if b.accepts(v, defs, depth+1) {
				return true
			}
		}
		return false
	}
	return true
}

// typeMatches reports whether the decoded JSON value v has JSON Schema
// type typ ("" matches everything).
func typeMatches(typ string, v any) bool {
	switch typ {
	case "":
		return true
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		return isDecodedNumber(v)
	case "integer":
		switch n := v.(type) {
		case json.Number:
			if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return true
			}
			f, err := strconv.ParseFloat(string(n), 64)
			return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
		case float64:
			return n == math.Trunc(n) && !math.IsInf(n, 0)
		}
		return false
	}
	return true // a type this walk does not know: leave the value alone
}

func isDecodedNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64:
		return true
	}
	return false
}

// parseShape reads an output schema into shapes, with its $defs.
func parseShape(schema []byte) (*shape, map[string]*shape) {
	if len(schema) == 0 {
		return nil, nil
	}
	var raw map[string]any
	if json.Unmarshal(schema, &raw) != nil {
		return nil, nil
	}
	defs := map[string]*shape{}
	if d, ok := raw["$defs"].(map[string]any); ok {
		for name, v := range d {
			if m, ok := v.(map[string]any); ok {
				defs[name] = toShape(m)
			}
		}
	}
	return toShape(raw), defs
}

func toShape(m map[string]any) *shape {
	sh := &shape{}
	sh.typ, _ = m["type"].(string)
	sh.ref, _ = m["$ref"].(string)
	if p, ok := m["properties"].(map[string]any); ok {
		sh.props = make(map[string]*shape, len(p))
		for k, v := range p {
			if c, ok := v.(map[string]any); ok {
				sh.props[k] = toShape(c)
			}
		}
	}
	if c, ok := m["items"].(map[string]any); ok {
		sh.items = toShape(c)
	}
	if c, ok := m["additionalProperties"].(map[string]any); ok {
		sh.addl = toShape(c)
	}
	if l, ok := m["anyOf"].([]any); ok {
		for _, b := range l {
			if c, ok := b.(map[string]any); ok {
				sh.anyOf = append(sh.anyOf, toShape(c))
			}
		}
	}
	return sh
}
