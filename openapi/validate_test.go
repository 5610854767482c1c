package openapi

import (
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

func TestValidator(t *testing.T) {
	tests := []struct {
		name, schema, value string
		wantErr             string // substring; "" means valid
	}{
		{name: "type ok", schema: `{"type":"string"}`, value: `"a"`},
		{name: "type mismatch", schema: `{"type":"array","items":{}}`, value: `"1,2"`, wantErr: "has type string, want array"},
		{name: "integer with zero fraction", schema: `{"type":"integer"}`, value: `30.0`},
		{name: "integer exponent", schema: `{"type":"integer"}`, value: `1e2`},
		{name: "integer fraction", schema: `{"type":"integer"}`, value: `1.5`, wantErr: "want integer"},
		{name: "number accepts integer", schema: `{"type":"number"}`, value: `3`},
		{name: "enum", schema: `{"type":"string","enum":["a","b"]}`, value: `"c"`, wantErr: "allowed values"},
		{name: "enum number by value", schema: `{"enum":[1,2]}`, value: `2.0`},
		{name: "minimum", schema: `{"type":"integer","minimum":1}`, value: `0`, wantErr: "0 must be >= 1"},
		{name: "exclusive maximum", schema: `{"exclusiveMaximum":5}`, value: `5`, wantErr: "must be < 5"},
		{name: "maxLength counts runes", schema: `{"type":"string","maxLength":2}`, value: `"éé"`},
		{name: "maxLength", schema: `{"type":"string","maxLength":2}`, value: `"abc"`, wantErr: "above maxLength 2"},
		{name: "pattern", schema: `{"type":"string","pattern":"^[a-z]+$"}`, value: `"A"`, wantErr: "does not match pattern"},
		{name: "ECMA-only pattern (lookahead) is checked", schema: `{"type":"string","pattern":"^(?!x)"}`, value: `"x"`, wantErr: `does not match pattern "^(?!x)"`},
		{name: "ECMA-only pattern (lookahead) matches", schema: `{"type":"string","pattern":"^(?!x)"}`, value: `"y"`},
		{name: "ECMA-only backreference", schema: `{"type":"string","pattern":"^(a)\\1$"}`, value: `"ab"`, wantErr: "does not match pattern"},
		{name: "pattern is not anchored", schema: `{"type":"string","pattern":"[0-9]"}`, value: `"ab1"`},
		{name: "items path", schema: `{"type":"array","items":{"type":"integer"}}`, value: `[1,"2"]`, wantErr: "[1]: has type string"},
		{name: "nested required", schema: `{"type":"object","properties":{"a":{"type":"object","properties":{},"required":["b"]}}}`,
			value: `{"a":{}}`, wantErr: `a: missing required property "b"`},
		{name: "additionalProperties false", schema: `{"type":"object","properties":{},"additionalProperties":false}`,
			value: `{"x":1}`, wantErr: `property "x" is not allowed`},
		{name: "additionalProperties schema", schema: `{"type":"object","additionalProperties":{"type":"string"}}`,
			value: `{"x":1}`, wantErr: "x: has type integer, want string"},
		{name: "nullable anyOf null", schema: `{"anyOf":[{"type":"string"},{"type":"null"}]}`, value: `null`},
		{name: "nullable anyOf wrong", schema: `{"anyOf":[{"type":"string"},{"type":"null"}]}`, value: `1`, wantErr: "none of the allowed alternatives"},
		{name: "uniqueItems", schema: `{"type":"array","items":{},"uniqueItems":true}`, value: `[1,1.0]`, wantErr: "uniqueItems"},
		{name: "false schema", schema: `{"not":{}}`, value: `1`, wantErr: "no value"},
		{name: "defs ref recursion", schema: `{"$ref":"#/$defs/Node"}`, value: `{"next":{"next":{"v":"x"}}}`, wantErr: `next.next.v: has type string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := `{"type":"object","$defs":{"Node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}}}},"properties":{"x":` + tt.schema + `}}`
			a := compileArgSchemas([]byte(input))["x"]
			if a == nil || a.err != nil {
				t.Fatalf("compiling %s: %v", tt.schema, a)
			}
			v, err := jsonvalue.Parse([]byte(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			err = a.validate(v)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate(%s, %s) = %v, want nil", tt.schema, tt.value, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate(%s, %s) = %v, want error containing %q", tt.schema, tt.value, err, tt.wantErr)
			}
		})
	}
}

func TestObjectRoot(t *testing.T) {
	for in, want := range map[string]bool{
		`{"type":"object","properties":{"anyOf":{"type":"string"}}}`:   true,
		`{"properties":{"a":{"type":"x"}},"type":"object"}`:            true,
		`{"type":"object","anyOf":[{"type":"object"}]}`:                false,
		`{"type":"array","items":{"type":"object"}}`:                   false,
		`{"type":"object","description":"a \"}\" b","required":["x"]}`: true,
		`{"type":"objects"}`:                              false,
		`{"minProperties":1,"type":"object"}`:             true,
		`{"type":"object","x-n":[1,{"a":[]}],"anyOf":[]}`: false,
		`[]`: false,
		``:   false,
	} {
		if got := objectRoot([]byte(in)); got != want {
			t.Errorf("objectRoot(%s) = %v, want %v", in, got, want)
		}
	}
}

// TestValidatorMessageDeterministic: a value with several problems always
// gets the same message, the shallowest problem first, then the first by
// location, then by keyword.
func TestValidatorMessageDeterministic(t *testing.T) {
	tests := []struct{ schema, value, want string }{
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"object","properties":{"d":{"type":"integer"}}}}}`,
			`{"c":{"d":"x"},"b":1,"a":"x"}`, "a: has type string, want integer"},
		{`{"type":"object","required":["z"],"properties":{"a":{"type":"integer"}}}`, `{"a":"x"}`, `missing required property "z"`},
		{`{"type":"array","items":{"type":"integer","minimum":5}}`, `[7,"x",10,1,2,3,4,5,6,7,8,9,10,11]`, `[1]: has type string, want integer`},
		{`{"type":"string","minLength":5,"pattern":"^[0-9]+$"}`, `"ab"`, "length 2 is below minLength 5"},
		{`{"type":"object","additionalProperties":false,"properties":{}}`, `{"q":1,"b":2,"m":3}`, `property "b" is not allowed`},
	}
	for _, tt := range tests {
		a := compileArgSchemas([]byte(`{"type":"object","properties":{"x":` + tt.schema + `}}`))["x"]
		v, err := jsonvalue.Parse([]byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if err := a.validate(v); err == nil || err.Error() != tt.want {
				t.Fatalf("validate(%s, %s) = %v, want %q", tt.schema, tt.value, err, tt.want)
			}
		}
	}
}
