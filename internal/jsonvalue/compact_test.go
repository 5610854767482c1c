package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/restmcp/restmcp/internal/benchdata"
)

// TestAppendCompact: white space goes, and every token keeps its bytes
// (escapes, HTML characters, U+2028, members' order and duplicates,
// numbers' literals), except invalid UTF-8, written as \ufffd per byte.
func TestAppendCompact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{" {\n \"b\" : 1 ,\t\"a\":[ 1 , 2.50 , -3E+2 ] } \r\n", `{"b":1,"a":[1,2.50,-3E+2]}`},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{`{}`, `{}`},
		{`[ ]`, `[]`},
		{`{"x":{ },"y":[ {} , [ ] ]}`, `{"x":{},"y":[{},[]]}`},
		{`"\u0041\/\"\\\b\f\n\r\t\u001f\u007f"`, `"\u0041\/\"\\\b\f\n\r\t\u001f\u007f"`},
		{`"<a href='x'>&amp;</a>" `, `"<a href='x'>&amp;</a>"`},
		{`"\u003c\u2028` + "\u2029" + `é\u00e9"`, `"\u003c\u2028` + "\u2029" + `é\u00e9"`},
		{"[ \"a\xffb\xe2\x80\" ,\"\xf0\x9f\x98\" ]", `["a\ufffdb\ufffd\ufffd","\ufffd\ufffd\ufffd"]`},
		{`"\ud83d\ude00 \ud83d \ude00x \ud83d\u0041"`, `"\ud83d\ude00 \ud83d \ude00x \ud83d\u0041"`},
		{`[true,false,null,0,-0,0.5e-7,123456789012345678901234567890]`, `[true,false,null,0,-0,0.5e-7,123456789012345678901234567890]`},
		{` 12 `, `12`},
	} {
		got, err := AppendCompact([]byte("prefix:"), []byte(c.in))
		if err != nil {
			t.Fatalf("AppendCompact(%q): %v", c.in, err)
		}
		if string(got) != "prefix:"+c.want {
			t.Fatalf("AppendCompact(%q)\n got %s\nwant prefix:%s", c.in, got, c.want)
		}
	}
}

// TestCompacted: compact text comes back as the part of src that holds
// the value, without a copy (no allocation at all); anything else is
// written to a new string, sized from src (one allocation; more only
// where invalid UTF-8, each byte written as 6, outgrows it).
func TestCompacted(t *testing.T) {
	for _, c := range []struct {
		in, want string
		allocs   float64
	}{
		{`{"a":[1,"x\"<"],"b":null}`, `{"a":[1,"x\"<"],"b":null}`, 0},
		{"\n\t {\"a\":1} \r\n", `{"a":1}`, 0},
		{`12`, `12`, 0},
		{`{"a": 1}`, `{"a":1}`, 1},
		{"[\"\xff\"]", `["\ufffd"]`, 2},
	} {
		src := strings.Clone(c.in)
		got, err := Compacted(src, nil)
		if err != nil || string(got) != c.want {
			t.Fatalf("Compacted(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if n := testing.AllocsPerRun(10, func() { _, _ = Compacted(src, nil) }); n != c.allocs {
			t.Fatalf("Compacted(%q): %v allocations, want %v", c.in, n, c.allocs)
		}
	}
	if got, err := Compacted(`{"a":1,}`, nil); err == nil {
		t.Fatalf("Compacted of invalid text = %q", got)
	}
}

// recorder is a Walker that writes down what it is told, and enters
// every container but the members keyed "skip".
type recorder struct{ events []string }

func (r *recorder) Value(key string, kind byte, num string) bool {
	r.events = append(r.events, fmt.Sprintf("%s%c%s", key, kind, num))
	return key != `"skip"`
}

func (r *recorder) Close() { r.events = append(r.events, "close") }

// counter is a Walker that enters everything and counts.
type counter struct{ values, closes, open int }

func (c *counter) Value(_ string, kind byte, _ string) bool {
	c.values++
	if kind == '{' || kind == '[' {
		c.open++
	}
	return true
}

func (c *counter) Close() { c.closes++; c.open-- }

// countValues counts the values in JSON text, and the objects and arrays
// among them, by encoding/json's tokens (repeated members included).
func countValues(t *testing.T, src []byte) (values, containers int) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()     // any literal, however large
	var inObject []bool // per open container
	key := false        // the next token in an object is a key
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return values, containers
		}
		if err != nil {
			t.Fatalf("countValues(%q): %v", src, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			inObject = inObject[:len(inObject)-1]
			key = len(inObject) > 0 && inObject[len(inObject)-1]
			continue
		}
		if key {
			key = false
			continue
		}
		values++
		if d, ok := tok.(json.Delim); ok {
			containers++
			inObject = append(inObject, d == '{')
			key = d == '{'
			continue
		}
		key = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

// TestCompactedWalker: the walker is told of each value in order, with
// its member key as the text has it and a number's literal, of the end of
// each container it entered (empty ones too), and of nothing inside one
// it did not enter.
func TestCompactedWalker(t *testing.T) {
	src := ` { "a" : [ 1 , -2.5e3, {} ], "b\u0041":"x", "skip": {"c": [ 1, {"d": 2} ], "e": {}}, "f": [ ], "g": true, "h": null, "i":{"j":false} } `
	r := &recorder{}
	got, err := Compacted(src, r)
	if err != nil || string(got) != `{"a":[1,-2.5e3,{}],"b\u0041":"x","skip":{"c":[1,{"d":2}],"e":{}},"f":[],"g":true,"h":null,"i":{"j":false}}` {
		t.Fatalf("Compacted = %s, %v", got, err)
	}
	want := []string{"{", `"a"[`, "11", "--2.5e3", "{", "close", "close", `"b\u0041""`, `"skip"{`, `"f"[`, "close", `"g"t`, `"h"n`, `"i"{`, `"j"f`, "close", "close"}
	if !slices.Equal(r.events, want) {
		t.Fatalf("walker told\n%q\nwant\n%q", r.events, want)
	}
	r = &recorder{}
	if _, err := Compacted(`7`, r); err != nil || !slices.Equal(r.events, []string{"77"}) {
		t.Fatalf("a number at the top: %q, %v", r.events, err)
	}
}

// TestAppendCompactRefuses: what json.Valid refuses is refused, with dst
// unchanged; nesting is bounded as encoding/json bounds it.
func TestAppendCompactRefuses(t *testing.T) {
	for _, in := range []string{``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{1:2}`,
		`nul`, `tru`, `falsey`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `0x10`, `"a`, "\"a\x01\"", `"\x"`, `"\u12"`,
		`"\u12g4"`, `{"a":1}{}`, `[1] 2`, `{"a" 1}`, "\ufeff{}", `NaN`, `[1 2]`, `{"a":1 "b":2}`} {
		dst := []byte("keep")
		got, err := AppendCompact(dst, []byte(in))
		if !errors.Is(err, ErrNotJSON) || string(got) != "keep" {
			t.Fatalf("AppendCompact(%q) = %q, %v; want keep, ErrNotJSON", in, got, err)
		}
		if json.Valid([]byte(in)) {
			t.Fatalf("json.Valid accepts %q, which the test calls invalid", in)
		}
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if got, err := AppendCompact(nil, []byte(deep)); err != nil || string(got) != deep {
		t.Fatalf("10000 levels: %v", err)
	}
	deeper := "[" + deep + "]"
	if _, err := AppendCompact(nil, []byte(deeper)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("10001 levels: err = %v, want ErrTooDeep", err)
	}
	if json.Valid([]byte(deeper)) {
		t.Fatal("json.Valid accepts 10001 levels; ErrTooDeep no longer matches it")
	}
}

// TestCompactEncodesAsItself: Append writes a Compact as it is, inside a
// larger value too; json.Marshal too, but for the HTML characters it
// escapes in what any MarshalJSON returns.
func TestCompactEncodesAsItself(t *testing.T) {
	c, err := AppendCompact(nil, []byte(` {"b": "<x>", "a": [1, 2]} `))
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"sc": Compact(c), "n": Compact("")}
	m, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	const want, wantMarshal = `{"n":null,"sc":{"b":"<x>","a":[1,2]}}`, `{"n":null,"sc":{"b":"\u003cx\u003e","a":[1,2]}}`
	if string(m) != wantMarshal || string(a) != want {
		t.Fatalf("json.Marshal %s, Append %s; want %s and %s", m, a, wantMarshal, want)
	}
}

// TestCompactMatchesTreeOnCorpus: on every JSON document of the corpus
// (real OpenAPI documents, megabytes of escapes, Unicode and nesting),
// AppendCompact gives the same value as Parse and Append, and for the
// documents' sorted-key re-encoding, the same bytes.
func TestCompactMatchesTreeOnCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus")
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		if os.Getenv("RESTMCP_REQUIRE_CORPUS") == "1" {
			t.Fatalf("no JSON documents in %s", dir)
		}
		t.Skipf("no JSON documents in %s", dir)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkCompact(t, src)
		tree, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sorted, err := Append(nil, tree)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendCompact(nil, sorted)
		if err != nil || !bytes.Equal(got, sorted) {
			t.Fatalf("%s: AppendCompact of the sorted encoding differs from it (err %v)", f, err)
		}
	}
}

// checkCompact asserts AppendCompact's contract for src: it accepts
// exactly what json.Valid accepts, and its output is valid UTF-8 JSON
// that Parse reads as Parse reads src, and that it leaves unchanged.
func checkCompact(t *testing.T, src []byte) {
	t.Helper()
	got, err := AppendCompact(nil, src)
	if (err == nil) != json.Valid(src) {
		t.Fatalf("AppendCompact(%q): err %v, json.Valid %v", src, err, json.Valid(src))
	}
	if err != nil {
		return
	}
	if !json.Valid(got) || !utf8.Valid(got) {
		t.Fatalf("AppendCompact(%q) = %q: not valid UTF-8 JSON", src, got)
	}
	want, _ := Parse(src)
	back, err := Parse(got)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Fatalf("AppendCompact(%q) = %q, which parses to %#v, want %#v", src, got, back, want)
	}
	wantEnc, _ := Append(nil, want)
	backEnc, _ := Append(nil, back)
	if !bytes.Equal(wantEnc, backEnc) {
		t.Fatalf("AppendCompact(%q): re-encoded %s, want %s", src, backEnc, wantEnc)
	}
	again, err := AppendCompact(nil, got)
	if err != nil || !bytes.Equal(again, got) {
		t.Fatalf("AppendCompact is not idempotent on %q: %q", got, again)
	}
	if view, err := Compacted(string(got), nil); err != nil || string(view) != string(got) {
		t.Fatalf("Compacted(%q) = %q, %v", got, view, err)
	}
	all := &counter{}
	if c, err := Compacted(string(src), all); err != nil || string(c) != string(got) {
		t.Fatalf("Compacted(%q) = %q, %v; AppendCompact gave %q", src, c, err, got)
	}
	if values, containers := countValues(t, src); all.values != values || all.closes != containers || all.open != 0 {
		t.Fatalf("Compacted(%q): walker told of %d values and %d ends (%d left open); the text has %d values, %d containers",
			src, all.values, all.closes, all.open, values, containers)
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9\n<>"],"b":{"c":null}}`, "\"\xff\xe2\x80\"", `"\ud83d\ude00\ud83d"`,
		` [ true , false ] `, `{"a":1,"a":{"a":[]}}`, `-0.0e-0`, `"\u2028"`, `{"`, `[1,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCompact)
}

// benchBody is about 1 MB of JSON as a large list answer carries it:
// short strings, numbers, nested objects, quotes, a newline, HTML
// characters and non-ASCII text in every item, pretty-printed with two
// spaces as many APIs send it.
func benchBody() []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"total\": 0,\n  \"items\": [")
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    {\n      \"id\": 12345,\n      \"name\": \"item number 12345\",\n      \"note\": \"a \\\"quoted\\\" word\\nand a line <b>é</b>\",\n      \"price\": 12.50,\n      \"tags\": [\"a\", \"b\", \"c\"],\n      \"owner\": {\"login\": \"octocat\", \"site_admin\": false, \"score\": null}\n    }")
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

// BenchmarkAppendCompact: compacting a large answer for structuredContent
// (MB/s of the answer).
func BenchmarkAppendCompact(b *testing.B) {
	src := benchBody()
	dst := make([]byte, 0, len(src)*2)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := AppendCompact(dst[:0], src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompacted: the same answer as an API sends it compact, which
// Compacted checks without copying (MB/s of the answer).
func BenchmarkCompacted(b *testing.B) {
	c, err := AppendCompact(nil, benchBody())
	if err != nil {
		b.Fatal(err)
	}
	src := string(c)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if out, err := Compacted(src, nil); err != nil || len(out) != len(src) {
			b.Fatal(len(out), err)
		}
	}
}

// BenchmarkAppendStringContent: escaping a large answer as the text
// content's JSON string (MB/s of the answer).
func BenchmarkAppendStringContent(b *testing.B) {
	src := string(benchBody())
	dst := make([]byte, 0, len(src)*2)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		AppendStringContent(dst[:0], src, true)
	}
}

// BenchmarkAppendStringContentAnswer: escaping the answer of `restmcp-bench
// --answer-bytes 1048576` (compact JSON, as most APIs send it) as the text
// content's string (MB/s of the answer).
func BenchmarkAppendStringContentAnswer(b *testing.B) {
	src := string(benchdata.Answer(1 << 20))
	dst := make([]byte, 0, len(src)*2)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		AppendStringContent(dst[:0], src, true)
	}
}

// BenchmarkCompactedAnswer: Compacted on the same answer.
func BenchmarkCompactedAnswer(b *testing.B) {
	src := string(benchdata.Answer(1 << 20))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if out, err := Compacted(src, nil); err != nil || len(out) != len(src) {
			b.Fatal(len(out), err)
		}
	}
}
