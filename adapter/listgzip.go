package adapter

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A large tools/list (GitHub's REST document: 683 KB for 692 tools) costs
// the server almost nothing to produce, being encoded once per tool table,
// but the kernel's work of sending it is most of the CPU a tools/list costs
// (sending is a copy per byte). To a client that accepts gzip (RFC 9110
// §12.5.3: https://www.rfc-editor.org/rfc/rfc9110#section-12.5.3), as Go's,
// Node's (undici) and Python's (httpx) HTTP clients all do by default, the
// fast path sends it as gzip instead, about a twelfth of the bytes,
// compressed once per list as well: each answer is spliced together from
//
//   - the gzip header (RFC 1952 §2.3: https://www.rfc-editor.org/rfc/rfc1952#section-2.3),
//   - the JSON-RPC envelope up to the result, with the request's id, in
//     DEFLATE stored blocks (RFC 1951 §3.2.4: https://www.rfc-editor.org/rfc/rfc1951#section-3.2.4),
//     which need no compressor,
//   - the result and the envelope's closing brace, compressed when the
//     list was first asked for in gzip, their DEFLATE blocks ending in the
//     final one (they refer to no byte before them, so they may follow any
//     blocks),
//   - the CRC-32 of the whole, combined from the envelope's CRC and the
//     compressed part's, computed once (crc32Combine), and the size.
//
// Lists smaller than gzipListMinBytes are sent as they are: they leave in
// a few packets either way.

// gzipListMinBytes is the encoded size from which a tools/list result is
// sent gzip-compressed to a client that accepts it.
const gzipListMinBytes = 16 << 10

// encodedList is a tools/list result encoded once, as the SDK encodes it,
// with its gzip form made on first use.
type encodedList struct {
	json   []byte
	gzOnce sync.Once
	gz     *gzipRest

	modernOnce sync.Once
	modern     *encodedList // modernList's
}

// modernList is l as the go-sdk answers it on the 2026-07-28 wire
// (SEP-2575), made on first use: "resultType":"complete" and the server's
// identity (impl) in _meta, before the rest of the result, where the SDK's
// encoding puts them (setCompleteResultType, annotateServerInfo).
func (l *encodedList) modernList(impl *mcp.Implementation) *encodedList {
	l.modernOnce.Do(func() {
		info, err := sdkJSON(impl)
		if err != nil {
			info = []byte("null") // unreachable: two strings
		}
		b := make([]byte, 0, len(l.json)+len(info)+96)
		b = append(b, `{"resultType":"complete","_meta":{"`+metaKeyServerInfo+`":`...)
		b = append(b, info...)
		b = append(b, "},"...)
		l.modern = &encodedList{json: append(b, l.json[1:]...)}
	})
	return l.modern
}

// gzipRest is a tools/list result followed by the JSON-RPC envelope's
// closing brace, compressed.
type gzipRest struct {
	deflated []byte // DEFLATE blocks, the last one final
	crc      uint32 // the CRC-32 (IEEE) of the uncompressed bytes
	size     uint32 // their length, modulo 2^32 (RFC 1952's ISIZE)
	shift    uint32 // x^(8·length) modulo the CRC polynomial (crc32Combine)
}

// gzip returns l's result compressed, compressing it on the first call.
func (l *encodedList) gzip() *gzipRest {
	l.gzOnce.Do(func() {
		var b bytes.Buffer
		b.Grow(len(l.json) / 8)
		// The level is paid once per list: GitHub's 683 KB take about 20 ms
		// (82,648 bytes; 88,083 at the default level, in 5 ms).
		zw, err := flate.NewWriter(&b, flate.BestCompression)
		if err != nil {
			return // unreachable: a valid level
		}
		_, _ = zw.Write(l.json) // a bytes.Buffer does not fail
		_, _ = zw.Write([]byte("}"))
		_ = zw.Close()
		crc := crc32.Update(crc32.ChecksumIEEE(l.json), crc32.IEEETable, []byte("}"))
		n := uint64(len(l.json)) + 1
		l.gz = &gzipRest{deflated: b.Bytes(), crc: crc, size: uint32(n), shift: x8nModP(n)}
	})
	return l.gz
}

// writeGzip writes the gzip member of head followed by the bytes g
// compresses: head in stored blocks, then g's blocks, then the trailer,
// the compressed blocks from g's own memory (they are never copied). It
// returns the first write error.
func (g *gzipRest) writeGzip(w io.Writer, head []byte) error {
	// ID1 ID2, CM 8 (deflate), FLG 0, MTIME 0 (none), XFL 0, OS 255 (unknown),
	// as compress/gzip writes a header without a name or time.
	b := make([]byte, 0, g.memberSize(len(head))-len(g.deflated)-8)
	b = append(b, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff)
	for rest := head; len(rest) > 0; {
		n := min(len(rest), 0xffff)
		// BFINAL 0, BTYPE 00 (stored), padded to the byte; LEN and NLEN.
		b = append(b, 0, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		b = append(b, rest[:n]...)
		rest = rest[n:]
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if _, err := w.Write(g.deflated); err != nil {
		return err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc32Combine(crc32.ChecksumIEEE(head), g.crc, g.shift))
	binary.LittleEndian.PutUint32(trailer[4:], uint32(len(head))+g.size)
	_, err := w.Write(trailer[:])
	return err
}

// memberSize is the length writeGzip writes for a head of n bytes.
func (g *gzipRest) memberSize(n int) int {
	return 10 + n + 5*((n+0xfffe)/0xffff) + len(g.deflated) + 8
}

// crcPoly is the reflected CRC-32 (IEEE) polynomial.
const crcPoly = 0xedb88320

// crc32Combine is the CRC-32 of A followed by B, from crcA, crcB and shift,
// x^(8·len(B)) modulo the polynomial (x8nModP): zlib's crc32_combine_op
// (https://github.com/madler/zlib/blob/v1.3.1/crc32.c), in which shifting
// crcA past len(B) zero bytes is one multiplication modulo the polynomial.
func crc32Combine(crcA, crcB, shift uint32) uint32 {
	return multModP(shift, crcA) ^ crcB
}

// multModP is a·b modulo the CRC polynomial, in the reflected bit order
// CRC-32 uses (x^0 the top bit).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ crcPoly
		} else {
			b >>= 1
		}
	}
	return p
}

// x8nModP is x^(8·n) modulo the CRC polynomial: square-and-multiply over
// the bits of n, from x^8 (one byte) upwards.
func x8nModP(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	sq := multModP(uint32(1)<<30, uint32(1)<<30)
	sq = multModP(sq, sq)
	sq = multModP(sq, sq) // x^8
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(sq, p)
		}
		sq = multModP(sq, sq)
	}
	return p
}

// acceptsGzip reports whether an Accept-Encoding field (its lines) allows
// gzip: "gzip" or "x-gzip" with a q-value above 0, or, when neither is
// named, "*" with one (RFC 9110 §12.5.3). A missing field allows only
// identity here: a client that says nothing is sent what it surely reads.
// A member whose q-value does not parse is left out.
func acceptsGzip(values []string) bool {
	gzipQ, anyQ := -1, -1 // thousandths; -1: not named
	eachListMember(values, func(name, params string) {
		q, ok := qValue(params)
		if !ok {
			return
		}
		switch name {
		case "gzip", "x-gzip":
			gzipQ = max(gzipQ, q)
		case "*":
			anyQ = max(anyQ, q)
		}
	})
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// qValue reads the weight of an Accept-Encoding member from its parameters
// (";q=0.5"), in thousandths: 1000 when there is none; false when it is not
// a qvalue (RFC 9110 §12.4.2: "0" to "1" with at most three decimals).
func qValue(params string) (int, bool) {
	q := 1000
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		whole, frac, _ := strings.Cut(v, ".")
		if (whole != "0" && whole != "1") || len(frac) > 3 || strings.Trim(frac, "0123456789") != "" {
			return 0, false
		}
		f := 0
		if frac != "" {
			n, _ := strconv.Atoi(frac + strings.Repeat("0", 3-len(frac)))
			f = n
		}
		if q = f; whole == "1" {
			if f != 0 {
				return 0, false
			}
			q = 1000
		}
	}
	return q, true
}
