package kindecode

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/internal/jsonvalue"
	"gopkg.in/yaml.v3"
)

// kinSchemaRef is the reference the fast schema decoder must match.
func kinSchemaRef(raw []byte) (*openapi3.SchemaRef, error) {
	var sr *openapi3.SchemaRef
	err := json.Unmarshal(raw, &sr)
	return sr, err
}

// sameDecode fails the test when the fast decoder's result differs from
// kin-openapi's: the error text, or the value (reflect.DeepEqual, which
// compares unexported fields too).
func sameDecode[T any](t testing.TB, where string, got T, errGot error, want T, errWant error) {
	t.Helper()
	if (errGot == nil) != (errWant == nil) || errGot != nil && errGot.Error() != errWant.Error() {
		t.Fatalf("%s: error = %v, kin-openapi: %v", where, errGot, errWant)
	}
	if errWant == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: fast decode differs from kin-openapi (-kin +fast):\n%s", where, cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })))
	}
}

func checkSchemaRef(t testing.TB, where string, raw []byte, fallbacks map[string]int) {
	t.Helper()
	got, errGot := decodeSchemaRefCounting(raw, fallbacks)
	want, errWant := kinSchemaRef(raw)
	sameDecode(t, where, got, errGot, want, errWant)
}

// corpusJSONFiles lists every JSON file of the corpus (entry files of
// JSON documents included, whatever their extension), relative to
// corpustest.Dir().
func corpusJSONFiles(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	for folder, entry := range corpustest.Entries(t) {
		p := filepath.Join(folder, entry)
		if data, err := os.ReadFile(filepath.Join(corpustest.Dir(), p)); err == nil && jsonvalue.LooksLikeObject(data) {
			seen[p] = true
		}
	}
	err := filepath.WalkDir(corpustest.Dir(), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".json") {
			rel, err := filepath.Rel(corpustest.Dir(), p)
			if err != nil {
				return err
			}
			seen[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(seen))
	for p := range seen {
		files = append(files, p)
	}
	sort.Strings(files)
	return files
}

func members(t testing.TB, raw []byte) []jsonvalue.Member {
	t.Helper()
	if raw == nil {
		return nil
	}
	m, ok := jsonvalue.Members(raw)
	if !ok {
		t.Fatalf("not an object: %.80s", raw)
	}
	return m
}

func member(ms []jsonvalue.Member, key string) []byte {
	for _, m := range ms {
		if m.Key == key {
			return m.Raw
		}
	}
	return nil
}

// TestFastDecodeCorpus decodes every component schema and every path item
// (and webhook) of every OAS 3 JSON document of the corpus with the fast
// decoder and with kin-openapi and requires the same values, and the same
// for the definitions and path items of Swagger 2.0 documents (their
// definitions also as OAS 3 schemas); other JSON fragments are decoded as
// schemas. The YAML entry documents are checked too, converted to JSON. It
// logs how many nodes of each kind were handed to kin-openapi.
func TestFastDecodeCorpus(t *testing.T) {
	corpustest.Require(t)
	oas3 := 0
	for _, rel := range corpusJSONFiles(t) {
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(corpustest.Dir(), rel))
			if err != nil {
				t.Fatal(err)
			}
			if checkFastDecodeDocument(t, rel, data) {
				oas3++
			}
		})
	}
	if oas3 == 0 {
		t.Fatal("no OAS 3 JSON document in the corpus")
	}
	entries := corpustest.Entries(t)
	for _, folder := range slices.Sorted(maps.Keys(entries)) {
		rel := filepath.Join(folder, entries[folder])
		data, err := os.ReadFile(filepath.Join(corpustest.Dir(), rel))
		if err != nil {
			t.Fatal(err)
		}
		if jsonvalue.LooksLikeObject(data) {
			continue
		}
		t.Run(rel+" as JSON", func(t *testing.T) {
			var v any
			if err := yaml.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			j, err := json.Marshal(jsonKeys(v))
			if err != nil {
				t.Skipf("no JSON form: %v", err)
			}
			checkFastDecodeDocument(t, rel, j)
		})
	}
}

// jsonKeys turns the map[any]any of a YAML decode into map[string]any.
func jsonKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonKeys(e)
		}
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonKeys(e)
		}
	}
	return v
}

// checkFastDecodeDocument checks the fast decoder on the schemas and path
// items of one JSON document and reports whether it is an OAS 3 document.
func checkFastDecodeDocument(t *testing.T, rel string, data []byte) bool {
	t.Helper()
	top := members(t, data)
	fallbacks := map[string]int{}
	var schemas, items int
	oas3 := false
	switch {
	case strings.HasPrefix(string(member(top, "openapi")), `"3`):
		oas3 = true
		for _, s := range members(t, member(members(t, member(top, "components")), "schemas")) {
			checkSchemaRef(t, "/components/schemas/"+pointerEscaper.Replace(s.Key), s.Raw, fallbacks)
			schemas++
		}
		for _, section := range []string{"paths", "webhooks"} {
			for _, it := range members(t, member(top, section)) {
				if strings.HasPrefix(it.Key, "x-") {
					continue
				}
				checkPathItem(t, "/"+section+"/"+pointerEscaper.Replace(it.Key), it.Raw, fallbacks)
				items++
			}
		}
		want := &openapi3.T{}
		errWant := json.Unmarshal(data, want)
		got := &openapi3.T{}
		errGot := decodeV3JSON(data, got)
		sameDecode(t, "whole document", got, errGot, want, errWant)
	case member(top, "swagger") != nil:
		for _, s := range members(t, member(top, "definitions")) {
			checkSchemaRef(t, "/definitions/"+pointerEscaper.Replace(s.Key), s.Raw, nil)
			checkV2SchemaRef(t, "/definitions/"+pointerEscaper.Replace(s.Key), s.Raw, fallbacks)
			schemas++
		}
		for _, it := range members(t, member(top, "paths")) {
			checkV2PathItem(t, "/paths/"+pointerEscaper.Replace(it.Key), it.Raw, fallbacks)
			items++
		}
		var want, got openapi2.T
		errWant := openapi2.UnmarshalFromData(data, &want)
		errGot := decodeV2(data, &got)
		sameDecode(t, "whole document", &got, errGot, &want, errWant)
	default:
		checkSchemaRef(t, "", data, fallbacks)
		schemas++
	}
	t.Logf("%s: %d schemas, %d path items; nodes handed to kin-openapi: %v", rel, schemas, items, fallbacks)
	return oas3
}

// fastDecodeCases are schemas of the shapes the fast decoder hands to
// kin-openapi, and of shapes it decodes itself; they also seed
// FuzzFastDecode.
var fastDecodeCases = []struct {
	name     string
	in       string
	fallback bool // whether some node must be handed to kin-openapi
}{
	// Decoded in one pass.
	{name: "object schema", in: `{"type":"object","required":["a"],"properties":{"a":{"type":"string","minLength":1,"maxLength":9,"pattern":"^a","enum":["a","b"]},"b":{"$ref":"#/components/schemas/B"},"c":{"type":"array","items":{"type":"integer","minimum":-1.5,"maximum":1e3,"multipleOf":0.5,"exclusiveMinimum":true}}},"additionalProperties":false,"x-a":{"b":[1,"2",null,true]}}`},
	{name: "composition", in: `{"allOf":[{"$ref":"#/a"},{"nullable":true,"readOnly":true,"description":"d\n\u00e9\"","default":{"k":[]},"example":[1.25]}],"anyOf":[],"oneOf":[{"type":["string","null"]}],"not":{"type":"boolean"},"discriminator":{"propertyName":"k","mapping":{"a":"#/a"}}}`},
	{name: "additionalProperties schema", in: `{"additionalProperties":{"type":"string","x-b":1},"unevaluatedProperties":{},"unevaluatedItems":true}`},
	{name: "3.1 keywords", in: `{"$schema":"s","$id":"i","$comment":"c","$defs":{"a":{"const":3}},"prefixItems":[{"type":"string"}],"contains":{"type":"integer"},"minContains":1,"maxContains":2,"if":{"required":["a"]},"then":{"minProperties":1},"else":{"maxProperties":0},"dependentRequired":{"a":["b"]},"dependentSchemas":{"a":{}},"patternProperties":{"^x":{}},"propertyNames":{"pattern":"^a"},"examples":[1,"a"],"contentMediaType":"m","contentEncoding":"e","contentSchema":{}}`},
	{name: "escaped keys and invalid UTF-8", in: "{\"ty\\u0070e\":\"string\",\"properties\":{\"\\u00e9\":{},\"\xff\":{\"title\":\"\xfe\"}},\"x-\\\"\":1}"},
	{name: "null members", in: `{"title":null,"minLength":null,"maxLength":null,"type":null,"enum":null,"additionalProperties":null,"exclusiveMaximum":null,"default":null}`},
	{name: "whitespace", in: " {\n \"type\" : \"object\" ,\t\"properties\" : { \"a\" : { } } , \"required\" : [ ] }\n"},

	// Handed to kin-openapi.
	{name: "case variant key", in: `{"Type":"string"}`, fallback: true},
	{name: "case variant next to key", in: `{"type":"string","TYPE":"integer","properties":{"a":{"type":"string"}}}`, fallback: true},
	{name: "duplicate key", in: `{"type":"string","type":"integer"}`, fallback: true},
	{name: "duplicate pointer key", in: `{"items":{"type":"string","title":"a"},"items":{"title":"b"}}`, fallback: true},
	{name: "duplicate property", in: `{"properties":{"a":{"type":"string"},"a":{"type":"integer"}}}`, fallback: true},
	{name: "duplicate extension", in: `{"x-a":1,"x-a":2}`, fallback: true},
	{name: "$ref with siblings", in: `{"$ref":"#/a","description":"d","nullable":true}`, fallback: true},
	{name: "$ref with x- key", in: `{"$ref":"#/a","x-a":1}`, fallback: true},
	{name: "$ref after a key", in: `{"x-a":1,"$ref":"#/a"}`, fallback: true},
	{name: "empty $ref", in: `{"$ref":""}`, fallback: true},
	{name: "$ref not a string", in: `{"$ref":1}`, fallback: true},
	{name: "nested $ref with siblings", in: `{"properties":{"a":{"$ref":"#/a","summary":"s"}}}`, fallback: true},
	{name: "boolean schema", in: `true`, fallback: true},
	{name: "nested boolean schema", in: `{"items":false,"properties":{"a":true}}`, fallback: true},
	{name: "null schema", in: `null`, fallback: true},
	{name: "null properties", in: `{"properties":null}`, fallback: true},
	{name: "null property", in: `{"properties":{"a":null}}`, fallback: true},
	{name: "null allOf", in: `{"allOf":null}`, fallback: true},
	{name: "null in allOf", in: `{"allOf":[null,{"type":"string"}]}`, fallback: true},
	{name: "properties not an object", in: `{"properties":[]}`, fallback: true},
	{name: "allOf not an array", in: `{"allOf":{}}`, fallback: true},
	{name: "unknown key", in: `{"type":"string","foo":1}`, fallback: true},
	{name: "__origin__", in: `{"type":"string","__origin__":{"file":"f"}}`, fallback: true},
	{name: "minLength not a number", in: `{"type":"string","minLength":"x"}`, fallback: true},
	{name: "nested minLength not a number", in: `{"properties":{"a":{"items":{"minLength":"x"}}}}`, fallback: true},
	{name: "minLength not an integer", in: `{"minLength":1.0}`, fallback: true},
	{name: "minLength negative", in: `{"minLength":-1}`, fallback: true},
	{name: "minLength above 2^53", in: `{"maxLength":9007199254740993}`},
	{name: "minLength out of range", in: `{"minLength":18446744073709551616}`, fallback: true},
	{name: "minimum out of range", in: `{"minimum":1e400}`, fallback: true},
	{name: "number out of range in example", in: `{"example":[1e400]}`, fallback: true},
	{name: "type not a string", in: `{"type":1}`, fallback: true},
	{name: "type array", in: `{"type":["string",null]}`},
	{name: "required with null", in: `{"required":["a",null]}`, fallback: true},
	{name: "title not a string", in: `{"title":true}`, fallback: true},
	{name: "additionalProperties string", in: `{"additionalProperties":"x"}`, fallback: true},
	{name: "additionalProperties with duplicates", in: `{"additionalProperties":{"type":"string","type":"integer","maxLength":9007199254740993}}`, fallback: true},
	{name: "additionalProperties case variants", in: `{"additionalProperties":{"type":"string","Type":"integer"}}`, fallback: true},
	{name: "exclusiveMinimum number", in: `{"exclusiveMinimum":3}`},
	{name: "exclusiveMinimum string", in: `{"exclusiveMinimum":"3"}`, fallback: true},
}

// TestFastDecode checks fastDecodeCases against kin-openapi's value and
// error, and that exactly the unusual ones were handed to kin-openapi.
func TestFastDecode(t *testing.T) {
	for _, tt := range fastDecodeCases {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input is not valid JSON: %s", tt.in)
			}
			fallbacks := map[string]int{}
			checkSchemaRef(t, tt.in, []byte(tt.in), fallbacks)
			if got := len(fallbacks) != 0; got != tt.fallback {
				t.Errorf("%s: handed to kin-openapi = %v (%v), want %v", tt.in, got, fallbacks, tt.fallback)
			}
		})
	}
}

// checkFieldTable checks that field maps every json name of T's fields
// (kin-openapi's tags) to that field, with a distinct bit below 64.
func checkFieldTable[T any](t *testing.T, field func(*T, []byte) (uint, any)) {
	t.Helper()
	var x T
	v := reflect.ValueOf(&x).Elem()
	bits := map[uint]string{}
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !v.Type().Field(i).IsExported() {
			continue
		}
		bit, ptr := field(&x, []byte(name))
		if ptr == nil {
			t.Errorf("%T: %q is not decoded", x, name)
			continue
		}
		if p := reflect.ValueOf(ptr); p.Type().Elem() != v.Field(i).Type() || p.Pointer() != v.Field(i).Addr().Pointer() {
			t.Errorf("%T: %q decodes into a %s that is not field %s", x, name, p.Type(), v.Type().Field(i).Name)
		}
		if other, dup := bits[bit]; dup || bit >= 64 {
			t.Errorf("%T: %q has bit %d (also %q)", x, name, bit, other)
		}
		bits[bit] = name
	}
	if len(bits) == 0 {
		t.Errorf("%T: no fields", x)
	}
}

// TestFastDecodeFieldTables checks the key → field tables against
// kin-openapi's json tags.
func TestFastDecodeFieldTables(t *testing.T) {
	checkFieldTable(t, schemaField)
}

// FuzzFastDecode checks that the fast decoder gives kin-openapi's value
// and error for any valid JSON, as an OAS 3 schema, an OAS 3 path item in
// both modes, a Swagger 2.0 schema and a Swagger 2.0 path item.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":1},"b":{"$ref":"#/b"}},"required":["a"],"x-a":[1]}`,
		`{"allOf":[{"$ref":"#/a"},{"properties":{"a":{"type":["string","null"]}}}],"additionalProperties":{"type":"integer"}}`,
		`{"Type":"string","type":"integer","minLength":1.0}`,
		`{"$ref":"#/a","description":"d"}`,
		`{"items":true,"properties":{"a":null},"enum":[1e400]}`,
		`{"get":{"operationId":"g","parameters":[{"name":"q","in":"query","schema":{"type":"string"}}],"requestBody":{"content":{"application/json":{"schema":{"type":"object"}}}},"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/s"}}}},"x-r":1}}}`,
		`{"get":{"responses":{"200":{"description":"a","headers":{"h":{"schema":{"maxLength":9007199254740993}}}}}}}`,
		`{"parameters":[{"$ref":"#/p"},null],"post":{"responses":null}}`,
	} {
		f.Add([]byte(s))
	}
	for _, tt := range fastDecodeCases {
		f.Add([]byte(tt.in))
	}
	for _, tt := range fastDecodePathItemCases {
		f.Add([]byte(tt.in))
	}
	for _, tt := range fastDecodeV2Cases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			t.Skip() // the fast decoder reads validated input only
		}
		checkSchemaRef(t, "schema", data, nil)
		checkPathItem(t, "path item", data, nil)
		checkV2SchemaRef(t, "schema", data, nil)
		checkV2PathItem(t, "path item", data, nil)
	})
}

// BenchmarkDecodeV3 measures the decode phase alone (decodeV3JSON) on the
// largest OAS 3 JSON documents of the corpus; select one with
// -bench DecodeV3/stripe.
func BenchmarkDecodeV3(b *testing.B) {
	corpustest.Require(b)
	for _, folder := range []string{"stripe-2022-04-12", "github-rest-v1.1.3", "square-connect-v2", "twilio-api-v2010", "adyen-checkoutservice-v72"} {
		b.Run(folder, func(b *testing.B) {
			data, err := os.ReadFile(corpustest.Path(b, folder))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var doc openapi3.T
				if err := decodeV3JSON(data, &doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// pointerEscaper escapes a member name for a JSON pointer (RFC 6901 §3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
