package openapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// obj is a JSON object that keeps its keys in insertion order, so that
// serialized schemas are deterministic and list properties as declared.
type obj struct {
	k []string
	v []any
	// cutName names the placeholder S2 may replace a cut schema with.
	cutName string
	// wire, on a "properties" object of a request schema, maps each key
	// that P2 renamed to the name the API uses (C12: at any level). It is
	// not serialized; renameTreeOf collects it for the request plan.
	wire map[string]string
	// cut marks an object-like schema that S2 may replace with a
	// placeholder naming cutName.
	cut bool
	// outCut marks a cut schema of an output schema (R8): its placeholder
	// says the text content has the whole response and accepts any value.
	outCut bool
	// The fields are in this order so that an obj takes 80 bytes, not
	// 96: a large document's schemas are millions of them while loading.
}

func (o *obj) set(k string, v any) {
	for i, kk := range o.k {
		if kk == k {
			o.v[i] = v
			return
		}
	}
	o.k = append(o.k, k)
	o.v = append(o.v, v)
}

func (o *obj) get(k string) (any, bool) {
	for i, kk := range o.k {
		if kk == k {
			return o.v[i], true
		}
	}
	return nil, false
}

func (o *obj) has(k string) bool { _, ok := o.get(k); return ok }

func (o *obj) del(k string) {
	for i, kk := range o.k {
		if kk == k {
			o.k = slices.Delete(o.k, i, i+1)
			o.v = slices.Delete(o.v, i, i+1)
			return
		}
	}
}

func (o *obj) str(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

func (o *obj) props() *obj {
	v, _ := o.get("properties")
	p, _ := v.(*obj)
	return p
}

func (o *obj) required() []string {
	v, _ := o.get("required")
	r, _ := v.([]string)
	return r
}

// literal is a value copied from the document (enum, default, const); it
// is serialized with encoding/json, which sorts map keys.
type literal struct{ v any }

// encode serializes v as compact JSON without HTML escaping.
func encode(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case *obj:
		b.WriteByte('{')
		for i, k := range x.k {
			jsonvalue.WriteKey(b, i, k)
			writeJSON(b, x.v[i])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonvalue.WriteString(b, e)
		}
		b.WriteByte(']')
	case string:
		jsonvalue.WriteString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		writeLiteral(b, x)
	case literal:
		writeLiteral(b, x.v)
	case nil:
		b.WriteString("null")
	default:
		writeLiteral(b, x)
	}
}

func writeLiteral(b *bytes.Buffer, v any) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		b.WriteString("null")
		return
	}
	b.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}

// converter turns kin-openapi schemas into the portable JSON Schema subset
// of S1–S8: references inlined, recursion cut (S3), nullability as anyOf
// (S4), allOf merged and oneOf turned into anyOf (S5), items always present
// (S6), readOnly dropped from requests (S7), and object nesting below
// maxDepth replaced by a placeholder (S2).
type converter struct {
	b        *builder
	memo     map[memoKey]memoEntry // shared by the builder; entries are never mutated
	minHit   int                   // lowest stack index a recursion cut referred to
	request  bool                  // drop readOnly (request) or writeOnly (response) properties
	base64   bool                  // format: binary becomes contentEncoding: base64 (multipart, octet-stream)
	maxDepth int
	limit    int // estimated size past which conversion gives up (over)
	size     int
	over     bool
	depthCut bool // a depth placeholder was emitted
	stack    []*openapi3.Schema
	// defs, when set, emits named component schemas as $refs into $defs
	// (LoadOptions.SchemaDefs); uses collects the entries referenced.
	defs bool
	uses *[]*defEntry
}

func (c *converter) add(n int) {
	c.size += n
	if c.limit > 0 && c.size > c.limit {
		c.over = true
	}
}

func refName(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		return ref[i+1:]
	}
	if i := strings.LastIndexByte(ref, '#'); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

// nullableRef returns, for an OAS 3.0 reference with nullable: true
// written beside its $ref, the schema it stands for (S12):
// {nullable: true, allOf: [{$ref}]}, "that schema or null"; else nil.
// kin-openapi keeps such siblings only for writing the document out again,
// so they are read from there, once per reference.
func (c *converter) nullableRef(sr *openapi3.SchemaRef) *openapi3.Schema {
	if sr.Ref == "" || !strings.HasPrefix(c.b.doc.OpenAPI, "3.0") {
		return nil
	}
	w, ok := c.b.nullRefs[sr]
	if !ok {
		if y, err := sr.MarshalYAML(); err == nil {
			if m, _ := y.(map[string]any); m["nullable"] == true {
				w = &openapi3.Schema{Nullable: true, AllOf: openapi3.SchemaRefs{{Ref: sr.Ref, Value: sr.Value}}}
			}
		}
		c.b.nullRefs[sr] = w
	}
	return w
}

func (c *converter) ref(sr *openapi3.SchemaRef, depth int, name string, root bool) *obj {
	return c.convertRef(sr, depth, name, root, true)
}

// inline converts sr in place even in $defs mode, where allOf members
// and root oneOf/anyOf branches are merged (S5) and so are needed with
// their properties; references below them are $refs again.
func (c *converter) inline(sr *openapi3.SchemaRef, depth int, name string, root bool) *obj {
	return c.convertRef(sr, depth, name, root, false)
}

// convertRef converts sr, named after its $ref or its component; with
// asRef, in $defs mode, a named schema below the root becomes a $ref to
// its definition instead.
func (c *converter) convertRef(sr *openapi3.SchemaRef, depth int, name string, root, asRef bool) *obj {
	if sr == nil || sr.Value == nil {
		return &obj{}
	}
	if w := c.nullableRef(sr); w != nil {
		return c.schema(w, depth, name, root)
	}
	if sr.Ref != "" {
		name = refName(sr.Ref)
	} else if n, ok := c.b.names[sr.Value]; ok {
		name = n
	}
	if asRef && c.defs && !root && sr.Value.Always == nil {
		if n, ok := c.b.names[sr.Value]; ok {
			return c.defRef(sr.Value, n)
		}
	}
	return c.schema(sr.Value, depth, name, root)
}

func objectLike(s *openapi3.Schema) bool {
	return s.Type.Includes("object") || len(s.Properties) > 0 || len(s.AllOf) > 0 || len(s.OneOf) > 0 || len(s.AnyOf) > 0 ||
		s.AdditionalProperties.Schema != nil
}

// memoKey identifies one conversion result that does not depend on the
// expansion stack: the same schema converted with the same remaining
// depth, name and mode gives the same (immutable, shared) tree. This keeps
// conversion linear in the size of the schema graph on documents whose
// schemas reference each other heavily (Stripe, Kubernetes).
type memoKey struct {
	s       *openapi3.Schema
	rem     int // remaining object depth; -1 for unlimited
	name    string
	request bool
	base64  bool
}

type memoEntry struct {
	o    *obj
	size int
}

// clone returns a shallow copy of o that can be modified without
// touching a shared tree.
func (o *obj) clone() *obj {
	return &obj{k: slices.Clone(o.k), v: slices.Clone(o.v), cut: o.cut, cutName: o.cutName, outCut: o.outCut, wire: maps.Clone(o.wire)}
}

// copyProp sets the j-th property of the properties object src on o,
// with its wire name when P2 renamed it.
func (o *obj) copyProp(src *obj, j int) {
	k := src.k[j]
	o.set(k, src.v[j])
	if w, ok := src.wire[k]; ok {
		if o.wire == nil {
			o.wire = map[string]string{}
		}
		o.wire[k] = w
	}
}

// nonNullTypes returns the schema's types without "null" and whether null
// is allowed (3.0 nullable, 3.1 type array, or null in the enum).
func nonNullTypes(s *openapi3.Schema) ([]string, bool) {
	nullable := s.Nullable
	var ts []string
	for _, t := range s.Type.Slice() {
		if t == "null" {
			nullable = true
			continue
		}
		ts = append(ts, t)
	}
	if len(ts) == 0 && len(s.Type.Slice()) > 0 && nullable {
		// type: "null" alone.
		return []string{"null"}, false
	}
	return ts, nullable
}

// scalarAlternatives lists the non-object types among the oneOf and anyOf
// alternatives of s, in order: an expandable field (a string id, or the
// object when expanded) has "string".
func scalarAlternatives(s *openapi3.Schema) []string {
	var ts []string
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, a := range alts {
			if a == nil || a.Value == nil || objectLike(a.Value) {
				continue
			}
			types, _ := nonNullTypes(a.Value)
			for _, t := range types {
				if t != "object" && !slices.Contains(ts, t) {
					ts = append(ts, t)
				}
			}
		}
	}
	return ts
}

// withScalarAlternatives returns p, an object placeholder, as one branch
// of an anyOf beside the scalar types ts, so that a cut schema still takes
// the values it took besides an object (S2); p itself when ts is empty.
func withScalarAlternatives(p *obj, ts []string) *obj {
	if len(ts) == 0 {
		return p
	}
	l := make([]any, 0, len(ts)+1)
	for _, t := range ts {
		b := &obj{}
		b.set("type", t)
		if t == "array" {
			b.set("items", &obj{})
		}
		l = append(l, b)
	}
	w := &obj{}
	w.set("anyOf", append(l, p))
	return w
}

func (c *converter) placeholder(name, typ, desc string) *obj {
	o := &obj{}
	o.set("type", typ)
	if typ == "array" {
		o.set("items", &obj{})
	}
	o.set("description", desc)
	c.add(len(desc) + 30)
	return o
}

func (c *converter) schema(s *openapi3.Schema, depth int, name string, root bool) *obj {
	if s.Always != nil {
		if *s.Always {
			return &obj{}
		}
		o := &obj{}
		o.set("not", &obj{})
		return o
	}
	if i := slices.Index(c.stack, s); i >= 0 {
		c.minHit = min(c.minHit, i)
		typ := "object"
		if ts, _ := nonNullTypes(s); len(ts) == 1 {
			typ = ts[0]
		}
		if name == "" {
			name = "schema"
		}
		return c.placeholder(name, typ, "Recursive reference to "+name+"; structure not expanded")
	}
	if !root && (depth > c.maxDepth || c.over) && objectLike(s) {
		if name == "" {
			name = "Object"
		}
		c.depthCut = true
		if !c.request {
			// An output schema's placeholder describes and does not constrain
			// (R8): no type, so whatever the API sends there fits.
			p := &obj{}
			p.set("description", name+": nested structure omitted; the text content has the whole response")
			c.add(len(name) + 70)
			return p
		}
		p := c.placeholder(name, "object", name+": nested structure omitted; pass it as a JSON object")
		return withScalarAlternatives(p, scalarAlternatives(s))
	}
	var key memoKey
	if !root && c.memo != nil {
		rem := -1
		if c.maxDepth < unlimitedDepth {
			rem = c.maxDepth - depth
		}
		key = memoKey{s: s, rem: rem, name: name, request: c.request, base64: c.base64}
		if e, ok := c.memo[key]; ok {
			return e.o
		}
	}
	pos := len(c.stack)
	outerHit, size0 := c.minHit, c.size
	c.minHit = 1 << 30
	c.stack = append(c.stack, s)
	o := c.convert(s, depth, name, root)
	if objectLike(s) {
		if name == "" {
			name = "Object"
		}
		o.cut, o.cutName, o.outCut = true, name, !c.request
	}
	c.stack = c.stack[:pos]
	hit := c.minHit
	c.minHit = min(outerHit, hit)
	if !root && c.memo != nil && hit >= pos && !c.over {
		c.memo[key] = memoEntry{o: o, size: c.size - size0}
	}
	return o
}

const unlimitedDepth = 1 << 30

func (c *converter) convert(s *openapi3.Schema, depth int, name string, root bool) *obj {
	types, nullable := nonNullTypes(s)
	o := &obj{}
	if onlyNull(s.Enum) && len(types) == 0 {
		// {enum: [null]} admits null and nothing else (S4 keeps it exact,
		// not an anyOf with a branch that accepts anything).
		o.set("type", "null")
		return o
	}
	if len(types) == 1 {
		o.set("type", types[0])
	} else if len(types) == 0 {
		switch {
		case len(s.Properties) > 0 || s.AdditionalProperties.Schema != nil || s.AdditionalProperties.Has != nil:
			o.set("type", "object")
		case s.Items != nil:
			o.set("type", "array")
		}
	}
	c.add(16)
	typ := o.str("type")
	c.annotate(o, s, typ)
	if c.enum(o, s) {
		nullable = true
	}
	if s.Const != nil {
		c.constrain(o, "const", literal{s.Const})
	}
	if s.Default != nil {
		o.set("default", literal{s.Default})
		c.add(16)
	}
	c.numeric(o, s)
	if s.MinLength > 0 {
		c.constrain(o, "minLength", s.MinLength)
	}
	if s.MaxLength != nil {
		c.constrain(o, "maxLength", *s.MaxLength)
	}
	if s.Pattern != "" {
		p := portablePattern(s.Pattern)
		c.constrain(o, "pattern", p)
		c.add(len(p))
	}
	c.arrayKeywords(o, s, typ, types, depth, name)
	if len(s.Properties) > 0 {
		c.properties(o, s, depth)
	}
	if ap := s.AdditionalProperties; ap.Schema != nil {
		o.set("additionalProperties", c.orNull(c.ref(ap.Schema, depth+1, name, false)))
	} else if ap.Has != nil {
		c.constrain(o, "additionalProperties", *ap.Has) // true or false describes nothing (R8)
	}
	if c.compose(o, s, depth, name, root) {
		nullable = true
	}
	if len(types) > 1 {
		nullable = typeAlternatives(o, types, nullable)
	}
	if nullable && !root {
		n := &obj{}
		n.set("type", "null")
		w := &obj{}
		w.set("anyOf", []any{o, n})
		return w
	}
	return o
}

// annotate sets description and format: a binary string sent as a file is
// base64 content; a format JSON Schema does not define is said in the
// description (S11).
func (c *converter) annotate(o *obj, s *openapi3.Schema, typ string) {
	if s.Description != "" {
		o.set("description", s.Description)
		c.add(len(s.Description) + 16)
	}
	if s.Format == "binary" && c.base64 && (typ == "string" || typ == "") {
		o.set("type", "string")
		o.set("contentEncoding", "base64")
		d := "File content, base64-encoded."
		if s.Description != "" {
			d = s.Description + " (" + d + ")"
		}
		o.set("description", d)
	} else if s.Format != "" {
		switch {
		case standardFormat[s.Format]:
			c.constrain(o, "format", s.Format)
		case !silentFormat[s.Format]:
			// S11: not a JSON Schema format; the description says it.
			d := "Format: " + s.Format + "."
			if s.Description != "" {
				d = s.Description + " " + d
			}
			o.set("description", d)
			c.add(len(s.Format) + 10)
		}
	}
}

// enum sets enum, each value once (S9); a null value is left out and
// reported, the caller makes the schema nullable.
func (c *converter) enum(o *obj, s *openapi3.Schema) (nullable bool) {
	if len(s.Enum) == 0 {
		return false
	}
	var e []any
	seen := map[string]bool{}
	for _, v := range s.Enum {
		if v == nil {
			nullable = true
			continue
		}
		if k, err := json.Marshal(v); err == nil {
			if seen[string(k)] {
				continue // S9: the first occurrence only
			}
			seen[string(k)] = true
		}
		e = append(e, literal{v})
		c.add(8)
	}
	if len(e) > 0 {
		c.constrain(o, "enum", e)
	}
	return nullable
}

// arrayKeywords sets items and the array bounds, for a schema that is or
// may be an array.
func (c *converter) arrayKeywords(o *obj, s *openapi3.Schema, typ string, types []string, depth int, name string) {
	if typ == "array" || s.Items != nil || slices.Contains(types, "array") || len(types) == 0 {
		if s.Items != nil {
			o.set("items", c.orNull(c.ref(s.Items, depth+1, name, false)))
		} else if typ == "array" {
			o.set("items", &obj{})
		}
		if s.MinItems > 0 {
			c.constrain(o, "minItems", s.MinItems)
		}
		if s.MaxItems != nil {
			c.constrain(o, "maxItems", *s.MaxItems)
		}
		if s.UniqueItems {
			c.constrain(o, "uniqueItems", true)
		}
	}
}

// compose merges allOf into o and turns oneOf/anyOf into anyOf, or merges
// a root oneOf/anyOf of objects (S5); it reports whether an allOf member
// only said that null is allowed.
func (c *converter) compose(o *obj, s *openapi3.Schema, depth int, name string, root bool) (nullable bool) {
	for _, m := range s.AllOf {
		if m != nil && m.Value != nil && onlyNullable(m.Value) {
			// A member that only says "nullable" makes the whole nullable;
			// merged, it would be an anyOf accepting anything.
			nullable = true
			continue
		}
		mergeInto(o, c.inline(m, depth, name, root))
	}
	if alts := append(slices.Clone(s.OneOf), s.AnyOf...); len(alts) > 0 {
		var branches []*obj
		for _, m := range alts {
			if root {
				// A root oneOf/anyOf of objects is merged (S5).
				branches = append(branches, c.inline(m, depth, name, false))
			} else {
				branches = append(branches, c.ref(m, depth, name, false))
			}
		}
		if root && allObjects(branches) {
			c.mergeVariants(o, s, alts, branches)
		} else {
			l := make([]any, len(branches))
			for i, b := range branches {
				l[i] = b
			}
			o.set("anyOf", l)
		}
	}
	return nullable
}

// typeAlternatives turns a type array with several non-null types into
// anyOf of single-type schemas, null among them when nullable (S4); the
// other keywords stay on the outside. It returns whether the caller must
// still add null.
func typeAlternatives(o *obj, types []string, nullable bool) bool {
	// S4: a type array with several non-null types becomes anyOf of
	// single-type schemas; the other keywords stay on the outside.
	var l []any
	for _, t := range types {
		b := &obj{}
		b.set("type", t)
		if t == "array" {
			if it, ok := o.get("items"); ok {
				b.set("items", it)
			} else {
				b.set("items", &obj{})
			}
		}
		l = append(l, b)
	}
	o.del("items")
	if nullable {
		n := &obj{}
		n.set("type", "null")
		l = append(l, n)
		nullable = false
	}
	// Both a type array and oneOf/anyOf: keep the composition, which is the
	// stricter description, and drop the type list.
	if _, ok := o.get("anyOf"); !ok {
		o.set("anyOf", l)
	}
	return nullable
}

// onlyNull reports whether an enum lists null and nothing else.
func onlyNull(enum []any) bool {
	if len(enum) == 0 {
		return false
	}
	for _, v := range enum {
		if v != nil {
			return false
		}
	}
	return true
}

// onlyNullable reports whether s says nothing but that null is allowed
// ({nullable: true}, {type: null}, {enum: [null]}), as allOf members of
// OpenAPI 3.0 documents often do.
func onlyNullable(s *openapi3.Schema) bool {
	ts, nullable := nonNullTypes(s)
	if len(ts) > 0 || len(s.Properties) > 0 || s.Items != nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil ||
		s.AdditionalProperties.Schema != nil || s.AdditionalProperties.Has != nil || s.Format != "" || s.Pattern != "" {
		return false
	}
	return nullable || onlyNull(s.Enum)
}

// portablePattern rewrites a pattern so that it is also a valid ECMA-262
// regular expression in unicode mode, the mode JSON Schema validators such
// as ajv compile patterns in (ECMA-262 §22.2.1 IdentityEscape[U]: only
// syntax characters and "/" may be escaped; in a class, "-" too): a
// backslash before any other punctuation (DigitalOcean's "\:") is dropped,
// which is what the escape meant without unicode mode. Every other
// escape is kept as written.
func portablePattern(p string) string {
	if !strings.Contains(p, "\\") {
		return p
	}
	out, _ := mapEscapes(p, func(n byte, inClass bool) (string, bool) {
		keep := strings.IndexByte(`^$\.*+?()[]{}|/`, n) >= 0 ||
			n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' ||
			inClass && n == '-' || n >= 0x80
		if keep {
			return "\\" + string(n), true
		}
		return string(n), true
	})
	return out
}

// mapEscapes rewrites each escape \n of a regular expression to what esc
// returns for n, told whether the escape is inside a character class;
// everything else is kept. It stops with false as soon as esc does.
func mapEscapes(p string, esc func(n byte, inClass bool) (string, bool)) (string, bool) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			r, ok := esc(p[i+1], inClass)
			if !ok {
				return "", false
			}
			b.WriteString(r)
			i++
			continue
		case c == '[' && !inClass:
			inClass = true
		case c == ']' && inClass:
			inClass = false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// standardFormat lists JSON Schema 2020-12's own format values (§7.3:
// https://json-schema.org/draft/2020-12/json-schema-validation#section-7.3),
// the only ones emitted as "format" (S11).
var standardFormat = map[string]bool{
	"date-time": true, "date": true, "time": true, "duration": true,
	"email": true, "idn-email": true, "hostname": true, "idn-hostname": true,
	"ipv4": true, "ipv6": true, "uri": true, "uri-reference": true, "iri": true, "iri-reference": true,
	"uuid": true, "uri-template": true, "json-pointer": true, "relative-json-pointer": true, "regex": true,
}

// silentFormat lists OpenAPI formats that tell a model nothing the type
// does not: dropped without a note (S11).
var silentFormat = map[string]bool{"int32": true, "int64": true, "float": true, "double": true}

// bound writes one side of a numeric range as JSON Schema 2020-12 has it:
// OpenAPI 3.0's bound with its boolean exclusive flag (exclusive: the
// exclusive keyword), and OpenAPI 3.1's numeric exclusive keyword.
func (c *converter) bound(o *obj, inclusiveKey, exclusiveKey string, limit *float64, exclusiveFlag *bool, exclusiveValue *float64) {
	if limit != nil {
		if exclusiveFlag != nil && *exclusiveFlag {
			c.constrain(o, exclusiveKey, *limit)
		} else {
			c.constrain(o, inclusiveKey, *limit)
		}
	}
	if exclusiveValue != nil {
		c.constrain(o, exclusiveKey, *exclusiveValue)
	}
}

func (c *converter) numeric(o *obj, s *openapi3.Schema) {
	c.bound(o, "minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin.Bool, s.ExclusiveMin.Value)
	c.bound(o, "maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax.Bool, s.ExclusiveMax.Value)
	if s.MultipleOf != nil {
		c.constrain(o, "multipleOf", *s.MultipleOf)
	}
}

func (c *converter) properties(o *obj, s *openapi3.Schema, depth int) {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	keys = c.b.order.sorted(keys)
	props := &obj{}
	dropped := map[string]bool{}
	kept := make([]string, 0, len(keys))
	for _, k := range keys {
		p := s.Properties[k]
		if p != nil && p.Value != nil {
			if c.request && p.Value.ReadOnly || !c.request && p.Value.WriteOnly {
				dropped[k] = true
				continue
			}
		}
		kept = append(kept, k)
	}
	// Request schemas rename keys that are not valid input-schema property
	// keys, at every level (P1–P2, C12); the request plan maps them back
	// (P3). Response schemas describe the upstream's JSON as it comes.
	emitted := kept
	if c.request && slices.ContainsFunc(kept, func(k string) bool { return !validKey(k) }) {
		emitted = propertyKeys(kept, map[string]bool{})
		props.wire = map[string]string{}
		c.b.renamedKeys = true
	}
	for i, k := range kept {
		c.add(len(k) + 4)
		v := c.orNull(c.ref(s.Properties[k], depth+1, k, false))
		if emitted[i] != k {
			props.wire[emitted[i]] = k
			note := "Property `" + k + "`."
			if d := v.str("description"); d != "" {
				note += " " + d
			}
			v = v.clone()
			v.set("description", note)
			c.add(len(note))
		}
		props.set(emitted[i], v)
	}
	o.set("properties", props)
	var req []string
	for _, r := range s.Required {
		if dropped[r] {
			continue
		}
		if i := slices.Index(kept, r); i >= 0 {
			r = emitted[i]
		}
		if !slices.Contains(req, r) {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		c.constrain(o, "required", req)
	}
}

func allObjects(bs []*obj) bool {
	for _, b := range bs {
		if b.str("type") != "object" && !b.has("properties") {
			return false
		}
	}
	return len(bs) > 0
}

// mergeInto merges src into dst for allOf (S5): properties and required
// are unioned; a bound both set keeps the tighter value (an instance must
// satisfy every allOf member, JSON Schema 2020-12 §10.2.1.1; OAS 3.1
// siblings of a $ref arrive here as one more member); other keywords are
// taken from src when dst lacks them.
func mergeInto(dst, src *obj) {
	for i, k := range src.k {
		v := src.v[i]
		switch k {
		case "properties":
			sp := v.(*obj)
			dp := dst.props()
			if dp == nil {
				dp = &obj{}
				dst.set("properties", dp)
			}
			for j, pk := range sp.k {
				if !dp.has(pk) {
					dp.copyProp(sp, j)
				}
			}
		case "required":
			r := dst.required()
			for _, x := range v.([]string) {
				if !slices.Contains(r, x) {
					r = append(r, x)
				}
			}
			dst.set("required", r)
		default:
			old, ok := dst.get(k)
			if !ok {
				dst.set(k, v)
			} else if t, ok := tighter(k, old, v); ok {
				dst.set(k, t)
			}
		}
	}
	// Keep "type" first for readability.
	if i := slices.Index(dst.k, "type"); i > 0 {
		t := dst.v[i]
		dst.del("type")
		dst.k = append([]string{"type"}, dst.k...)
		dst.v = append([]any{t}, dst.v...)
	}
}

// mergeVariants merges a root oneOf/anyOf of objects into o (S5):
// properties unioned, required intersected, and the discriminator property
// given an enum of the mapping keys and a description naming each
// variant's own fields.
func (c *converter) mergeVariants(o *obj, s *openapi3.Schema, alts openapi3.SchemaRefs, branches []*obj) {
	if o.str("type") == "" {
		o.set("type", "object")
	}
	mergeInto(o, &obj{k: []string{"properties"}, v: []any{&obj{}}})
	props := o.props()
	var common []string
	for i, b := range branches {
		bp := b.props()
		if bp != nil {
			for j, k := range bp.k {
				if !props.has(k) {
					props.copyProp(bp, j)
				}
			}
		}
		if i == 0 {
			common = slices.Clone(b.required())
		} else {
			common = slices.DeleteFunc(common, func(r string) bool { return !slices.Contains(b.required(), r) })
		}
	}
	req := o.required()
	for _, r := range common {
		if !slices.Contains(req, r) {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		o.set("required", req)
	}
	c.discriminate(props, s.Discriminator, alts, branches)
}

// discriminate lists a root oneOf/anyOf's discriminator values (its
// mapping, or the variants' schema names) as the enum of the discriminator
// property, and names each variant's own fields in its description.
func (c *converter) discriminate(props *obj, d *openapi3.Discriminator, alts openapi3.SchemaRefs, branches []*obj) {
	if d == nil || d.PropertyName == "" || !props.has(d.PropertyName) {
		return
	}
	// Fields every variant has are not variant-specific.
	inAll := func(k string) bool {
		for _, b := range branches {
			if bp := b.props(); bp == nil || !bp.has(k) {
				return false
			}
		}
		return true
	}
	var values []string
	var notes []string
	variantOf := func(ref string) int {
		for i, a := range alts {
			if a.Ref != "" && (a.Ref == ref || refName(a.Ref) == refName(ref)) {
				return i
			}
		}
		return -1
	}
	note := func(v string, i int) {
		if i < 0 {
			return
		}
		var own []string
		if bp := branches[i].props(); bp != nil {
			for _, k := range bp.k {
				if !inAll(k) {
					own = append(own, k)
				}
			}
		}
		if len(own) > 0 {
			notes = append(notes, v+": "+strings.Join(own, ", "))
		}
	}
	if len(d.Mapping) > 0 {
		keys := make([]string, 0, len(d.Mapping))
		for k := range d.Mapping {
			keys = append(keys, k)
		}
		for _, k := range c.b.order.sorted(keys) {
			values = append(values, k)
			note(k, variantOf(d.Mapping[k].Ref))
		}
	} else {
		for i, a := range alts {
			if a.Ref != "" {
				v := refName(a.Ref)
				values = append(values, v)
				note(v, i)
			}
		}
	}
	if len(values) == 0 {
		return
	}
	pv, _ := props.get(d.PropertyName)
	p, ok := pv.(*obj)
	if !ok {
		return
	}
	p = c.withoutNull(p)
	np := &obj{k: slices.Clone(p.k), v: slices.Clone(p.v)}
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	c.constrain(np, "enum", e)
	if len(notes) > 0 {
		desc := np.str("description")
		if desc != "" {
			desc += " "
		}
		np.set("description", desc+"Variant-specific fields: "+strings.Join(notes, "; ")+".")
	}
	props.set(d.PropertyName, c.orNull(np))
}

// tighter returns the stricter of two values of the bound keyword k, and
// false when k is not a numeric bound or a value is not a number.
func tighter(k string, a, b any) (any, bool) {
	var upper bool
	switch k {
	case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
		upper = true
	case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
	default:
		return nil, false
	}
	x, okA := boundValue(a)
	y, okB := boundValue(b)
	if !okA || !okB {
		return nil, false
	}
	if upper == (y < x) {
		return b, true
	}
	return a, true
}

func boundValue(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case uint64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}
