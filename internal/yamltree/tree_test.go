package yamltree

import (
	"encoding/json"
	"testing"
)

// TestEncodeJSON: the repaired tree is handed to kin-openapi as JSON that
// keeps key order and YAML's scalar types.
func TestEncodeJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"order and nesting", "b: 1\na: [x, {d: null, c: true}]\n", `{"b":1,"a":["x",{"d":null,"c":true}]}`},
		{"numbers kept as written", "i: 10\nf: 2.50\ne: 1e3\nh: 0x1F\nn: -0\n", `{"i":10,"f":2.50,"e":1e3,"h":31,"n":-0}`},
		{"non-JSON floats become strings", "a: .inf\nb: .nan\n", `{"a":".inf","b":".nan"}`},
		{"yaml 1.1 words and dates stay strings", "a: yes\nb: 2020-09-14\nc: '123'\n", `{"a":"yes","b":"2020-09-14","c":"123"}`},
		{"non-string keys", "200: {description: ok}\ntrue: 1\n", `{"200":{"description":"ok"},"true":1}`},
		{"anchors and merge keys", "base: &b {x: 1}\nuse: *b\nmerged: {<<: *b, y: 2}\n", `{"base":{"x":1},"use":{"x":1},"merged":{"x":1,"y":2}}`},
		{"escaping", "s: \"a\\\"b<c>\\n\"\n", `{"s":"a\"b\u003cc\u003e\n"}`},
		{"JSON input", `{"a": [1, 2.0, "3"], "b": {}}`, `{"a":[1,2.0,"3"],"b":{}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got := EncodeJSON(n)
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}
