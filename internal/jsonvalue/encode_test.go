package jsonvalue

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// tricky are strings encoding/json escapes in each of its ways.
var tricky = []string{
	"", "plain", `quote " and \ backslash`, "<script>&</script>", "tab\tnl\ncr\rbs\bff\f",
	"\x00\x01\x1f\x7f", "bad \xff utf-8 \xc3", "line\u2028para\u2029", "é ü 日本 🎉", "\xe2\x80", "\xe2\x80\xa8",
}

// TestAppendMatchesMarshal: Append gives json.Marshal's bytes for every
// type Parse produces, nested, and for the types it hands to Marshal.
func TestAppendMatchesMarshal(t *testing.T) {
	values := []any{nil, true, false, json.Number(""), json.Number("0"), json.Number("-12.5e+3"), 1.5, 42, []string{"x"},
		map[string]any{}, []any{}, map[string]any(nil), []any(nil), json.RawMessage(nil),
		json.RawMessage(` { "b" : [1, "<&>"] , "a":"\u2028 ` + "\u2028" + `" } `)}
	for _, s := range tricky {
		values = append(values, s, map[string]any{s: s, "k": []any{s, json.Number("1")}})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.IntN(7); {
		case depth > 3 || n == 0:
			return tricky[rng.IntN(len(tricky))]
		case n == 1:
			return json.Number("3.25")
		case n == 2:
			return rng.IntN(2) == 0
		case n == 3:
			return nil
		case n == 4:
			a := make([]any, rng.IntN(4))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := map[string]any{}
			for range rng.IntN(20) {
				m[tricky[rng.IntN(len(tricky))]+string(rune('a'+rng.IntN(26)))] = gen(depth + 1)
			}
			return m
		}
	}
	for range 500 {
		values = append(values, gen(0))
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Append([]byte("prefix:"), v)
		if err != nil || string(got) != "prefix:"+string(want) {
			t.Errorf("Append(%#v) = %s, %v\nwant prefix:%s", v, got, err, want)
		}
	}
	for _, bad := range []any{json.Number("01"), json.Number("1."), json.Number("--1"), json.Number("1e"), json.Number("-"), json.RawMessage(`{"a":`)} {
		_, wantErr := json.Marshal(bad)
		got, err := Append([]byte("p"), bad)
		if err == nil || wantErr == nil || string(got) != "p" {
			t.Errorf("Append(%#v) = %q, %v; Marshal's error %v", bad, got, err, wantErr)
		}
	}
}

// TestAppendStringNoHTML: without HTML escaping, as an Encoder
// with SetEscapeHTML(false) writes.
func TestAppendStringNoHTML(t *testing.T) {
	for _, s := range tricky {
		want, _ := json.Marshal(s)
		got := AppendString(nil, s, false)
		// Only <, > and & differ from Marshal's escaping.
		if s == "<script>&</script>" {
			if string(got) != `"<script>&</script>"` {
				t.Errorf("AppendString(%q, false) = %s", s, got)
			}
			continue
		}
		if string(got) != string(want) {
			t.Errorf("AppendString(%q, false) = %s, want %s", s, got, want)
		}
	}
}

// FuzzAppendString: AppendString gives json.Marshal's bytes for any
// string, written after any prefix into a buffer with any spare room (the
// escaper grows it only when it runs short).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>\n\t\r\b\f\x00\x1f\x7f", "é\u2028\u2029\U0001F600", "\xff\xe2\x80", strings.Repeat("\"", 40)} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, room uint8) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 3, 3+int(room))
		copy(dst, "ab:")
		got := AppendString(dst, s, true)
		if string(got[:3]) != "ab:" || string(got[3:]) != string(want) {
			t.Fatalf("AppendString(%q) = %q, want %q", s, got[3:], want)
		}
		// Piece by piece, cut where runes start, the same bytes.
		var pieces []byte
		for rest := s; rest != ""; {
			n := min(len(rest), 1+int(room)%7)
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++
			}
			pieces = AppendStringContent(pieces, rest[:n], true)
			rest = rest[n:]
		}
		if `"`+string(pieces)+`"` != string(want) {
			t.Fatalf("AppendStringContent in pieces of %q = %q, want %q", s, pieces, want)
		}
	})
}

// TestAppendEscapedHTMLRoom: text escaped into a buffer with room for what
// it escapes to and 12 bytes more stays in that buffer (an answer's buffer
// is sized so), and text of any length and any density of escapes, into a
// buffer of any spare room, gives json.Marshal's bytes (the buffer grown
// as often as it runs short of a worst-case piece).
func TestAppendEscapedHTMLRoom(t *testing.T) {
	// JSON as a string: a quote every few bytes.
	text := strings.Repeat(`{"id":"p1","name":"Rex","notes":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},`, 40)
	want, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3, 3+len(want)-2+12)
	copy(buf, "ab:")
	got := AppendEscapedHTML(buf, text)
	if &got[0] != &buf[0] {
		t.Errorf("%d bytes of text, %d escaped, into room for %d: moved to a buffer of %d", len(text), len(want)-2, cap(buf)-3, cap(got))
	}
	if string(got) != "ab:"+string(want[1:len(want)-1]) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, unit := range []string{"a", "<", "\"", "é", "\u2028", "\x01", "ab\"<&é\xff"} {
		for _, n := range []int{1, 255, 256, 257, 1000, 4095, 4096, 4097, 9000, 30000} {
			s := strings.Repeat(unit, n/len(unit)+1)[:n]
			want, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, room := range []int{0, 5, 6, 7, 100, n, n + n/8, 6*n + 6} {
				got := AppendEscapedHTML(make([]byte, 1, 1+room), s)
				if string(got[1:]) != string(want[1:len(want)-1]) {
					t.Fatalf("%d bytes of %q with room %d: %d bytes out, want %d", n, unit, room, len(got)-1, len(want)-2)
				}
			}
		}
	}
}

// TestAppendStringContentWithin: written in pieces into a buffer that
// never grows and is emptied in between, a string gives the bytes
// AppendStringContent gives for the whole (HTML escaping on), whatever
// the buffer's size; every piece ends where a rune ends.
func TestAppendStringContentWithin(t *testing.T) {
	s := strings.Repeat("a\"<é\u2028日本\xff\x01\\z", 3000) + "\xe2\x80"
	want := string(AppendStringContent(nil, s, true))
	for _, size := range []int{12, 13, 17, 64, 1000, 24582, 100000} {
		var got []byte
		buf := make([]byte, 0, size)
		rest := s
		for len(rest) > 0 {
			out, n := AppendStringContentWithin(buf[:0], rest)
			if cap(out) != size || n == 0 {
				t.Fatalf("size %d: grew to %d or wrote nothing (%d)", size, cap(out), n)
			}
			if n < len(rest) && !utf8.RuneStart(rest[n]) && utf8.FullRuneInString(rest[n-1:]) {
				t.Fatalf("size %d: a piece ends inside a rune at %d", size, n)
			}
			got = append(got, out...)
			rest = rest[n:]
		}
		if string(got) != want {
			t.Fatalf("size %d: pieces differ from the whole", size)
		}
	}
	if out, n := AppendStringContentWithin(make([]byte, 0, 11), "x"); n != 0 || len(out) != 0 {
		t.Fatalf("room for less than 6 bytes a byte and 6: wrote %q (%d)", out, n)
	}
}

// TestAppendStringEveryByteEveryLane: each byte value, alone or after
// another special byte, at each position of the 8-byte words the escaper
// reads at once, gives json.Marshal's bytes.
func TestAppendStringEveryByteEveryLane(t *testing.T) {
	for c := range 256 {
		for _, before := range []byte{'a', '"', 0x1f, 0x7f, 0x80, '&'} {
			for pos := range 17 {
				b := []byte(strings.Repeat("a", 26))
				b[pos], b[pos+1] = before, byte(c)
				s := string(b)
				want, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				if got := AppendString(nil, s, true); string(got) != string(want) {
					t.Fatalf("byte %#x after %#x at %d: %q, want %q", c, before, pos, got, want)
				}
			}
		}
	}
}
