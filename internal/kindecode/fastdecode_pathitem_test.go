package kindecode

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// kinPathItem is the reference the fast path item decoder must match:
// PathItem.UnmarshalJSON of raw, or with canon the path item that
// Paths.UnmarshalJSON gives for raw as a member of "paths".
func kinPathItem(raw []byte, canon bool) (*openapi3.PathItem, error) {
	if !canon {
		it := &openapi3.PathItem{}
		err := it.UnmarshalJSON(raw)
		return it, err
	}
	var paths openapi3.Paths
	doc := append(append([]byte(`{"/p":`), raw...), '}')
	if err := paths.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	return paths.Value("/p"), nil
}

// checkPathItem checks both modes; it counts the fallbacks of the mode
// decodeV3JSON uses (as a member of Paths).
func checkPathItem(t testing.TB, where string, raw []byte, fallbacks map[string]int) {
	t.Helper()
	for _, canon := range []bool{true, false} {
		got, errGot := decodePathItemCounting(raw, canon, fallbacks)
		want, errWant := kinPathItem(raw, canon)
		mode := " (PathItem.UnmarshalJSON)"
		if canon {
			mode = " (as a member of Paths)"
		}
		sameDecode(t, where+mode, got, errGot, want, errWant)
		fallbacks = nil
	}
}

// fastDecodePathItemCases are path items of the shapes the fast decoder
// hands to kin-openapi, and of shapes it decodes itself; they also seed
// FuzzFastDecode.
var fastDecodePathItemCases = []struct {
	name     string
	in       string
	fallback bool // whether some node must be handed to kin-openapi as a member of Paths
}{
	{name: "path item", in: `{"summary":"s","parameters":[{"$ref":"#/p"},{"name":"id","in":"path","required":true,"schema":{"type":"string"},"x-p":1}],"get":{"operationId":"g","tags":["t"],"security":[{"k":[]}],"parameters":[{"name":"q","in":"query","explode":false,"content":{"application/json":{"schema":{"type":"object"}}}}],"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/s"},"examples":{"a":{"$ref":"#/e"},"b":{"summary":"b","value":{"x":1}}},"encoding":{"a":{"contentType":"text/plain"}}}}},"responses":{"200":{"description":"ok","headers":{"X-A":{"schema":{"type":"integer"}},"X-B":{"$ref":"#/h"}},"content":{"application/json":{"schema":{"type":"array","items":{"$ref":"#/s"}}}},"links":{"l":{"operationId":"g"}}},"default":{"$ref":"#/r"},"x-r":true},"externalDocs":{"url":"u"},"x-o":"o"},"post":{"requestBody":{"$ref":"#/rb"},"responses":{}},"x-i":[1]}`},
	{name: "path item $ref", in: `{"$ref":"#/components/pathItems/a","description":"d"}`},
	{name: "empty path item", in: `{}`},
	{name: "path item case variant", in: `{"get":{"responses":{}},"Get":{"summary":"s"}}`, fallback: true},
	{name: "path item duplicate", in: `{"get":{"summary":"a"},"get":{"description":"b"}}`, fallback: true},
	{name: "operation big integer", in: `{"get":{"parameters":[{"name":"a","in":"query","schema":{"maxLength":9007199254740993}}]}}`, fallback: true},
	{name: "operation minLength 1.0", in: `{"get":{"parameters":[{"name":"a","in":"query","schema":{"minLength":1.0}}]}}`, fallback: true},
	{name: "responses null", in: `{"get":{"responses":null}}`, fallback: true},
	{name: "response null", in: `{"get":{"responses":{"200":null}}}`, fallback: true},
	{name: "responses duplicate", in: `{"get":{"responses":{"200":{"description":"a"},"200":{"description":"b"}}}}`, fallback: true},
	{name: "response string", in: `{"get":{"responses":{"200":"ok"}}}`, fallback: true},
	{name: "response description not a string", in: `{"get":{"responses":{"200":{"description":1}}}}`, fallback: true},
	{name: "parameter ref with summary", in: `{"parameters":[{"$ref":"#/p","summary":"s"}]}`, fallback: true},
	{name: "parameter unknown key", in: `{"parameters":[{"name":"a","in":"query","foo":1}]}`, fallback: true},
	{name: "callbacks", in: `{"post":{"callbacks":{"c":{"{$request.body#/u}":{"post":{"responses":{"200":{"description":"ok"}}}}}}}}`},
	{name: "servers", in: `{"servers":[{"url":"http://a","URL":"http://b"}],"get":{"servers":[{"url":"http://c"}]}}`},
	{name: "additionalOperations", in: `{"additionalOperations":{"COPY":{"responses":{"200":{"description":"ok"}}}}}`},
	{name: "escaped method key", in: `{"g\u0065t":{"summary":"s"}}`},
	{name: "response case variant", in: `{"get":{"responses":{"200":{"description":"a","Description":"b"}}}}`, fallback: true},
	{name: "responses duplicate extension", in: `{"get":{"responses":{"x-a":1,"x-a":2}}}`, fallback: true},
	{name: "media type case variant", in: `{"get":{"requestBody":{"content":{"application/json":{"schema":{"type":"object"},"Schema":{"type":"string"}}}}}}`, fallback: true},
	{name: "header big integer", in: `{"get":{"responses":{"200":{"description":"a","headers":{"h":{"schema":{"maxItems":9007199254740993}}}}}}}`, fallback: true},
	{name: "path item null", in: `null`, fallback: true},
	{name: "path item not an object", in: `[1]`, fallback: true},
	{name: "operation not an object", in: `{"get":"x"}`, fallback: true},
}

// TestFastDecodePathItem checks fastDecodePathItemCases against
// kin-openapi's value and error in both modes, and that exactly the unusual
// ones were handed to kin-openapi.
func TestFastDecodePathItem(t *testing.T) {
	for _, tt := range fastDecodePathItemCases {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input is not valid JSON: %s", tt.in)
			}
			fallbacks := map[string]int{}
			checkPathItem(t, tt.in, []byte(tt.in), fallbacks)
			if got := len(fallbacks) != 0; got != tt.fallback {
				t.Errorf("%s: handed to kin-openapi = %v (%v), want %v", tt.in, got, fallbacks, tt.fallback)
			}
		})
	}
}

// TestFastDecodePathItemFieldTables checks the key → field tables of path
// item types against kin-openapi's json tags.
func TestFastDecodePathItemFieldTables(t *testing.T) {
	checkFieldTable(t, pathItemField)
	checkFieldTable(t, operationField)
	checkFieldTable(t, parameterField)
	checkFieldTable(t, requestBodyField)
	checkFieldTable(t, responseField)
	checkFieldTable(t, mediaTypeField)
	checkFieldTable(t, exampleField)
}

// TestDecodeV3JSONPathItemReencoding checks that a path item decodes as
// kin-openapi's Paths decodes it, from the json.Marshal encoding of its
// map[string]any decoding, where that differs from decoding the bytes
// directly.
func TestDecodeV3JSONPathItemReencoding(t *testing.T) {
	for _, item := range []string{
		`{"get":{"parameters":[{"name":"a","in":"query","schema":{"type":"string","maxLength":9007199254740993}}],"responses":{}}}`,
		`{"get":{"summary":"first","responses":{}},"Get":{"summary":"second"}}`,
		`{"get":{"parameters":[{"name":"a","in":"query","schema":{"type":"string","minLength":2.0}}],"responses":{}}}`,
	} {
		in := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":` + item + `}}`)
		want := &openapi3.T{}
		errWant := json.Unmarshal(in, want)
		got := &openapi3.T{}
		errGot := decodeV3JSON(in, got)
		sameDecode(t, item, got, errGot, want, errWant)
	}
}
