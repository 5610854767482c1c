package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Argument validation (R7) uses a small validator for exactly the JSON
// Schema subset the converter emits (type, enum, const, minimum/maximum and
// their exclusive forms, multipleOf, minLength/maxLength, pattern, items,
// minItems/maxItems/uniqueItems, properties, required,
// additionalProperties, anyOf, not, and local $refs into $defs). It works
// on the values parseJSON decodes once per call and shares with request
// building, so validating an argument costs a few comparisons instead of
// jsonschema-go's reflection over map[string]any (BenchmarkNewRequest:
// 33 µs and 268 allocations before, about 6 µs and 50 allocations after).
// Keywords outside the subset (format, contentEncoding, description,
// default) are annotations. A hand-rolled validator rather than
// santhosh-tekuri/jsonschema: the subset is small and fixed by the
// converter, values are already decoded once for request building, and
// it adds no dependency.
//
// Validators are compiled on a tool's first call (sync.Once per tool), not
// in Load: the first call of a tool pays for parsing its input schema once
// (BenchmarkFirstCall: ~0.3-0.4 ms for the largest Kubernetes schema, 32
// KiB), and compiling all 1,123 Kubernetes tools up front would add a few
// hundred milliseconds to a startup that must stay within 1.5 s, for
// tools most deployments never call.

// validators returns the compiled validator of each top-level input
// property. Validating per property lets NewRequest name the offending
// argument exactly; required and unknown keys are checked by NewRequest
// itself from the plan.
func (p *requestPlan) validators() map[string]*vnode {
	p.compileOnce.Do(func() {
		p.compiled = map[string]*vnode{}
		root, err := parseJSON(p.inputSchema)
		m, _ := root.(map[string]any)
		if err != nil || m == nil {
			return
		}
		c := &vcompiler{defs: map[string]*vnode{}}
		if d, ok := m["$defs"].(map[string]any); ok {
			c.rawDefs = d
		}
		props, _ := m["properties"].(map[string]any)
		for k, s := range props {
			p.compiled[k] = c.compile(s)
		}
	})
	return p.compiled
}

const (
	tObject = 1 << iota
	tArray
	tString
	tNumber
	tInteger
	tBoolean
	tNull
)

var typeBits = map[string]uint8{"object": tObject, "array": tArray, "string": tString, "number": tNumber,
	"integer": tInteger, "boolean": tBoolean, "null": tNull}

// vnode is one compiled schema.
type vnode struct {
	never      bool  // the false schema ({"not":{}})
	types      uint8 // allowed types; 0 means any
	typeName   string
	enum       []any
	hasConst   bool
	constV     any
	min, max   float64
	hasMin     bool
	hasMax     bool
	exMin      bool
	exMax      bool
	multipleOf float64
	minLen     int
	maxLen     int // -1: none
	pattern    *regexp.Regexp
	items      *vnode
	minItems   int
	maxItems   int // -1: none
	unique     bool
	props      map[string]*vnode
	required   []string
	addl       *vnode // nil: any
	noAddl     bool
	anyOf      []*vnode
	not        *vnode
}

type vcompiler struct {
	rawDefs map[string]any
	defs    map[string]*vnode
}

func (c *vcompiler) compile(s any) *vnode {
	n := &vnode{maxLen: -1, maxItems: -1}
	m, ok := s.(map[string]any)
	if !ok {
		if b, ok := s.(bool); ok && !b {
			n.never = true
		}
		return n
	}
	if r, ok := m["$ref"].(string); ok {
		const prefix = "#/$defs/"
		if len(r) > len(prefix) && r[:len(prefix)] == prefix {
			name := r[len(prefix):]
			if d, ok := c.defs[name]; ok {
				return d
			}
			d := &vnode{maxLen: -1, maxItems: -1}
			c.defs[name] = d // before compiling, so recursion ends here
			*d = *c.compile(c.rawDefs[name])
			return d
		}
	}
	if t, ok := m["type"].(string); ok {
		n.types, n.typeName = typeBits[t], t
		if t == "number" {
			n.types |= tInteger
		}
	}
	if e, ok := m["enum"].([]any); ok {
		n.enum = e
	}
	if v, ok := m["const"]; ok {
		n.hasConst, n.constV = true, v
	}
	num := func(k string) (float64, bool) {
		v, ok := m[k].(json.Number)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	}
	if f, ok := num("minimum"); ok {
		n.min, n.hasMin = f, true
	}
	if f, ok := num("exclusiveMinimum"); ok && (!n.hasMin || f >= n.min) {
		n.min, n.hasMin, n.exMin = f, true, true
	}
	if f, ok := num("maximum"); ok {
		n.max, n.hasMax = f, true
	}
	if f, ok := num("exclusiveMaximum"); ok && (!n.hasMax || f <= n.max) {
		n.max, n.hasMax, n.exMax = f, true, true
	}
	if f, ok := num("multipleOf"); ok && f > 0 {
		n.multipleOf = f
	}
	if f, ok := num("minLength"); ok {
		n.minLen = int(f)
	}
	if f, ok := num("maxLength"); ok {
		n.maxLen = int(f)
	}
	if f, ok := num("minItems"); ok {
		n.minItems = int(f)
	}
	if f, ok := num("maxItems"); ok {
		n.maxItems = int(f)
	}
	if p, ok := m["pattern"].(string); ok {
		// ECMA-only patterns that RE2 cannot compile are not checked.
		n.pattern, _ = regexp.Compile(p)
	}
	if u, ok := m["uniqueItems"].(bool); ok {
		n.unique = u
	}
	if it, ok := m["items"]; ok {
		n.items = c.compile(it)
	}
	if ps, ok := m["properties"].(map[string]any); ok {
		n.props = make(map[string]*vnode, len(ps))
		for k, v := range ps {
			n.props[k] = c.compile(v)
		}
	}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				n.required = append(n.required, s)
			}
		}
	}
	switch a := m["additionalProperties"].(type) {
	case bool:
		n.noAddl = !a
	case map[string]any:
		n.addl = c.compile(a)
	}
	if l, ok := m["anyOf"].([]any); ok {
		for _, b := range l {
			n.anyOf = append(n.anyOf, c.compile(b))
		}
	}
	if x, ok := m["not"]; ok {
		if xm, ok := x.(map[string]any); ok && len(xm) == 0 {
			n.never = true
		} else {
			n.not = c.compile(x)
		}
	}
	return n
}

// validationError is a reason with the JSON path inside the argument.
type validationError struct {
	path   string
	reason string
}

func (e *validationError) Error() string {
	if e.path == "" {
		return e.reason
	}
	return e.path + ": " + e.reason
}

func vfail(reason string) error { return &validationError{reason: reason} }

func within(err error, seg string) error {
	var ve *validationError
	if errors.As(err, &ve) {
		if ve.path == "" {
			ve.path = seg
		} else if ve.path[0] == '[' {
			ve.path = seg + ve.path
		} else {
			ve.path = seg + "." + ve.path
		}
	}
	return err
}

func jsonTypeOf(v any) (uint8, string) {
	switch x := v.(type) {
	case nil:
		return tNull, "null"
	case bool:
		return tBoolean, "boolean"
	case string:
		return tString, "string"
	case json.Number:
		if isIntegerLiteral(string(x)) {
			return tInteger, "integer"
		}
		return tNumber, "number"
	case []any:
		return tArray, "array"
	case map[string]any:
		return tObject, "object"
	}
	return 0, "unknown"
}

// isIntegerLiteral reports whether a JSON number is a mathematical
// integer (JSON Schema's "integer": 30.0 counts, 1e2 counts).
func isIntegerLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			for j := i + 1; j < len(s); j++ {
				if s[j] == 'e' || s[j] == 'E' {
					break
				}
				if s[j] != '0' {
					f, err := strconv.ParseFloat(s, 64)
					return err == nil && f == math.Trunc(f)
				}
			}
			if !bytes.ContainsAny([]byte(s), "eE") {
				return true
			}
			f, err := strconv.ParseFloat(s, 64)
			return err == nil && f == math.Trunc(f)
		case 'e', 'E':
			f, err := strconv.ParseFloat(s, 64)
			return err == nil && f == math.Trunc(f)
		}
	}
	return true
}

func (n *vnode) validate(v any) error {
	if n.never {
		return vfail("no value is allowed here")
	}
	t, tn := jsonTypeOf(v)
	if n.types != 0 && n.types&t == 0 {
		return vfail("has type " + tn + ", want " + n.typeName)
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if jsonEqual(e, v) {
				ok = true
				break
			}
		}
		if !ok {
			return vfail("is not one of the allowed values " + string(encode(literal{n.enum})))
		}
	}
	if n.hasConst && !jsonEqual(n.constV, v) {
		return vfail("must be " + string(encode(literal{n.constV})))
	}
	switch x := v.(type) {
	case json.Number:
		if err := n.number(x); err != nil {
			return err
		}
	case string:
		if n.minLen > 0 || n.maxLen >= 0 {
			l := utf8.RuneCountInString(x)
			if l < n.minLen {
				return vfail("length " + strconv.Itoa(l) + " is below minLength " + strconv.Itoa(n.minLen))
			}
			if n.maxLen >= 0 && l > n.maxLen {
				return vfail("length " + strconv.Itoa(l) + " is above maxLength " + strconv.Itoa(n.maxLen))
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			return vfail("does not match pattern " + strconv.Quote(n.pattern.String()))
		}
	case []any:
		if len(x) < n.minItems {
			return vfail("has " + strconv.Itoa(len(x)) + " items, fewer than minItems " + strconv.Itoa(n.minItems))
		}
		if n.maxItems >= 0 && len(x) > n.maxItems {
			return vfail("has " + strconv.Itoa(len(x)) + " items, more than maxItems " + strconv.Itoa(n.maxItems))
		}
		if n.items != nil {
			for i, e := range x {
				if err := n.items.validate(e); err != nil {
					return within(err, "["+strconv.Itoa(i)+"]")
				}
			}
		}
		if n.unique {
			if i, j, dup := firstDuplicate(x); dup {
				return vfail("items " + strconv.Itoa(i) + " and " + strconv.Itoa(j) + " are equal (uniqueItems)")
			}
		}
	case map[string]any:
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				return vfail("missing required property " + strconv.Quote(r))
			}
		}
		for k, e := range x {
			if p, ok := n.props[k]; ok {
				if err := p.validate(e); err != nil {
					return within(err, k)
				}
				continue
			}
			if n.noAddl {
				return vfail("property " + strconv.Quote(k) + " is not allowed")
			}
			if n.addl != nil {
				if err := n.addl.validate(e); err != nil {
					return within(err, k)
				}
			}
		}
	}
	if len(n.anyOf) > 0 {
		var first error
		for _, b := range n.anyOf {
			err := b.validate(v)
			if err == nil {
				first = nil
				break
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return vfail("matches none of the allowed alternatives (first: " + first.Error() + ")")
		}
	}
	if n.not != nil && n.not.validate(v) == nil {
		return vfail("matches a schema it must not match")
	}
	return nil
}

func (n *vnode) number(x json.Number) error {
	if !n.hasMin && !n.hasMax && n.multipleOf == 0 {
		return nil
	}
	f, err := strconv.ParseFloat(string(x), 64)
	if err != nil {
		return vfail("is not a number")
	}
	if n.hasMin && (f < n.min || n.exMin && f == n.min) {
		op := ">= "
		if n.exMin {
			op = "> "
		}
		return vfail(string(x) + " must be " + op + strconv.FormatFloat(n.min, 'g', -1, 64))
	}
	if n.hasMax && (f > n.max || n.exMax && f == n.max) {
		op := "<= "
		if n.exMax {
			op = "< "
		}
		return vfail(string(x) + " must be " + op + strconv.FormatFloat(n.max, 'g', -1, 64))
	}
	if n.multipleOf > 0 {
		q := f / n.multipleOf
		if math.Abs(q-math.Round(q)) > 1e-9 {
			return vfail(string(x) + " is not a multiple of " + strconv.FormatFloat(n.multipleOf, 'g', -1, 64))
		}
	}
	return nil
}

// jsonEqual compares two decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			if f, ok := b.(float64); ok {
				fx, err := strconv.ParseFloat(string(x), 64)
				return err == nil && fx == f
			}
			return false
		}
		if x == y {
			return true
		}
		fx, err1 := strconv.ParseFloat(string(x), 64)
		fy, err2 := strconv.ParseFloat(string(y), 64)
		return err1 == nil && err2 == nil && fx == fy
	case float64:
		return jsonEqual(b, a) && isNumber(b)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// firstDuplicate returns the first item j of x equal (as jsonEqual
// compares) to an earlier item i, in time linear in the size of x: each
// item is keyed by its canonical JSON (canonicalKey), so equal items, and
// only those, share a key. (JSON Schema 2020-12 §10.3.1.2 uniqueItems:
// https://json-schema.org/draft/2020-12/json-schema-validation#section-6.4.3.)
func firstDuplicate(x []any) (i, j int, dup bool) {
	if len(x) < 2 {
		return 0, 0, false
	}
	if len(x) <= 8 {
		// Small arrays, the usual case: pairwise, without allocating keys.
		for j := 1; j < len(x); j++ {
			for i := range j {
				if jsonEqual(x[i], x[j]) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(x))
	var b []byte
	for j, v := range x {
		b = appendCanonical(b[:0], v)
		if i, ok := seen[string(b)]; ok {
			return i, j, true
		}
		seen[string(b)] = j
	}
	return 0, 0, false
}

// appendCanonical appends a canonical JSON encoding of a decoded value: a
// number as its float64 value in shortest form (so 1, 1.0 and 1e0 agree, as
// jsonEqual compares numbers), or its text when it has none (overflow);
// object members sorted by name. Strings are quoted with strconv, which is
// unambiguous.
func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return strconv.AppendQuote(b, x)
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return appendNumber(b, f)
		}
		return append(append(b, '~'), x...)
	case float64:
		return appendNumber(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(strconv.AppendQuote(b, k), ':')
			b = appendCanonical(b, x[k])
		}
		return append(b, '}')
	}
	return fmt.Appendf(b, "?%v", v)
}

func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 equals 0
	}
	return strconv.AppendFloat(append(b, '#'), f, 'g', -1, 64)
}

func isNumber(v any) bool { _, ok := v.(json.Number); return ok }
