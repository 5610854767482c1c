package kindecode

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// This file decodes OAS 3 schemas and path items into kin-openapi values in
// one pass, giving exactly what kin-openapi's own UnmarshalJSON methods give.
// Those read every subtree several times at every level: SchemaRef decodes
// the subtree into Ref, then Schema decodes it into a struct and again into
// a map[string]any to find its x- extensions, and the same goes for
// Operation, Parameter, RequestBody, Response and MediaType, so the cost
// grows with depth × subtree size (Stripe: ~0.6 s of decoding).
//
// Exactness comes from two rules. A field that holds no nested OpenAPI
// object (a string, a number, an example, a discriminator) is decoded
// either as encoding/json would decode it in a struct (strings, booleans,
// numbers, and any values, checked by FuzzFastDecode) or by json.Unmarshal
// of its raw value into the field itself, which is what the struct decode
// does for that field. And any node of an unusual shape is handed whole to
// kin-openapi: a key that is not exactly a known field name and does not
// start with "x-" (encoding/json matches field names case-insensitively), a
// duplicate key, a $ref with anything next to it, a value of an unexpected
// JSON type (boolean schemas, null where an object is expected), a number
// out of range, or anything that fails to decode. Errors are never built
// here: when any node fails, the caller decodes the whole value with
// kin-openapi again, so the error reads exactly as kin-openapi's.
//
// Path items are decoded in "canonical" mode. kin-openapi's Paths,
// Responses and Callback decoders do not decode their entries directly:
// they decode the object into map[string]any and decode each entry from its
// json.Marshal encoding, which drops duplicate keys, sorts keys and rewrites
// numbers as float64. In canonical mode the decoder reads the original
// bytes but gives what decoding that re-encoding would give: the two differ
// only in nodes it hands to kin-openapi anyway (duplicate or case-variant
// keys), in integers that are not exact float64 values (it falls back for
// integer fields above 2^53 and for non-integer literals) and in the fields
// it delegates to json.Unmarshal, which then decode the re-encoded value.

// fastDecoder reads one JSON value that json.Valid has accepted (on other
// input it gives some result but does not panic).
type fastDecoder struct {
	jsonvalue.Parser
	// canon selects canonical mode (see above): decode as kin-openapi does
	// after its map[string]any round trip.
	canon bool
	// fallbacks counts the nodes handed to kin-openapi, by kind; nil (in
	// production) counts nothing.
	fallbacks map[string]int
}

// errUnusual means a node has a shape the fast decoder leaves to
// kin-openapi; it never leaves the decoder.
type unusualError struct{}

func (*unusualError) Error() string { return "node left to kin-openapi" }

var errUnusual error = &unusualError{}

// maxExactInt is the largest integer up to which every integer is an exact
// float64 (2^53), so that json.Marshal of the float64 gives it back.
const maxExactInt = 1 << 53

// decodeSchemaRef returns the *openapi3.SchemaRef and error that
// json.Unmarshal(raw, &sr) gives for a JSON value raw that json.Valid has
// accepted (nil for null), decoding the usual shapes in one pass and
// handing any other node to kin-openapi. On any error the whole value is
// decoded by json.Unmarshal again, so the error and the partial value are
// kin-openapi's.
func decodeSchemaRef(raw []byte) (*openapi3.SchemaRef, error) {
	return decodeSchemaRefCounting(raw, nil)
}

func decodeSchemaRefCounting(raw []byte, fallbacks map[string]int) (*openapi3.SchemaRef, error) {
	d := fastDecoder{Parser: jsonvalue.Parser{B: raw}, fallbacks: fallbacks}
	d.Space()
	if sr, err := d.schemaRef(); err == nil {
		return sr, nil
	}
	var sr *openapi3.SchemaRef
	err := json.Unmarshal(raw, &sr)
	return sr, err
}

// reencodeJSON returns the json.Marshal encoding of raw's map[string]any
// decoding: the bytes kin-openapi's Paths, Responses and Callback decoders
// decode their entries from.
func reencodeJSON(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// fallback hands the value starting at start to kin-openapi: it returns
// json.Unmarshal's result for it (of its canonical encoding in canonical
// mode), and leaves d after the value.
func fallback[T any](d *fastDecoder, start int, kind string) (T, error) {
	d.I = start
	var v T
	if !d.Skip() || d.I > len(d.B) {
		return v, errUnusual
	}
	raw := d.B[start:d.I]
	if d.fallbacks != nil {
		d.fallbacks[kind]++
	}
	if d.canon {
		c, err := reencodeJSON(raw)
		if err != nil {
			return v, err
		}
		raw = c
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

func (d *fastDecoder) peek() byte {
	if d.I < len(d.B) {
		return d.B[d.I]
	}
	return 0
}

// raw returns the next value's bytes and moves past it.
func (d *fastDecoder) raw() ([]byte, error) {
	start := d.I
	if !d.Skip() || d.I == start || d.I > len(d.B) {
		return nil, errUnusual
	}
	return d.B[start:d.I], nil
}

// key reads an object key. It returns the key's bytes unescaped: a slice
// of the input when the key has no escapes and is valid UTF-8, as
// encoding/json would read it otherwise.
func (d *fastDecoder) key() ([]byte, error) {
	if d.peek() != '"' {
		return nil, errUnusual
	}
	start := d.I + 1
	for i := start; i < len(d.B); i++ {
		switch c := d.B[i]; {
		case c == '"':
			d.I = i + 1
			return d.B[start:i], nil
		case c == '\\' || c >= 0x80:
			// Escapes and non-ASCII keys (which encoding/json
			// checks as UTF-8) take the general path.
			s, err := d.Str()
			if err != nil {
				return nil, errUnusual
			}
			return []byte(s), nil
		}
	}
	return nil, errUnusual
}

// object calls member for each member of the object at d, with d at the
// member's value; member must move past the value. It reports errUnusual
// when the value is not an object.
func (d *fastDecoder) object(member func(key []byte) error) error {
	if d.peek() != '{' {
		return errUnusual
	}
	d.I++
	d.Space()
	if d.peek() == '}' {
		d.I++
		return nil
	}
	for {
		d.Space()
		k, err := d.key()
		if err != nil {
			return err
		}
		d.Space()
		if d.peek() != ':' {
			return errUnusual
		}
		d.I++
		d.Space()
		if err := member(k); err != nil {
			return err
		}
		d.Space()
		switch d.peek() {
		case ',':
			d.I++
		case '}':
			d.I++
			return nil
		default:
			return errUnusual
		}
	}
}

// array calls elem for each element of the array at d, with d at the
// element; elem must move past it. It reports errUnusual when the value is
// not an array.
func (d *fastDecoder) array(elem func() error) error {
	if d.peek() != '[' {
		return errUnusual
	}
	d.I++
	d.Space()
	if d.peek() == ']' {
		d.I++
		return nil
	}
	for {
		d.Space()
		if err := elem(); err != nil {
			return err
		}
		d.Space()
		switch d.peek() {
		case ',':
			d.I++
		case ']':
			d.I++
			return nil
		default:
			return errUnusual
		}
	}
}

// isNull moves past a null and reports whether there was one.
func (d *fastDecoder) isNull() bool {
	if d.peek() == 'n' {
		d.I += 4
		return true
	}
	return false
}

// decodeFields decodes the object at d into *x, as the struct decode of
// x's UnmarshalJSON followed by its map decode for x- extensions does:
// field maps a key to the bit that detects its duplicates and a pointer to
// its field (nil for a key that is not a field), and x- keys go to *ext,
// which stays nil when there are none. Any other key is errUnusual.
func decodeFields[T any](d *fastDecoder, x *T, field func(*T, []byte) (uint, any), ext *map[string]any) error {
	var seen uint64
	return d.object(func(k []byte) error {
		if bit, ptr := field(x, k); ptr != nil {
			if seen&(1<<bit) != 0 {
				return errUnusual
			}
			seen |= 1 << bit
			return d.field(ptr)
		}
		if !bytes.HasPrefix(k, []byte("x-")) {
			return errUnusual
		}
		key := string(k)
		if _, dup := (*ext)[key]; dup {
			return errUnusual
		}
		v, err := d.any()
		if err != nil {
			return err
		}
		if *ext == nil {
			*ext = map[string]any{}
		}
		(*ext)[key] = v
		return nil
	})
}

// field decodes the value at d into the field ptr points to, as the
// struct decode of encoding/json does for a fresh struct.
func (d *fastDecoder) field(ptr any) error {
	if ok, err := d.scalarField(ptr); ok {
		return err
	}
	if ok, err := d.listField(ptr); ok {
		return err
	}
	switch p := ptr.(type) {
	case **openapi3.Types:
		if d.peek() == '"' {
			var s string
			if err := d.stringField(&s); err != nil {
				return err
			}
			*p = &openapi3.Types{s}
			return nil
		}
		return d.plain(ptr)
	case *openapi3.ExclusiveBound:
		var b bool
		switch set, err := d.boolField(&b); {
		case set:
			p.Bool = &b
			return nil
		case err == nil: // null
			return nil
		}
		return d.plain(ptr)
	case *openapi3.BoolSchema:
		return d.boolSchema(p)
	case **openapi3.SchemaRef:
		sr, err := d.schemaRef()
		*p = sr
		return err
	case *openapi3.SchemaRefs:
		return decodeSlice(d, p, (*fastDecoder).schemaRef)
	case *openapi3.Schemas:
		return decodeMap(d, p, (*fastDecoder).schemaRef)
	case *map[string][]string:
		// The same in either mode.
		return d.plain(ptr)
	}
	if ok, err := d.pathItemPart(ptr); ok {
		return err
	}
	if ok, err := d.swagger2Part(ptr); ok {
		return err
	}
	// Nested objects of other kinds (ExternalDocs, XML, Discriminator,
	// Servers, Callbacks, Links, Encodings, ...).
	return d.delegate(ptr)
}

// scalarField decodes a string, boolean, number or any field; ok is false
// for other field types.
func (d *fastDecoder) scalarField(ptr any) (ok bool, err error) {
	switch p := ptr.(type) {
	case *string:
		return true, d.stringField(p)
	case **string:
		if d.isNull() {
			return true, nil
		}
		var s string
		if err := d.stringField(&s); err != nil {
			return true, err
		}
		*p = &s
		return true, nil
	case *bool:
		_, err := d.boolField(p)
		return true, err
	case **bool:
		var b bool
		set, err := d.boolField(&b)
		if set {
			*p = &b
		}
		return true, err
	case **float64:
		if d.isNull() {
			return true, nil
		}
		raw, err := d.number()
		if err != nil {
			return true, err
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return true, errUnusual
		}
		*p = &f
		return true, nil
	case *uint64:
		_, err := d.uintField(p)
		return true, err
	case **uint64:
		var n uint64
		set, err := d.uintField(&n)
		if set {
			*p = &n
		}
		return true, err
	case *any:
		v, err := d.any()
		*p = v
		return true, err
	}
	return false, nil
}

// listField decodes a list of any or of strings; ok is false for other
// field types.
func (d *fastDecoder) listField(ptr any) (ok bool, err error) {
	switch p := ptr.(type) {
	case *[]any:
		if d.isNull() {
			return true, nil
		}
		l := []any{}
		err := d.array(func() error {
			v, err := d.any()
			l = append(l, v)
			return err
		})
		*p = l
		return true, err
	case *[]string:
		if d.isNull() {
			return true, nil
		}
		l := []string{}
		err := d.array(func() error {
			var s string
			if d.peek() != '"' {
				return errUnusual // null elements and type errors
			}
			err := d.stringField(&s)
			l = append(l, s)
			return err
		})
		*p = l
		return true, err
	}
	return false, nil
}

// plain decodes the value at d into ptr with json.Unmarshal, for field
// types whose decoding does not change with the canonical re-encoding
// (strings, booleans, floats, any, and kin-openapi types built from them).
func (d *fastDecoder) plain(ptr any) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	if json.Unmarshal(raw, ptr) != nil {
		return errUnusual
	}
	return nil
}

// delegate decodes the value at d into ptr with json.Unmarshal, in
// canonical mode from its canonical encoding.
func (d *fastDecoder) delegate(ptr any) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	if d.canon {
		if raw, err = reencodeJSON(raw); err != nil {
			return errUnusual
		}
	}
	if json.Unmarshal(raw, ptr) != nil {
		return errUnusual
	}
	return nil
}

// stringField decodes a string or null (which leaves *p as it is).
func (d *fastDecoder) stringField(p *string) error {
	switch d.peek() {
	case '"':
		s, err := d.Str()
		if err != nil {
			return errUnusual
		}
		*p = s
		return nil
	case 'n':
		d.I += 4
		return nil
	}
	return errUnusual
}

// boolField decodes a boolean or null (which leaves *p as it is) and
// reports whether it set *p.
func (d *fastDecoder) boolField(p *bool) (bool, error) {
	switch d.peek() {
	case 't':
		d.I += 4
		*p = true
		return true, nil
	case 'f':
		d.I += 5
		*p = false
		return true, nil
	case 'n':
		d.I += 4
		return false, nil
	}
	return false, errUnusual
}

// uintField decodes an unsigned integer or null (which leaves *p as it
// is) and reports whether it set *p. In canonical mode integers above
// 2^53 are errUnusual: their float64 re-encoding is another integer.
func (d *fastDecoder) uintField(p *uint64) (bool, error) {
	if d.isNull() {
		return false, nil
	}
	raw, err := d.number()
	if err != nil {
		return false, err
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || d.canon && n > maxExactInt {
		return false, errUnusual
	}
	*p = n
	return true, nil
}

// number returns the bytes of a number literal.
func (d *fastDecoder) number() ([]byte, error) {
	if c := d.peek(); c != '-' && (c < '0' || c > '9') {
		return nil, errUnusual
	}
	return d.raw()
}

// any decodes a value as encoding/json decodes it into an empty
// interface: map[string]any (the last of duplicate keys wins), []any,
// string, float64, bool or nil.
func (d *fastDecoder) any() (any, error) {
	switch c := d.peek(); c {
	case '{':
		m := map[string]any{}
		err := d.object(func(k []byte) error {
			v, err := d.any()
			m[string(k)] = v
			return err
		})
		return m, err
	case '[':
		l := []any{}
		err := d.array(func() error {
			v, err := d.any()
			l = append(l, v)
			return err
		})
		return l, err
	case '"':
		s, err := d.Str()
		if err != nil {
			return nil, errUnusual
		}
		return s, nil
	case 't':
		d.I += 4
		return true, nil
	case 'f':
		d.I += 5
		return false, nil
	case 'n':
		d.I += 4
		return nil, nil
	default:
		raw, err := d.number()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil, errUnusual
		}
		return f, nil
	}
}

// decodeSlice decodes an array of nodes into a fresh slice (empty, not
// nil, for []); null and other values are errUnusual.
func decodeSlice[S ~[]E, E any](d *fastDecoder, p *S, elem func(*fastDecoder) (E, error)) error {
	if d.peek() != '[' {
		return errUnusual
	}
	l := S{}
	err := d.array(func() error {
		v, err := elem(d)
		l = append(l, v)
		return err
	})
	*p = l
	return err
}

// decodeMap decodes an object of nodes into a fresh map; null, other
// values and duplicate keys are errUnusual.
func decodeMap[M ~map[string]E, E any](d *fastDecoder, p *M, elem func(*fastDecoder) (E, error)) error {
	if d.peek() != '{' {
		return errUnusual
	}
	m := M{}
	err := d.object(func(k []byte) error {
		key := string(k)
		if _, dup := m[key]; dup {
			return errUnusual
		}
		v, err := elem(d)
		m[key] = v
		return err
	})
	*p = m
	return err
}

// pureRef reads an object that is exactly {"$ref": "<non-empty string>"}:
// the one shape of a Reference Object decoded here (with anything next to
// it, kin-openapi keeps unexported state). Otherwise it leaves d as it was.
func (d *fastDecoder) pureRef() (string, bool) {
	start := d.I
	d.I++ // '{'
	d.Space()
	if k, err := d.key(); err == nil && string(k) == "$ref" {
		d.Space()
		if d.peek() == ':' {
			d.I++
			d.Space()
			if d.peek() == '"' {
				if s, err := d.Str(); err == nil && s != "" {
					d.Space()
					if d.peek() == '}' {
						d.I++
						return s, true
					}
				}
			}
		}
	}
	d.I = start
	return "", false
}

// refNode decodes a node that may be a Reference Object: a pure $ref gives
// ref(s); an object gives val of the value decoded field by field;
// anything else, or any unusual shape inside, is handed to kin-openapi.
func refNode[R any, V any](d *fastDecoder, kind string, field func(*V, []byte) (uint, any), ext func(*V) *map[string]any, ref func(string) R, val func(*V) R) (R, error) {
	start := d.I
	if d.peek() == '{' {
		if s, ok := d.pureRef(); ok {
			return ref(s), nil
		}
		v := new(V)
		err := decodeFields(d, v, field, ext(v))
		if err == nil {
			return val(v), nil
		}
		if err != errUnusual {
			var zero R
			return zero, err
		}
	}
	return fallback[R](d, start, kind)
}

// schemaRef decodes a schema or a reference to one, as json.Unmarshal
// into a *openapi3.SchemaRef does.
func (d *fastDecoder) schemaRef() (*openapi3.SchemaRef, error) {
	return refNode(d, "schema", schemaField,
		func(s *openapi3.Schema) *map[string]any { return &s.Extensions },
		func(ref string) *openapi3.SchemaRef { return &openapi3.SchemaRef{Ref: ref} },
		func(s *openapi3.Schema) *openapi3.SchemaRef { return &openapi3.SchemaRef{Value: s} })
}

// boolSchema decodes additionalProperties and the other keywords that are
// a boolean or a schema, as BoolSchema.UnmarshalJSON does: a non-empty
// object is decoded from its canonical encoding, hence in canonical mode.
func (d *fastDecoder) boolSchema(p *openapi3.BoolSchema) error {
	var b bool
	switch set, err := d.boolField(&b); {
	case set:
		p.Has = &b
		return nil
	case err == nil: // null
		return nil
	}
	if d.peek() != '{' {
		return errUnusual
	}
	start := d.I
	d.I++
	d.Space()
	if d.peek() == '}' {
		d.I++
		p.Schema = &openapi3.SchemaRef{Value: &openapi3.Schema{}}
		return nil
	}
	d.I = start
	canon := d.canon
	d.canon = true
	sr, err := d.schemaRef()
	d.canon = canon
	p.Schema = sr
	return err
}

// The field functions map a JSON key to the bit that detects its
// duplicates and a pointer to its field, following the json tags of
// kin-openapi v0.153.0's types; a nil pointer means the key is not a field.

func schemaField(s *openapi3.Schema, k []byte) (uint, any) {
	switch string(k) {
	case "oneOf":
		return 0, &s.OneOf
	case "anyOf":
		return 1, &s.AnyOf
	case "allOf":
		return 2, &s.AllOf
	case "not":
		return 3, &s.Not
	case "type":
		return 4, &s.Type
	case "title":
		return 5, &s.Title
	case "format":
		return 6, &s.Format
	case "description":
		return 7, &s.Description
	case "enum":
		return 8, &s.Enum
	case "default":
		return 9, &s.Default
	case "example":
		return 10, &s.Example
	case "externalDocs":
		return 11, &s.ExternalDocs
	case "uniqueItems":
		return 12, &s.UniqueItems
	case "exclusiveMinimum":
		return 13, &s.ExclusiveMin
	case "exclusiveMaximum":
		return 14, &s.ExclusiveMax
	case "nullable":
		return 15, &s.Nullable
	case "readOnly":
		return 16, &s.ReadOnly
	case "writeOnly":
		return 17, &s.WriteOnly
	case "allowEmptyValue":
		return 18, &s.AllowEmptyValue
	case "deprecated":
		return 19, &s.Deprecated
	case "xml":
		return 20, &s.XML
	case "minimum":
		return 21, &s.Min
	case "maximum":
		return 22, &s.Max
	case "multipleOf":
		return 23, &s.MultipleOf
	case "minLength":
		return 24, &s.MinLength
	case "maxLength":
		return 25, &s.MaxLength
	case "pattern":
		return 26, &s.Pattern
	case "minItems":
		return 27, &s.MinItems
	case "maxItems":
		return 28, &s.MaxItems
	case "items":
		return 29, &s.Items
	case "required":
		return 30, &s.Required
	case "properties":
		return 31, &s.Properties
	case "minProperties":
		return 32, &s.MinProps
	case "maxProperties":
		return 33, &s.MaxProps
	case "additionalProperties":
		return 34, &s.AdditionalProperties
	case "discriminator":
		return 35, &s.Discriminator
	case "const":
		return 36, &s.Const
	case "examples":
		return 37, &s.Examples
	case "prefixItems":
		return 38, &s.PrefixItems
	case "contains":
		return 39, &s.Contains
	case "minContains":
		return 40, &s.MinContains
	case "maxContains":
		return 41, &s.MaxContains
	case "patternProperties":
		return 42, &s.PatternProperties
	case "dependentSchemas":
		return 43, &s.DependentSchemas
	case "propertyNames":
		return 44, &s.PropertyNames
	case "unevaluatedItems":
		return 45, &s.UnevaluatedItems
	case "unevaluatedProperties":
		return 46, &s.UnevaluatedProperties
	case "if":
		return 47, &s.If
	case "then":
		return 48, &s.Then
	case "else":
		return 49, &s.Else
	case "dependentRequired":
		return 50, &s.DependentRequired
	case "$defs":
		return 51, &s.Defs
	case "$schema":
		return 52, &s.SchemaDialect
	case "$comment":
		return 53, &s.Comment
	case "$id":
		return 54, &s.SchemaID
	case "$anchor":
		return 55, &s.Anchor
	case "$dynamicRef":
		return 56, &s.DynamicRef
	case "$dynamicAnchor":
		return 57, &s.DynamicAnchor
	case "contentMediaType":
		return 58, &s.ContentMediaType
	case "contentEncoding":
		return 59, &s.ContentEncoding
	case "contentSchema":
		return 60, &s.ContentSchema
	}
	return 0, nil
}
