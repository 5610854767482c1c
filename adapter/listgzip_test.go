package adapter

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCRC32Combine: the combined CRC of every split of random data, and of
// empty parts, is crc32.ChecksumIEEE of the whole.
func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	splits := []int{0, 1, 2, 7, 8, 255, 256, 65535, 65536, 65537, 299_999, 300_000}
	for range 20 {
		splits = append(splits, r.IntN(len(data)+1))
	}
	for _, at := range splits {
		for _, end := range []int{at, min(at+1, len(data)), len(data)} {
			a, b := data[:at], data[at:end]
			got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), x8nModP(uint64(len(b))))
			if want := crc32.ChecksumIEEE(data[:end]); got != want {
				t.Errorf("split %d of %d bytes: combined %08x, want %08x", at, end, got, want)
			}
		}
	}
	// A length past 4 GiB: the CRC of 2^32+3 zero bytes after "abc" is the
	// CRC of "abc" shifted as far, combined with the zeros' own CRC.
	// Checked against the slow way in steps: x^(8·(2^32+3)) = x^(8·2^32)·x^24.
	n := uint64(1)<<32 + 3
	if got, want := x8nModP(n), multModP(x8nModP(1<<32), x8nModP(3)); got != want {
		t.Errorf("x8nModP(2^32+3) = %08x, want %08x", got, want)
	}
}

// TestGzipListMember: for heads of every size class, including ones that
// need several stored blocks, the member decodes (compress/gzip checks the
// CRC-32 and the size) to exactly head + result + "}", and is as long as
// the Content-Length memberSize gives.
func TestGzipListMember(t *testing.T) {
	list := &encodedList{json: []byte(`{"tools":[` + strings.Repeat(`{"name":"a_tool","inputSchema":{"type":"object"}},`, 2000) + `{"name":"z"}]}`)}
	g := list.gzip()
	if len(g.deflated)*8 > len(list.json) {
		t.Errorf("the list compressed to %d of %d bytes", len(g.deflated), len(list.json))
	}
	if list.gzip() != g {
		t.Error("a second gzip() compressed again")
	}
	for _, n := range []int{1, 30, 0xfffe, 0xffff, 0x10000, 0x1fffe, 0x1ffff, 0x20000, 200_000} {
		head := bytes.Repeat([]byte(`{"jsonrpc":"2.0","id":"é",`), n/26+1)[:n] // n bytes, a rune cut or not
		var out bytes.Buffer
		if err := g.writeGzip(&out, head); err != nil {
			t.Fatal(err)
		}
		if out.Len() != g.memberSize(n) {
			t.Errorf("head of %d bytes: wrote %d bytes, memberSize says %d", n, out.Len(), g.memberSize(n))
		}
		zr, err := gzip.NewReader(&out)
		if err != nil {
			t.Fatalf("head of %d bytes: %v", n, err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("head of %d bytes: decoding: %v", n, err)
		}
		want := append(append(append([]byte{}, head...), list.json...), '}')
		if !bytes.Equal(got, want) {
			t.Errorf("head of %d bytes: decoded %d bytes, want %d", n, len(got), len(want))
		}
		if out.Len() != 0 {
			t.Errorf("head of %d bytes: %d bytes after the member", n, out.Len())
		}
	}
}

// TestAcceptsGzip: Accept-Encoding as clients send it (Go's transport,
// undici's fetch, curl --compressed, httpx, browsers) and the q-values and
// wildcards of RFC 9110 §12.5.3.
func TestAcceptsGzip(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},                     // Go's http.Transport
		{[]string{"gzip, deflate"}, true},            // undici's fetch, httpx
		{[]string{"gzip, deflate, br, zstd"}, true},  // browsers
		{[]string{"deflate, gzip"}, true},            // curl --compressed
		{[]string{"br"}, false},                      // not a coding restmcp sends
		{[]string{"identity"}, false},                //
		{[]string{"GZip"}, true},                     // case-insensitive
		{[]string{"x-gzip"}, true},                   // RFC 9110 §8.4.1.3
		{[]string{"gzip;q=0"}, false},                // refused
		{[]string{"gzip; q=0.000"}, false},           //
		{[]string{"gzip;q=0.001"}, true},             //
		{[]string{"gzip;Q=1.000"}, true},             //
		{[]string{"gzip;q=1."}, true},                //
		{[]string{"*"}, true},                        // any coding
		{[]string{"*;q=0"}, false},                   //
		{[]string{"*, gzip;q=0"}, false},             // named beats the wildcard
		{[]string{"gzip;q=0", "*"}, false},           // over two lines
		{[]string{"br", "gzip"}, true},               //
		{[]string{"gzip;q=2"}, false},                // not a qvalue: left out
		{[]string{"gzip;q=0.5x"}, false},             //
		{[]string{"gzip;q=1.5"}, false},              //
		{[]string{"gzip;q=0.1234"}, false},           //
		{[]string{"gzip;q=0.5x, *"}, true},           // the bad member alone left out
		{[]string{"gzip;level=9"}, true},             // other parameters ignored
		{[]string{" , ,gzip , "}, true},              // empty members
		{[]string{"gzipx"}, false},                   //
		{[]string{"identity;q=1, gzip;q=0.2"}, true}, // a weight above 0 is enough
		{[]string{"identity, *;q=0"}, false},         //
		{[]string{"gzip;q=0, gzip;q=0.5"}, true},     // repeated: the highest
		{[]string{strings.Repeat("br,", 10000) + "gzip"}, true},
	} {
		if got := acceptsGzip(tt.values); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

// BenchmarkGzipListWrite is the per-answer work of a gzip tools/list of
// GitHub's size (683 KB, compressed once): the envelope's stored block,
// its CRC-32 and the combination, and the writes.
func BenchmarkGzipListWrite(b *testing.B) {
	list := &encodedList{json: []byte(`{"tools":[` + strings.Repeat(`{"name":"a_tool","description":"Lists the things of a repository.","inputSchema":{"type":"object"}},`, 7000) + `{"name":"z"}]}`)}
	g := list.gzip()
	head := []byte(`{"jsonrpc":"2.0","id":12345,"result":`)
	b.ReportAllocs()
	for b.Loop() {
		_ = g.writeGzip(io.Discard, head)
	}
}
