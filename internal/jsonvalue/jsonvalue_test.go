package jsonvalue

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestParseMatchesEncodingJSON: Parse gives what encoding/json gives with
// UseNumber, and refuses what it refuses.
func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{`{"a":[1,2.50,-3e2,true,false,null,"x\u00e9\n"],"b":{}}`, `[]`, `"\ud83d\ude00"`, "\"\xff\"", ` 12 `} {
		got, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", in, err)
		}
		d := json.NewDecoder(bytes.NewReader([]byte(in)))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%s) = %#v, want %#v", in, got, want)
		}
	}
	for _, in := range []string{`{`, `{"a":}`, `[1,]`, `nul`, ``} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Fatalf("Parse(%q) accepted invalid JSON", in)
		}
	}
}

// TestMembersAndElements: objects and arrays split into raw members, in
// order, with nested values untouched; anything else is refused.
func TestMembersAndElements(t *testing.T) {
	ms, ok := Members([]byte(` {"a": [1, {"b":2}], "c\"d" : "x" } `))
	want := []Member{{Key: "a", Raw: []byte(`[1, {"b":2}]`)}, {Key: `c"d`, Raw: []byte(`"x"`)}}
	if !ok || !reflect.DeepEqual(ms, want) {
		t.Errorf("Members = %q, %v; want %q", ms, ok, want)
	}
	es, ok := Elements([]byte(`[1, "a,b", {"c":[2]}]`))
	if wantE := [][]byte{[]byte(`1`), []byte(`"a,b"`), []byte(`{"c":[2]}`)}; !ok || !reflect.DeepEqual(es, wantE) {
		t.Errorf("Elements = %q, %v; want %q", es, ok, wantE)
	}
	if _, ok := Members([]byte(`[1]`)); ok {
		t.Error("Members of an array: ok")
	}
	if _, ok := Elements([]byte(`{}`)); ok {
		t.Error("Elements of an object: ok")
	}
}

// TestWriteString: as encoding/json without HTML escaping.
func TestWriteString(t *testing.T) {
	for _, s := range []string{"plain", "q\"b\\", "tab\tnl\n\x01", "é<>&", "bad\xffutf8"} {
		var b bytes.Buffer
		WriteString(&b, s)
		var want bytes.Buffer
		e := json.NewEncoder(&want)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		if got, w := b.String(), string(bytes.TrimSpace(want.Bytes())); got != w {
			t.Errorf("WriteString(%q) = %s, want %s", s, got, w)
		}
	}
}

// TestObjectRawDeeperThanToken: the raw object walk gives each key's
// token as written and leaves the parser at its value; DeeperThan counts
// nesting outside strings only; Token decodes as encoding/json does.
func TestObjectRawDeeperThanToken(t *testing.T) {
	src := []byte(` { "a" : 1, "b\u0041":{"c":[1,"]}"]}, "":"x" } `)
	p := Parser{B: src}
	var got []string
	err := p.ObjectRaw(func(key []byte) error {
		start := p.I
		if !p.Skip() {
			return ErrNotJSON
		}
		got = append(got, string(key)+"="+string(src[start:p.I]))
		return nil
	})
	if want := []string{`"a"=1`, `"b\u0041"={"c":[1,"]}"]}`, `""="x"`}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("ObjectRaw: %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{`{1:2}`, `{"a" 1}`, `{"a":1,}`, `[]`} {
		p := Parser{B: []byte(bad)}
		if err := p.ObjectRaw(func([]byte) error { p.Skip(); return nil }); err == nil {
			t.Errorf("ObjectRaw(%s): no error", bad)
		}
	}
	if !DeeperThan([]byte(`[[[1]]]`), 2) || DeeperThan([]byte(`[[[1]]]`), 3) || DeeperThan([]byte(`["[[[[", {"a":"{{{{"}]`), 2) {
		t.Error("DeeperThan counts wrong")
	}
	for tok, want := range map[string]string{`"plain"`: "plain", `"a\"b\\c\u00e9\ud83d\ude00"`: "a\"b\\cé😀", "\"x\xffy\"": "x\uFFFDy", `"\ud800"`: "\uFFFD", `"bad\x"`: ""} {
		var std string
		if err := json.Unmarshal([]byte(tok), &std); err == nil && std != want {
			t.Fatalf("the table disagrees with encoding/json on %s: %q", tok, std)
		}
		if got := Token([]byte(tok)); got != want {
			t.Errorf("Token(%s) = %q, want %q", tok, got, want)
		}
	}
}
