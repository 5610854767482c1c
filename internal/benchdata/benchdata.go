// Package benchdata makes the large upstream answer that restmcp-bench
// --answer-bytes serves and the adapter's tests and benchmarks call
// tools with.
package benchdata

import "strconv"

// Answer is a JSON object of at least size bytes holding a list of items,
// as a large search answer carries them: numbers, escapes (a quote, a
// newline, HTML characters), non-ASCII text, a nested object and null in
// each item.
func Answer(size int) []byte {
	b := make([]byte, 0, size+256)
	b = append(b, `{"total":0,"items":[`...)
	for i := 0; len(b) < size; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"name":"item number `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","note":"a \"quoted\" word\nand a line <b>é</b>","price":12.50,"tags":["a","b","c"],"owner":{"login":"octocat","site_admin":false,"score":null}}`...)
	}
	return append(b, `]}`...)
}
