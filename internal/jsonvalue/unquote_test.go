package jsonvalue

import (
	"encoding/json"
	"testing"
)

// unquoteCases are JSON strings whose decoding has a rule of its own:
// every escape, surrogate pairs, lone and reversed surrogates, invalid
// UTF-8, and escapes at the end.
var unquoteCases = []string{
	`"plain"`, `"a\"b\\c\/d\be\ff\ng\rh\ti"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`,
	`"\ud83dx"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`, "\"\xff\xfe\"", "\"caf\xc3\"", "\"ok \xe2\x82\xac\"",
	`"\u0000"`, `"end\\"`, `"\uD834\uDD1E"`, "\"\xed\xa0\x80\"", `"\""`,
}

// TestUnquoteMatchesEncodingJSON: Parse decodes every string as
// encoding/json does.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

// FuzzUnquote compares Parse with encoding/json on any JSON string.
func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || len(data) == 0 || data[0] != '"' {
			return
		}
		checkUnquote(t, data)
	})
}

func checkUnquote(t *testing.T, data []byte) {
	t.Helper()
	var want string
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%q: encoding/json: %v", data, err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("%q: Parse: %v", data, err)
	}
	if got != want {
		t.Errorf("%q: Parse gives %q, encoding/json %q", data, got, want)
	}
}
