package openapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/restmcp/restmcp/internal/jsonvalue"
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
	sh, defs := t.shapes()
	if sh == nil {
		return v
	}
	out, _ := conformValue(v, sh, defs, 0).(map[string]any)
	return out
}

// FitsStructured reports whether raw, a JSON object as
// jsonvalue.AppendCompact writes it (valid, compact, valid UTF-8), is
// already what ConformStructured would make of it: no value below the
// root has a type the tool's outputSchema does not allow. It reads raw
// once without building a tree or allocating, so a large answer that
// fits is passed on as its bytes. Every occurrence of a repeated member
// is checked. A tool without an output schema fits everything; raw that
// is not such an object does not fit.
func (t *Tool) FitsStructured(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	if len(t.OutputSchema) == 0 {
		return true
	}
	sh, defs := t.shapes()
	if sh == nil {
		return true
	}
	p := jsonvalue.Parser{B: raw}
	return fits(&p, sh, defs, 0) && p.I == len(raw)
}

// shapes is t's output schema as shapes, parsed once per tool.
func (t *Tool) shapes() (*shape, map[string]*shape) {
	if o := t.outShape; o != nil {
		o.once.Do(func() { o.root, o.defs = parseShape(t.OutputSchema) })
		return o.root, o.defs
	}
	return parseShape(t.OutputSchema) // a Tool not made by Load
}

// fits is conformValue's walk over compact JSON text: it reads the value
// at p and reports whether conformValue would return it unchanged. It
// stops at the first value that would change (p is then mid-value).
func fits(p *jsonvalue.Parser, sh *shape, defs map[string]*shape, depth int) bool {
	if sh == nil || depth > maxConformDepth {
		return skip(p)
	}
	if sh.ref != "" {
		return fits(p, defs[strings.TrimPrefix(sh.ref, "#/$defs/")], defs, depth+1)
	}
	k, lit := peekKind(p)
	if k == 'n' {
		return skip(p) // null stays null under every shape
	}
	if !rawTypeMatches(sh.typ, k, lit) {
		return false
	}
	if len(sh.anyOf) > 0 {
		for _, b := range sh.anyOf {
			if b.acceptsRaw(k, lit, defs, depth) {
				return fits(p, b, defs, depth+1)
			}
		}
		return false
	}
	if k == '{' || k == '[' {
		close := k + 2 // '}' is '{'+2, ']' is '['+2
		if empty, err := p.Open(k, close); err != nil || empty {
			return err == nil
		}
		for {
			child := sh.items
			if k == '{' {
				var ok bool
				if child, ok = memberShape(p, sh); !ok {
					return false
				}
			}
			if !fits(p, child, defs, depth+1) {
				return false
			}
			if closed, err := p.Next(close); err != nil || closed {
				return err == nil
			}
		}
	}
	return skip(p)
}

// skip moves p past the compact JSON value at p.
func skip(p *jsonvalue.Parser) bool {
	p.I = jsonvalue.SkipCompact(p.B, p.I)
	return p.I < len(p.B) // an object's value is never the text's last byte
}

// memberShape reads an object member's key and colon at p and returns the
// shape its value must fit: the property's, or additionalProperties'. A
// key without escapes is looked up without allocating.
func memberShape(p *jsonvalue.Parser, sh *shape) (*shape, bool) {
	start, err := p.StrRaw()
	if err != nil {
		return nil, false
	}
	child, named := (*shape)(nil), false
	if key := p.B[start+1 : p.I-1]; bytes.IndexByte(key, '\\') < 0 {
		child, named = sh.props[string(key)]
	} else {
		q := jsonvalue.Parser{B: p.B, I: start}
		s, err := q.Str()
		if err != nil {
			return nil, false
		}
		child, named = sh.props[s]
	}
	if !named {
		child = sh.addl
	}
	if p.I >= len(p.B) || p.B[p.I] != ':' {
		return nil, false
	}
	p.I++
	return child, true
}

// peekKind is the kind of the value at p, by its first byte ('{', '[',
// '"', 't' or 'f' for booleans, 'n', and '0' for numbers), and a number's
// literal; p does not move.
func peekKind(p *jsonvalue.Parser) (byte, []byte) {
	if p.I >= len(p.B) {
		return 0, nil
	}
	switch c := p.B[p.I]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c, nil
	}
	end := p.I
	for end < len(p.B) && strings.IndexByte("+-.eE0123456789", p.B[end]) >= 0 {
		end++
	}
	return '0', p.B[p.I:end]
}

// rawTypeMatches is typeMatches for a value of kind k (peekKind).
func rawTypeMatches(typ string, k byte, lit []byte) bool {
	switch typ {
	case "":
		return true
	case "null":
		return k == 'n'
	case "object":
		return k == '{'
	case "array":
		return k == '['
	case "string":
		return k == '"'
	case "boolean":
		return k == 't' || k == 'f'
	case "number":
		return k == '0'
	case "integer":
		return k == '0' && integerLiteral(string(lit))
	}
	return true
}

// acceptsRaw is accepts for a value of kind k (peekKind).
func (sh *shape) acceptsRaw(k byte, lit []byte, defs map[string]*shape, depth int) bool {
	if depth > maxConformDepth {
		return true
	}
	if sh.ref != "" {
		d := defs[strings.TrimPrefix(sh.ref, "#/$defs/")]
		return d == nil || d.acceptsRaw(k, lit, defs, depth+1)
	}
	if !rawTypeMatches(sh.typ, k, lit) {
		return false
	}
	if len(sh.anyOf) > 0 {
		for _, b := range sh.anyOf {
			if b.acceptsRaw(k, lit, defs, depth+1) {
				return true
			}
		}
		return false
	}
	return true
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
			return integerLiteral(string(n))
		case float64:
			return n == math.Trunc(n) && !math.IsInf(n, 0)
		}
		return false
	}
	return true // a type this walk does not know: leave the value alone
}

// integerLiteral reports whether the JSON number literal n is an integer
// (JSON Schema's "integer": 2, 2.0 and 2e3 are; 2.5 and 1e400 are not).
func integerLiteral(n string) bool {
	if _, err := strconv.ParseInt(n, 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
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
