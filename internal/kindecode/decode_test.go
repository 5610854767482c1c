package kindecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// TestDecodeV3JSONCorpus checks that decodeV3JSON gives the same document
// as json.Unmarshal for every OAS 3 JSON document of the corpus.
func TestDecodeV3JSONCorpus(t *testing.T) {
	corpustest.Require(t)
	n := 0
	for folder, entry := range corpustest.Entries(t) {
		data, err := os.ReadFile(filepath.Join(corpustest.Dir(), folder, entry))
		if err != nil || !jsonvalue.LooksLikeObject(data) || IsSwagger2(data) {
			continue
		}
		n++
		t.Run(folder, func(t *testing.T) {
			want := &openapi3.T{}
			errWant := json.Unmarshal(data, want)
			got := &openapi3.T{}
			errGot := decodeV3JSON(data, got)
			if (errWant == nil) != (errGot == nil) {
				t.Fatalf("error = %v, json.Unmarshal: %v", errGot, errWant)
			}
			if errWant == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeV3JSON differs from json.Unmarshal")
			}
		})
	}
	if n == 0 {
		t.Fatal("no OAS 3 JSON document in the corpus")
	}
}

func TestDecodeV3JSON(t *testing.T) {
	for _, in := range []string{
		`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}},"x-p":{"n":1}},"components":{"schemas":{"A":{"type":"string"}}},"x-top":[1]}`,
		`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`,
		`{"openapi":"3.0.3","Paths":{"/a":{}}}`,
		`{"openapi":"3.0.3","paths":{"/a":{"get":{"responses":{"200":{"description":1}}}}}}`,
		`{"openapi":"3.0.3","paths":null,"components":null}`,
		` { "paths" : { "/a" : { } } , "openapi" : "3.1.0" } `,
		`{"openapi":"3.0.3","paths":{},"components":{"x-c":true,"schemas":{"A":{"type":"string"},"B":null,"A":{"type":"integer"}},"parameters":{"p":{"name":"p","in":"query"}}}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"schemas":{}}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"schemas":null}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"x-c":1}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"schemas":{"A":{"type":"string"}},"schemas":{"B":{"type":"string"}}}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"Schemas":{"A":{"type":"string"}}}}`,
		`{"openapi":"3.0.3","paths":{},"components":{"schemas":{"A":{"type":1}}}}`,
	} {
		want := &openapi3.T{}
		errWant := json.Unmarshal([]byte(in), want)
		got := &openapi3.T{}
		errGot := decodeV3JSON([]byte(in), got)
		if (errWant == nil) != (errGot == nil) || errWant != nil && errWant.Error() != errGot.Error() {
			t.Fatalf("%s: error = %v, json.Unmarshal: %v", in, errGot, errWant)
		}
		if errWant == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodeV3JSON = %+v, json.Unmarshal = %+v", in, got, want)
		}
	}
}

// TestDecodeV2Corpus checks that decodeV2 gives the same document as
// openapi2.UnmarshalFromData for every Swagger 2.0 document of the corpus.
func TestDecodeV2Corpus(t *testing.T) {
	corpustest.Require(t)
	n := 0
	for folder, entry := range corpustest.Entries(t) {
		data, err := os.ReadFile(filepath.Join(corpustest.Dir(), folder, entry))
		if err != nil || !IsSwagger2(data) {
			continue
		}
		n++
		t.Run(folder, func(t *testing.T) {
			var want, got openapi2.T
			errWant := openapi2.UnmarshalFromData(data, &want)
			errGot := decodeV2(data, &got)
			if (errWant == nil) != (errGot == nil) {
				t.Fatalf("error = %v, openapi2.UnmarshalFromData: %v", errGot, errWant)
			}
			if errWant == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeV2 differs from openapi2.UnmarshalFromData")
			}
		})
	}
	if n == 0 {
		t.Fatal("no Swagger 2.0 document in the corpus")
	}
}

func TestSplitOut(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		names    []string
		wantRest string
		want     []string // "" stands for an absent member
		wantOK   bool
	}{
		{name: "both taken", raw: `{"a":1,"paths":{"x":2},"b":[3],"components":null}`, names: []string{"paths", "components"},
			wantRest: `{"a":1,"b":[3]}`, want: []string{`{"x":2}`, `null`}, wantOK: true},
		{name: "absent", raw: `{"a":1}`, names: []string{"paths"}, wantRest: `{"a":1}`, want: []string{""}, wantOK: true},
		{name: "case variant", raw: `{"Paths":{}}`, names: []string{"paths"}},
		{name: "duplicate", raw: `{"paths":{},"paths":{}}`, names: []string{"paths"}},
		{name: "not an object", raw: `[1]`, names: []string{"paths"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, taken, ok := splitOut([]byte(tt.raw), tt.names...)
			if ok != tt.wantOK {
				t.Fatalf("splitOut(%s) ok = %v, want %v", tt.raw, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if string(rest) != tt.wantRest {
				t.Errorf("rest = %s, want %s", rest, tt.wantRest)
			}
			got := make([]string, len(taken))
			for i, b := range taken {
				got[i] = string(b)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("taken (-want +got):\n%s", diff)
			}
		})
	}
}
