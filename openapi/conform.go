package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// shape is an output schema as ConformStructured reads it: the keywords an
// R8 output schema keeps (type, properties, items, additionalProperties,
// anyOf, $ref into $defs). Anything else only describes.
type shape struct {
	tk    byte // the kind of its type (typeKind); 0 when it has none
	props map[string]*shape
	// few is props as a list when it has at most maxFewProps entries: a
	// short key is found faster by comparing than by hashing.
	few   []namedShape
	items *shape
	addl  *shape
	anyOf []*shape
	ref   string // "#/$defs/<name>"
}

// namedShape is a property's name and shape.
type namedShape struct {
	name string
	sh   *shape
}

// maxFewProps is the most properties shape.few lists.
const maxFewProps = 16

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

// FitsStructured reports whether raw, a JSON object, is already what
// ConformStructured would make of it: no value below the root has a type
// the tool's outputSchema does not allow. It is CompactStructured's check
// alone. A tool without an output schema fits everything; raw that is not
// a JSON object does not fit.
func (t *Tool) FitsStructured(raw []byte) bool {
	_, fits, err := t.CompactStructured(string(raw))
	return err == nil && fits
}

// CompactStructured compacts body, a JSON object, as jsonvalue.Compacted
// does (the part of body that holds it when it is compact already, else a
// copy), and in the same pass, without a tree, reports whether the result
// fits the tool's outputSchema as FitsStructured says. Every occurrence of
// a repeated member is checked. The error is Compacted's
// (jsonvalue.ErrNotJSON, jsonvalue.ErrTooDeep), or ErrNotObject.
func (t *Tool) CompactStructured(body string) (compact jsonvalue.Compact, fits bool, err error) {
	if v := strings.TrimLeft(body, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return "", false, ErrNotObject
	}
	w, walker := t.fitWalker()
	compact, err = jsonvalue.Compacted(body, walker)
	return compact, err == nil && (w == nil || w.fits), err
}

// CompactStructuredBytes is CompactStructured for a body held in bytes:
// compact is the part of body that holds the object when the body is
// compact already (sharing body's memory), otherwise a new slice.
func (t *Tool) CompactStructuredBytes(body []byte) (compact []byte, fits bool, err error) {
	if v := bytes.TrimLeft(body, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return nil, false, ErrNotObject
	}
	w, walker := t.fitWalker()
	compact, err = jsonvalue.CompactedBytes(body, walker)
	return compact, err == nil && (w == nil || w.fits), err
}

// fitWalker is a new walk of t's output schema and the same as the
// jsonvalue.Walker to pass, which is nil (not a nil *fitWalker) when there
// is no schema to check against.
func (t *Tool) fitWalker() (*fitWalker, jsonvalue.Walker) {
	if len(t.OutputSchema) > 0 {
		if sh, defs := t.shapes(); sh != nil {
			w := &fitWalker{root: sh, defs: defs, fits: true}
			w.stack = w.small[:0]
			return w, w
		}
	}
	return nil, nil
}

// ErrNotObject is CompactStructured's error for a body that is not a JSON
// object.
var ErrNotObject = errors.New("not a JSON object")

// fitWalker is conformValue's walk as a jsonvalue.Walker: told of each
// value in order, it reports whether conformValue would return the whole
// unchanged. It enters only the containers whose shape constrains
// something, and after the first value that would change, none.
type fitWalker struct {
	root  *shape
	defs  map[string]*shape
	fits  bool
	stack []fitFrame // the containers entered
	small [16]fitFrame
}

// fitFrame is an entered container: its shape (after $ref and anyOf), its
// kind and its depth as conformValue counts it.
type fitFrame struct {
	sh     *shape
	object bool
	depth  int
}

// Value is fits for one value: it picks the value's shape (the root's, a
// property's or additionalProperties', or items'), follows $ref and the
// first anyOf branch that accepts the value, and checks its type.
func (w *fitWalker) Value(key string, kind byte, num string) bool {
	if !w.fits {
		return false
	}
	sh, depth := w.root, 0
	if n := len(w.stack); n > 0 {
		top := w.stack[n-1]
		depth = top.depth + 1
		if top.object {
			sh = memberShape(key, top.sh)
		} else {
			sh = top.sh.items
		}
	}
	if kind == '-' || '0' <= kind && kind <= '9' {
		kind = '0'
	}
	for {
		if sh == nil || depth > maxConformDepth || kind == 'n' && sh.ref == "" {
			return false // kept whatever it holds; null stays null under every shape
		}
		if sh.ref != "" {
			sh, depth = w.defs[strings.TrimPrefix(sh.ref, "#/$defs/")], depth+1
			continue
		}
		if !rawTypeMatches(sh.tk, kind, num) {
			w.fits = false
			return false
		}
		if len(sh.anyOf) == 0 {
			break
		}
		var branch *shape
		for _, b := range sh.anyOf {
			if b.acceptsRaw(kind, num, w.defs, depth) {
				branch = b
				break
			}
		}
		if branch == nil {
			w.fits = false
			return false
		}
		sh, depth = branch, depth+1
	}
	if kind != '{' && kind != '[' {
		return false
	}
	w.stack = append(w.stack, fitFrame{sh: sh, object: kind == '{', depth: depth})
	return true
}

// ValueBytes is Value for a key and number held in bytes
// (jsonvalue.BytesWalker). The strings made of them do not outlive the
// call, so the compiler makes those of up to 32 bytes (every key and
// number but a few) on the stack: no allocation per member.
func (w *fitWalker) ValueBytes(key []byte, kind byte, num []byte) bool {
	return w.Value(string(key), kind, string(num))
}

// memberShape is the shape of the member keyed key (its token, quotes and
// escapes included) in an object of shape sh: the property's, or
// additionalProperties'. A key without escapes, in valid UTF-8, is looked
// up as it is, without allocating.
func memberShape(key string, sh *shape) *shape {
	name := key[1 : len(key)-1]
	plain, ascii := true, true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '\\' {
			plain = false
			break
		} else {
			ascii = ascii && c < utf8.RuneSelf
		}
	}
	if plain && !ascii {
		plain = utf8.ValidString(name)
	}
	if !plain {
		p := jsonvalue.Parser{B: []byte(key)}
		s, err := p.Str() // escapes decoded, invalid UTF-8 as U+FFFD
		if err != nil {
			return sh.addl
		}
		name = s
	}
	if sh.few != nil {
		for _, p := range sh.few {
			if p.name == name {
				return p.sh
			}
		}
		return sh.addl
	}
	if child, ok := sh.props[name]; ok {
		return child
	}
	return sh.addl
}

// Close leaves the innermost container entered.
func (w *fitWalker) Close() { w.stack = w.stack[:len(w.stack)-1] }

// shapes is t's output schema as shapes, parsed once per tool.
func (t *Tool) shapes() (*shape, map[string]*shape) {
	if o := t.outShape; o != nil {
		o.once.Do(func() { o.root, o.defs = parseShape(t.OutputSchema) })
		return o.root, o.defs
	}
	return parseShape(t.OutputSchema) // a Tool not made by Load
}

// rawTypeMatches is typeMatches for a value of kind k, its first byte
// ('{', '[', '"', 't' or 'f' for booleans, 'n', and '0' for numbers), lit
// a number's literal; tk is the type's kind (typeKind).
func rawTypeMatches(tk byte, k byte, lit string) bool {
	switch tk {
	case 0:
		return true
	case 'b':
		return k == 't' || k == 'f'
	case 'i':
		return k == '0' && integerLiteral(lit)
	}
	return tk == k
}

// typeKind is a JSON Schema type as rawTypeMatches compares it: the first
// byte of the values it allows ('n', '{', '[', '"', '0' for numbers), 'b'
// for boolean, 'i' for integer, 0 for none or a type this walk does not
// know (which allows everything, as typeMatches does).
func typeKind(typ string) byte {
	switch typ {
	case "null":
		return 'n'
	case "object":
		return '{'
	case "array":
		return '['
	case "string":
		return '"'
	case "boolean":
		return 'b'
	case "number":
		return '0'
	case "integer":
		return 'i'
	}
	return 0
}

// acceptsRaw is accepts for a value of kind k (rawTypeMatches).
func (sh *shape) acceptsRaw(k byte, lit string, defs map[string]*shape, depth int) bool {
	if depth > maxConformDepth {
		return true
	}
	if sh.ref != "" {
		d := defs[strings.TrimPrefix(sh.ref, "#/$defs/")]
		return d == nil || d.acceptsRaw(k, lit, defs, depth+1)
	}
	if !rawTypeMatches(sh.tk, k, lit) {
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
	if !typeMatches(sh.tk, v) {
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
	if !typeMatches(sh.tk, v) {
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

// typeMatches reports whether the decoded JSON value v has the JSON Schema
// type of kind tk (typeKind; 0 matches everything).
func typeMatches(tk byte, v any) bool {
	switch tk {
	case 0:
		return true // no type, or one this walk does not know: leave the value alone
	case 'n':
		return v == nil
	case '{':
		_, ok := v.(map[string]any)
		return ok
	case '[':
		_, ok := v.([]any)
		return ok
	case '"':
		_, ok := v.(string)
		return ok
	case 'b':
		_, ok := v.(bool)
		return ok
	case '0':
		return isDecodedNumber(v)
	}
	switch n := v.(type) { // 'i', integer
	case json.Number:
		return integerLiteral(string(n))
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
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
	typ, _ := m["type"].(string)
	sh.tk = typeKind(typ)
	sh.ref, _ = m["$ref"].(string)
	if p, ok := m["properties"].(map[string]any); ok {
		sh.props = make(map[string]*shape, len(p))
		for k, v := range p {
			if c, ok := v.(map[string]any); ok {
				sh.props[k] = toShape(c)
			}
		}
		if len(sh.props) <= maxFewProps {
			for k, c := range sh.props {
				sh.few = append(sh.few, namedShape{k, c})
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
