package yamltree

import "testing"

// TestSurrogateEscapes: a JSON document's surrogate pairs read as the
// characters they stand for, a lone surrogate as U+FFFD (as encoding/json
// reads it), an escaped backslash before "ud83d" as text; YAML is left as
// it is.
func TestSurrogateEscapes(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":"\ud83d\udc4d ok"}`, `{"a":"👍 ok"}`},
		{`{"a":"\uD83D\uDE00\ud83d\udc4d"}`, `{"a":"😀👍"}`},
		{`{"a":"x\ud83d y"}`, `{"a":"x` + "\uFFFD" + ` y"}`},
		{`{"a":"\udc4d\ud83d"}`, `{"a":"` + "\uFFFD\uFFFD" + `"}`},
		{`{"a":"\\ud83d\\udc4d"}`, `{"a":"\\ud83d\\udc4d"}`},
		{`{"a":"\u00e9\"\ud83d\udc4d"}`, `{"a":"é\"👍"}`},
		{`[{"\ud83d\udc4d":1}]`, `[{"👍":1}]`},
		{"a: 'x \\ud83d'\n", `{"a":"x \\ud83d"}`},
	} {
		n, err := Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%s): %v", tt.in, err)
			continue
		}
		if got := string(EncodeJSON(n)); got != tt.want {
			t.Errorf("Parse(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
