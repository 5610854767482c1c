package kindecode

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/restmcp/restmcp/internal/corpustest"
)

func checkV2SchemaRef(t testing.TB, where string, raw []byte, fallbacks map[string]int) {
	t.Helper()
	got, errGot := decodeV2SchemaRefCounting(raw, fallbacks)
	var want *openapi2.SchemaRef
	errWant := json.Unmarshal(raw, &want)
	sameDecode(t, where+" (Swagger 2.0)", got, errGot, want, errWant)
}

func checkV2PathItem(t testing.TB, where string, raw []byte, fallbacks map[string]int) {
	t.Helper()
	got, errGot := decodeV2PathItemCounting(raw, fallbacks)
	var want *openapi2.PathItem
	errWant := json.Unmarshal(raw, &want)
	sameDecode(t, where+" (Swagger 2.0)", got, errGot, want, errWant)
}

// fastDecodeV2Cases are Swagger 2.0 schemas and path items of the shapes
// the fast decoder hands to kin-openapi, and of shapes it decodes itself;
// they also seed FuzzFastDecode.
var fastDecodeV2Cases = []struct {
	name     string
	in       string
	pathItem bool // decode as a path item, else as a schema
	fallback bool // whether some node must be handed to kin-openapi
}{
	{name: "schema", in: `{"type":"object","required":["a"],"discriminator":"a","properties":{"a":{"type":"string","minLength":1,"exclusiveMinimum":true},"b":{"$ref":"#/definitions/B"},"c":{"type":"array","items":{"type":"integer"}}},"additionalProperties":{"type":"string"},"x-a":{"b":1},"allOf":[{"$ref":"#/definitions/C"}],"xml":{"name":"a"}}`},
	{name: "path item", pathItem: true, in: `{"parameters":[{"$ref":"#/parameters/p"}],"get":{"operationId":"g","consumes":["application/json"],"produces":["application/json"],"schemes":["https"],"security":[{"k":[]}],"parameters":[{"name":"q","in":"query","type":"array","items":{"type":"string"},"collectionFormat":"csv","x-q":1},{"name":"b","in":"body","schema":{"$ref":"#/definitions/B"}}],"responses":{"200":{"description":"ok","schema":{"type":"object"},"headers":{"X-A":{"type":"integer","description":"d"}},"examples":{"application/json":{"a":1}}},"default":{"$ref":"#/responses/r"},"x-r":true},"x-o":"o"},"$ref":"#/x"}`},
	{name: "response null", pathItem: true, in: `{"get":{"responses":{"200":null}}}`, fallback: true},
	{name: "schema oneOf", in: `{"oneOf":[{"type":"string"}],"nullable":true}`, fallback: true},
	{name: "schema $ref with siblings", in: `{"$ref":"#/definitions/A","description":"d"}`, fallback: true},
	{name: "schema case variant", in: `{"type":"string","Type":"integer"}`, fallback: true},
	{name: "schema duplicate", in: `{"properties":{"a":{},"a":{"type":"string"}}}`, fallback: true},
	{name: "exclusiveMinimum number", in: `{"exclusiveMinimum":3}`, fallback: true},
	{name: "parameter unknown key", pathItem: true, in: `{"get":{"parameters":[{"name":"a","in":"query","foo":1}]}}`, fallback: true},
	{name: "responses duplicate", pathItem: true, in: `{"get":{"responses":{"200":{"description":"a"},"200":{"description":"b"}}}}`, fallback: true},
	{name: "responses not an object", pathItem: true, in: `{"get":{"responses":[]}}`, fallback: true},
	{name: "path item null", pathItem: true, in: `null`, fallback: true},
	{name: "operation null", pathItem: true, in: `{"get":null}`, fallback: true},
}

// TestFastDecodeSwagger2 checks fastDecodeV2Cases against kin-openapi's
// value and error, and that exactly the unusual ones were handed to
// kin-openapi.
func TestFastDecodeSwagger2(t *testing.T) {
	for _, tt := range fastDecodeV2Cases {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input is not valid JSON: %s", tt.in)
			}
			fallbacks := map[string]int{}
			if tt.pathItem {
				checkV2PathItem(t, tt.in, []byte(tt.in), fallbacks)
			} else {
				checkV2SchemaRef(t, tt.in, []byte(tt.in), fallbacks)
			}
			if got := len(fallbacks) != 0; got != tt.fallback {
				t.Errorf("%s: handed to kin-openapi = %v (%v), want %v", tt.in, got, fallbacks, tt.fallback)
			}
		})
	}
}

// TestFastDecodeSwagger2FieldTables checks the key → field tables of
// openapi2 types against kin-openapi's json tags.
func TestFastDecodeSwagger2FieldTables(t *testing.T) {
	checkFieldTable(t, v2SchemaField)
	checkFieldTable(t, v2PathItemField)
	checkFieldTable(t, v2OperationField)
	checkFieldTable(t, v2ParameterField)
	checkFieldTable(t, v2ResponseField)
}

// BenchmarkDecodeV2 measures the decode phase alone (decodeV2) on the
// Kubernetes Swagger 2.0 document.
func BenchmarkDecodeV2(b *testing.B) {
	corpustest.Require(b)
	data, err := os.ReadFile(corpustest.Path(b, "kubernetes-1.36-swagger20"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var doc openapi2.T
		if err := decodeV2(data, &doc); err != nil {
			b.Fatal(err)
		}
	}
}
